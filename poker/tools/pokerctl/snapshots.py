"""Where ``replay`` and ``verify`` start: the dealers' latest snapshot of a table, or None (the
first event). Every rule pokerctl has for loading snapshots is here.

It is built from the services' own parts, not a copy of them: the sealed store
(:func:`~poker.tablelog.snapshot_store.sealed_table_snapshots`: dealers' seals only, an HMAC
seal only while the keyring has no ``hmac_below``, every seal checked before anything is
unpickled; :class:`~poker.tablelog.repository.TableRepository` builds it the same way), the
decryption (:meth:`~poker.tablelog.secrets.DeckKeys.open_snapshot`) and the decoding
(:func:`~poker.tablelog.snapshot_codec.decode_table_and_chain`, through
:func:`poker.tools.logtools.latest_snapshot`), and the services' rule that a snapshot refused,
corrupt or of another layout is ignored and the log replayed. It does not call the services'
load (:meth:`Aggregate.from_snapshot <poker.eventstore.aggregate.Aggregate.from_snapshot>` with
:meth:`TableCodec.decode_snapshot <poker.tablelog.codec.TableCodec.decode_snapshot>`) because
pokerctl differs on purpose, in four ways:

- it reads with the room's *public* log keys (``--log-keys``), and without them reads no
  snapshot at all; it never writes one and never creates the bucket (none: from the first event);
- it says nothing when it ignores a snapshot: the services log a line and count a metric, and a
  log line would mix with ``--json`` (the log is the truth; the result is the same);
- without the deck key it still reads a snapshot in clear (one written before the decks were
  encrypted): it rebuilds a table for the operator to read, while the services' codec without
  the deck keys (the wallet's) refuses one, since a wallet's state must never hold a secret;
- a snapshot past ``--to-version`` is no start.
"""

from __future__ import annotations

from nats.js import JetStreamContext

from poker.eventstore.aggregate import SNAPSHOT_DECODE_ERRORS
from poker.eventstore.sealing import (
    SealedSnapshotStore,
    SnapshotRefused,
    Writer,
)
from poker.eventstore.snapshots import CorruptSnapshot, JetStreamSnapshotStore, SnapshotSettings
from poker.servicekit import flags
from poker.tablelog.secrets import DeckKeys
from poker.tablelog.snapshot_store import sealed_table_snapshots
from poker.tools import ctlconfig, logtools
from poker.tools.pokerctl.common import Ctl, F
from poker.tools.pokerctl.logaccess import (
    log_keyring_of,
)


def snapshot_options(function: F) -> F:
    """``--log-keys`` and ``--table-snapshot-bucket``: the dealers' sealed snapshots."""
    function = ctlconfig.option(flags.TABLE_SNAPSHOT_BUCKET)(function)
    return ctlconfig.option(
        flags.LOG_KEYS,
        detail="Here: to check the snapshots' seals and (verify) the records' (else"
        " var/log-keys.json of the home; none: snapshots are not read, seals not checked).",
    )(function)


async def snapshot_store(
    ctl: Ctl, js: JetStreamContext, log_keys: str, bucket: str
) -> SealedSnapshotStore | None:
    """The dealers' snapshots, every seal checked before anything is unpickled; None without
    the log keys."""
    keyring = log_keyring_of(ctl, log_keys)
    if keyring is None:
        return None
    inner = JetStreamSnapshotStore(js, SnapshotSettings(bucket=bucket))
    if not await inner.bind_bucket():
        return None  # no bucket: every replay starts from the first event
    # The services' rules (poker.tablelog.snapshot_store); no on_refused: pokerctl is silent.
    return sealed_table_snapshots(inner, keyring, bucket=bucket, writer=Writer.DEALER)


async def start_of(
    snapshots: SealedSnapshotStore | None,
    table: str,
    to_version: int | None,
    deck_keys: DeckKeys | None = None,
) -> logtools.Start | None:
    """The snapshot a replay may start from (None: from the first event)."""
    if snapshots is None:
        return None
    try:
        start = await logtools.latest_snapshot(snapshots, table, deck_keys)
    except (SnapshotRefused, CorruptSnapshot):
        return None  # a snapshot is an optimization: the log is the truth
    except SNAPSHOT_DECODE_ERRORS:
        return None  # another engine's layout: the log is replayed
    if start is None or (to_version is not None and start.state.version > to_version):
        return None
    return start
