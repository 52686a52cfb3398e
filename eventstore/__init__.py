"""Append-only logs with optimistic concurrency: the event store both services stand on.

One log per key (a table, the wallet), each record an opaque byte string written as one unit.
:class:`~eventstore.api.EventStore` is the contract; :mod:`eventstore.memory` keeps logs in memory
(unit tests, the engine's property tests) and :mod:`eventstore.jetstream` keeps them in a NATS
JetStream stream. One contract test suite runs against both. :mod:`eventstore.aggregate` is one
aggregate kept in one log (load, append, retry, snapshot), on either store.
"""

from eventstore.api import ConcurrencyConflict, EventStore, EventStoreError, Record

__all__ = ["ConcurrencyConflict", "EventStore", "EventStoreError", "Record"]
