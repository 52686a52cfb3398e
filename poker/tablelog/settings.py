"""The names of the table log on NATS: one owner for both services' defaults.

The operator provisions the stream and its buckets under these names (the dealer's
``--stream``, ``--subject-prefix``, ``--snapshot-bucket``, ``--lease-bucket``); the wallet looks
them up (``--table-stream``, ``--table-subject-prefix``, ``--dealer-snapshot-bucket``,
``--dealer-lease-bucket``) and must be given the same names. Both services' settings default to
this class's defaults and expose their names as one :class:`TableLogSettings`.

>>> TableLogSettings().subject("t1")
'poker.table.t1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from poker.eventstore.jetstream import StreamSettings
from poker.servicekit.nats_permissions import TableNames


@dataclass(frozen=True, slots=True)
class TableLogSettings:
    """Where the tables live: the stream, its subjects, the snapshot and the lease buckets, and
    how many copies JetStream keeps of each (``replicas``: 1 on one node, 3 on a 3-node cluster,
    where an append is acknowledged once a quorum of them has it; applied by the operator's
    provisioning, checked by the dealer at start, see deploy/README.md)."""

    stream: str = "POKER_TABLES"
    subject_prefix: str = "poker.table"
    snapshot_bucket: str = "POKER_SNAPSHOTS"
    lease_bucket: str = "POKER_LEASES"
    replicas: int = 1

    def subject(self, table_id: str) -> str:
        """The subject of ``table_id``'s log."""
        return f"{self.subject_prefix}.{table_id}"

    @property
    def names(self) -> TableNames:
        """The names alone (what the NATS users are granted and the operator provisions)."""
        return TableNames(self.stream, self.subject_prefix, self.snapshot_bucket, self.lease_bucket)

    @property
    def stream_settings(self) -> StreamSettings:
        """The event store's settings of the tables stream (its stream and subject prefix)."""
        return StreamSettings(
            stream=self.stream, subject_prefix=self.subject_prefix, replicas=self.replicas
        )


#: The room's names, the defaults of both services' flags.
DEFAULT_TABLE_LOG: Final = TableLogSettings()
