"""Append-only logs with optimistic concurrency: the event store both services stand on.

One log per key (a table, the wallet), each record an opaque byte string written as one unit.
:class:`~poker.eventstore.api.EventStore` is the contract; :mod:`poker.eventstore.memory` keeps
logs in memory
(unit tests, the engine's property tests) and :mod:`poker.eventstore.jetstream` keeps them in a NATS
JetStream stream. One contract test suite runs against both. :mod:`poker.eventstore.aggregate` is
one aggregate kept in one log (load, append, retry, snapshot), on either store.
"""

from poker.eventstore.api import ConcurrencyConflict, EventStore, EventStoreError, Record

__all__ = ["ConcurrencyConflict", "EventStore", "EventStoreError", "Record"]
