"""The dealers' table snapshots as every program opens them: one sealed store, built here for
the dealers' and the wallet's repository (:class:`~poker.tablelog.repository.TableRepository`)
and for pokerctl's replay alike, so that a rule of what a table snapshot may be is written once.

The rules: a snapshot is accepted from a dealer only (``accept``: a wallet's or an impostor's
seal is refused), its seal binds the bucket, the table and the position, and an HMAC seal is
accepted only while the keyring has no ``hmac_below`` (once the table log signs, a holder of an
old HMAC secret could seal a snapshot at any position). Every seal is checked before anything
is unpickled (:class:`~poker.eventstore.sealing.SealedSnapshotStore`).
"""

from __future__ import annotations

from collections.abc import Callable

from poker.eventstore.sealing import Keyring, Refusal, SealedSnapshotStore, Writer
from poker.eventstore.snapshots import SnapshotStore

#: The only writer whose table snapshots anyone loads.
SNAPSHOT_WRITERS: tuple[Writer, ...] = (Writer.DEALER,)


def sealed_table_snapshots(
    inner: SnapshotStore,
    keyring: Keyring,
    *,
    bucket: str,
    writer: Writer,
    on_refused: Callable[[Refusal], None] | None = None,
) -> SealedSnapshotStore:
    """``inner``'s table snapshots sealed and checked by the rules above: ``bucket`` is the
    name their seals bind, ``writer`` the one a save would sign as (a reader with public keys
    only never saves, so never needs its key), ``on_refused`` hears each refused seal's reason
    (the services' metric; pokerctl says nothing)."""
    return SealedSnapshotStore(
        inner,
        keyring,
        bucket=bucket,
        writer=writer,
        accept=SNAPSHOT_WRITERS,
        on_refused=on_refused,
        hmac_accepted=keyring.hmac_below is None,
    )
