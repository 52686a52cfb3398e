"""The poker backend: the rules engine, the table log, the dealer and the wallet services, and
their tools."""
