"""The operator's and player's tools: pokerctl, the dev runner, the client library and the bot."""
