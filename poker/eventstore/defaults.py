"""The stores' defaults, each number and name once: the room's table log names, the copies
JetStream keeps, a lease's life and the tries of a command.

The stores' settings (:class:`~poker.eventstore.jetstream.StreamSettings`,
:class:`~poker.eventstore.leases.LeaseSettings`,
:class:`~poker.eventstore.snapshots.SnapshotSettings`, the
:class:`~poker.eventstore.aggregate.Aggregate`) default to them, and so do the flags of
:mod:`poker.servicekit.flags` (``--table-stream``, ``--replicas``, ``--lease-ttl``, ...), which
take them from here: servicekit stands above the event store (tests/unit/test_import_contracts.py),
so the lower layer owns the literal and the flags refer to it.
"""

from __future__ import annotations

from typing import Final

#: The tables stream, its subjects' prefix (a table's log is ``<prefix>.<table id>``) and the
#: key-value buckets of the dealers' table snapshots and table leases.
DEFAULT_STREAM: Final = "POKER_TABLES"
DEFAULT_SUBJECT_PREFIX: Final = "poker.table"
DEFAULT_SNAPSHOT_BUCKET: Final = "POKER_SNAPSHOTS"
DEFAULT_LEASE_BUCKET: Final = "POKER_LEASES"
#: The key-value bucket of the dealers' index of open tables (a cache of the log).
DEFAULT_INDEX_BUCKET: Final = "POKER_TABLE_INDEX"
#: Copies JetStream keeps of a stream or bucket: 1 on one nats-server.
DEFAULT_REPLICAS: Final = 1
#: Seconds a lease lives unless renewed.
DEFAULT_LEASE_TTL_S: Final = 10.0
#: Times a command is tried when another writer appended first.
DEFAULT_MAX_ATTEMPTS: Final = 5
