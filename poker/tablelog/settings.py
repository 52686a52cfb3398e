"""The names of the table log on NATS: one owner for both services' defaults.

The operator provisions the stream and its buckets under these names; the dealer, the wallet
and pokerctl are given them by the same flags (the table-log group of
:mod:`poker.servicekit.flags`, which owns the defaults: ``--table-stream``,
``--table-subject-prefix``, ``--table-snapshot-bucket``, ``--table-lease-bucket``, read from
``<PREFIX>_TABLE_STREAM``...). Both services' settings expose their names as one
:class:`TableLogSettings`.

>>> TableLogSettings().subject("t1")
'poker.table.t1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from poker.eventstore.jetstream import StreamSettings
from poker.servicekit import flags
from poker.servicekit.nats_permissions import TableNames


@dataclass(frozen=True, slots=True)
class TableLogSettings:
    """Where the tables live: the stream, its subjects, the snapshot and the lease buckets, and
    how many copies JetStream keeps of each (``replicas``: 1 on one node, 3 on a 3-node cluster,
    where an append is acknowledged once a quorum of them has it; applied by the operator's
    provisioning, checked by the dealer at start, see deploy/README.md)."""

    stream: str = flags.TABLE_STREAM.default
    subject_prefix: str = flags.TABLE_SUBJECT_PREFIX.default
    snapshot_bucket: str = flags.TABLE_SNAPSHOT_BUCKET.default
    lease_bucket: str = flags.TABLE_LEASE_BUCKET.default
    replicas: int = flags.REPLICAS.default
    index_bucket: str = flags.TABLE_INDEX_BUCKET.default

    def subject(self, table_id: str) -> str:
        """The subject of ``table_id``'s log."""
        return f"{self.subject_prefix}.{table_id}"

    @property
    def names(self) -> TableNames:
        """The names alone (what the NATS users are granted and the operator provisions)."""
        return TableNames(
            self.stream,
            self.subject_prefix,
            self.snapshot_bucket,
            self.lease_bucket,
            self.index_bucket,
        )

    @property
    def stream_settings(self) -> StreamSettings:
        """The event store's settings of the tables stream (its stream and subject prefix)."""
        return StreamSettings(
            stream=self.stream, subject_prefix=self.subject_prefix, replicas=self.replicas
        )


#: The room's names, the defaults of both services' flags.
DEFAULT_TABLE_LOG: Final = TableLogSettings()
