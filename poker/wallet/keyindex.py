"""The key index: where in the journal a client key or an ended hold that left the ledger
state's window was recorded.

The ledger state keeps client idempotency keys and ended holds for a window of transactions only
(:data:`~poker.wallet.ledger.state.KEY_WINDOW`), so that it stays bounded by what is live. A
request may repeat an older one any time (a client retrying a deposit a month later, a buy-in
with a hold id used long ago): the journal still has it, and this index says where.

**The journal is the truth; the index only says where to look.** An entry is ``name ->
journal position`` (the name hashed into the KV key: any client key is a valid one). A lookup
reads the record at that position, checks its ledger seal as a rebuild does and finds the very
transaction in it (the client key, or the hold's ending); an entry that points anywhere else is
refused (:class:`IndexCorrupt`: the request fails, nothing is decided): a tampered index can
make a repeat fail, never apply twice, never answer with another transaction.

**No gap.** A key can leave the state only ``KEY_WINDOW`` transactions after it was posted, and
the index is written before that:

* after each journal append, before the book decides anything else, the book writes the entries
  of the record it appended (:meth:`KeyIndex.indexed`). A write that fails is kept and retried
  before the next decision; until it lands the book refuses to decide (``Unavailable``): no key
  can leave the window unindexed while the wallet runs.
* the index keeps a watermark: the journal position up to which every record's entries are
  written. A wallet that died between an append and its index write (or a standby taking over)
  re-indexes the journal from the watermark before it decides anything (:meth:`KeyIndex.reindex`,
  at load). The watermark moves with every entry written and at least every
  :data:`WATERMARK_EVERY` records, so that scan is bounded, never the whole journal.

The property test ``tests/property/test_wallet_key_window.py`` replays every earlier key after
random snapshots, restarts and lost index writes: no repeat ever moves money.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Final, Protocol, cast

import nats.errors
import nats.js.errors
import structlog
from google.protobuf.message import DecodeError
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from poker.eventstore.api import EventStore, Record, StoreUnavailable
from poker.eventstore.nats_errors import TRANSIENT_NATS_ERRORS
from poker.eventstore.sealing import SealRefused
from poker.servicekit.errors import Unavailable
from poker.v1 import ledger_pb2 as lpb
from poker.wallet.ledger import Command, Hold, HoldStatus, Kind, LedgerState
from poker.wallet.ledger.decide import recall_names
from poker.wallet.ledger.events import decode_transaction
from poker.wallet.ledger.state import CLIENT_KEY_PREFIX, KeyedTransaction, Recalled

_log = structlog.get_logger(__name__)

#: The most records between two watermark writes (the scan of a re-index after a crash).
WATERMARK_EVERY: Final = 256
#: The KV key of the watermark, and the prefix of the entries' KV keys.
WATERMARK_KEY: Final = "keys-through"
ENTRY_PREFIX: Final = "keys."

_ENDINGS: Final = {
    Kind.HOLD_POSTED: HoldStatus.POSTED,
    Kind.HOLD_VOIDED: HoldStatus.VOIDED,
    Kind.HOLD_EXPIRED: HoldStatus.EXPIRED,
}

#: Raises :class:`~poker.eventstore.sealing.SealRefused` unless the wallet sealed the record
#: right after the given position (:meth:`poker.wallet.journal.LedgerCodec.verify`).
Verifier = Callable[[Record, int], None]


class IndexCorrupt(Unavailable):
    """An index entry points at a journal record that does not hold what it names: the request
    is refused (never decided) and the operator told (the log names the entry)."""

    REASON = "KEY_INDEX_CORRUPT"


def client_name(key: str) -> str:
    """The index name of a client key (as the state keeps it, ``client:<key>``)."""
    return "k" + key


def hold_name(hold_id: str) -> str:
    """The index name of a hold (its ending)."""
    return "h" + hold_id


def kv_key(name: str) -> str:
    """The KV key of an index name: a digest, so that any client key is a valid KV key."""
    return ENTRY_PREFIX + hashlib.sha256(name.encode()).hexdigest()


def names_of(events: Iterable[lpb.LedgerEvent]) -> list[str]:
    """The index names a record's events key: each client key, each hold ended."""
    names: list[str] = []
    for event in events:
        if not event.HasField("transaction_posted"):
            continue  # a TableForgotten keys nothing
        tx, _ = decode_transaction(event)
        if tx.idempotency_key.startswith(CLIENT_KEY_PREFIX):
            names.append(client_name(tx.idempotency_key))
        elif tx.kind in _ENDINGS and tx.hold_id:
            names.append(hold_name(tx.hold_id))
    return names


class IndexStore(Protocol):
    """Where the entries and the watermark live (a KV bucket of the wallet's own)."""

    async def get(self, name: str) -> int | None:
        """The position of ``name`` (None: never indexed); raise :class:`IndexCorrupt` for a
        value this code never wrote."""

    async def put(self, entries: Mapping[str, int]) -> None:
        """Write ``entries``; raise :class:`StoreUnavailable` if it cannot now."""

    async def watermark(self) -> int:
        """The position up to which every record's entries are written (0: none)."""

    async def set_watermark(self, position: int) -> None:
        """Move the watermark to ``position``."""


class InMemoryIndexStore:
    """:class:`IndexStore` in a dict (unit and property tests); ``failing`` makes writes fail."""

    def __init__(self) -> None:
        self.entries: dict[str, int] = {}
        self.mark = 0
        self.failing = False

    async def get(self, name: str) -> int | None:
        """See :class:`IndexStore`."""
        return self.entries.get(name)

    async def put(self, entries: Mapping[str, int]) -> None:
        """See :class:`IndexStore`."""
        if self.failing:
            raise StoreUnavailable("the index is down (test)")
        self.entries.update(entries)

    async def watermark(self) -> int:
        """See :class:`IndexStore`."""
        return self.mark

    async def set_watermark(self, position: int) -> None:
        """See :class:`IndexStore`."""
        if self.failing:
            raise StoreUnavailable("the index is down (test)")
        self.mark = max(self.mark, position)


def _position(value: bytes | None, what: str) -> int:
    text = (value or b"").decode("ascii", errors="replace")
    if not (text.isascii() and text.isdigit() and 0 < len(text) <= 20):
        raise IndexCorrupt(f"the key index holds a value this wallet never wrote at {what}")
    return int(text)


class JetStreamIndexStore:
    """:class:`IndexStore` on a KV bucket the wallet alone may read and write (the journal's
    snapshot bucket, under keys of its own: ``keys.<sha256 of the name>`` and
    ``keys-through``)."""

    def __init__(self, js: JetStreamContext, bucket: str) -> None:
        self._js = js
        self._bucket_name = bucket
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            try:
                self._kv = await self._js.key_value(self._bucket_name)
            except TRANSIENT_NATS_ERRORS as error:
                raise StoreUnavailable(f"binding {self._bucket_name}: {error!r}") from error
        return self._kv

    async def _value(self, key: str) -> bytes | None:
        kv = await self._bucket()
        try:
            entry = await kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        except TRANSIENT_NATS_ERRORS as error:
            raise StoreUnavailable(f"reading the key index: {error!r}") from error
        return entry.value

    async def get(self, name: str) -> int | None:
        """See :class:`IndexStore`."""
        key = kv_key(name)
        value = await self._value(key)
        return None if value is None else _position(value, key)

    async def put(self, entries: Mapping[str, int]) -> None:
        """See :class:`IndexStore`."""
        kv = await self._bucket()
        try:
            for name, position in entries.items():
                await kv.put(kv_key(name), str(position).encode())
        except (*TRANSIENT_NATS_ERRORS, nats.errors.Error) as error:
            raise StoreUnavailable(f"writing the key index: {error!r}") from error

    async def watermark(self) -> int:
        """See :class:`IndexStore`."""
        value = await self._value(WATERMARK_KEY)
        return 0 if value is None else _position(value, WATERMARK_KEY)

    async def set_watermark(self, position: int) -> None:
        """See :class:`IndexStore`."""
        await self.put_raw(WATERMARK_KEY, position)

    async def put_raw(self, key: str, position: int) -> None:
        """Write ``position`` under the KV key ``key`` itself."""
        kv = await self._bucket()
        try:
            await kv.put(key, str(position).encode())
        except (*TRANSIENT_NATS_ERRORS, nats.errors.Error) as error:
            raise StoreUnavailable(f"writing the key index: {error!r}") from error


@dataclass
class _Pending:
    """Entries appended to the journal and not yet in the index, and the position they reach."""

    entries: dict[str, int]
    position: int


class KeyIndex:
    """The book's side of the index; see the module docstring."""

    def __init__(
        self,
        store: IndexStore,
        journal: EventStore,
        journal_key: str,
        verify: Verifier,
        *,
        watermark_every: int = WATERMARK_EVERY,
    ) -> None:
        self.store = store
        self._journal = journal
        self._key = journal_key
        self._verify = verify
        self._every = watermark_every
        self._pending = _Pending({}, 0)
        self._mark = 0

    # --- writing --------------------------------------------------------------------------

    async def indexed(self, events: Sequence[lpb.LedgerEvent], position: int) -> None:
        """Note the entries of the record just appended at ``position`` and write them (a
        failure is kept for :meth:`flush`, never raised: the append stands)."""
        for name in names_of(events):
            self._pending.entries[name] = position
        self._pending.position = max(self._pending.position, position)
        try:
            await self.flush()
        except Unavailable:
            _log.warning("key_index_behind", position=position, entries=len(self._pending.entries))

    async def flush(self) -> None:
        """Write what is pending; :class:`Unavailable` (decide nothing) if it cannot now."""
        pending = self._pending
        try:
            if pending.entries:
                await self.store.put(pending.entries)
                pending.entries = {}
            if pending.position and (
                pending.entries == {} and (pending.position - self._mark >= self._every)
            ):
                await self.store.set_watermark(pending.position)
                self._mark = pending.position
        except StoreUnavailable as error:
            raise Unavailable(
                "the wallet's key index cannot be written now; retry in a moment"
            ) from error

    async def flush_written(self, position: int) -> None:
        """Write what is pending and the watermark at ``position`` whatever its distance."""
        await self.flush()
        if position > self._mark:
            try:
                await self.store.set_watermark(position)
            except StoreUnavailable as error:
                raise Unavailable("the wallet's key index cannot be written now") from error
            self._mark = position

    async def reindex(self, position: int) -> int:
        """Write the entries of every journal record after the watermark up to ``position``
        (the records a wallet that died may not have indexed), then the watermark; return how
        many records were read. Called at load, before anything is decided."""
        self._pending = _Pending({}, 0)
        try:
            mark = await self.store.watermark()
        except StoreUnavailable as error:
            raise Unavailable("the wallet's key index cannot be read now") from error
        self._mark = mark
        if mark >= position:
            return 0
        entries: dict[str, int] = {}
        read = 0
        reader = cast(AsyncGenerator[Record, None], self._journal.read(self._key, mark))
        async with aclosing(reader) as records:
            async for record in records:
                if record.position > position:
                    break
                read += 1
                for name in names_of(self._events(record)):
                    entries[name] = record.position
        self._pending = _Pending(entries, position)
        await self.flush_written(position)
        _log.info("key_index_reindexed", after=mark, up_to=position, records=read)
        return read

    def _events(self, record: Record) -> Sequence[lpb.LedgerEvent]:
        """The events of a record the wallet sealed ([] for another: it moved no money)."""
        try:
            self._verify(record, record.position - 1)  # dense positions: the journal's stream
            return lpb.LedgerEventBatch.FromString(record.data).events
        except (SealRefused, DecodeError, ValueError):
            return []

    # --- reading --------------------------------------------------------------------------

    async def recall(self, state: LedgerState, commands: Sequence[Command]) -> Recalled:
        """The keys and ended holds ``commands`` name that are no longer in ``state``, as the
        journal recorded them (those never used are simply absent)."""
        keys: dict[str, KeyedTransaction] = {}
        holds: dict[str, Hold] = {}
        for command in commands:
            key, hold_id = recall_names(command)
            if key and key not in state.keys and key not in keys:
                found = await self.keyed(key)
                if found is not None:
                    keys[key] = found
            if hold_id and hold_id not in state.holds and hold_id not in holds:
                ended = await self.ended_hold(hold_id)
                if ended is not None:
                    holds[hold_id] = ended
        return Recalled(keys, holds) if keys or holds else Recalled()

    async def keyed(self, key: str) -> KeyedTransaction | None:
        """The transaction posted under client key ``key`` (with its prefix), from the journal."""
        found = await self._find(client_name(key))
        if found is None:
            return None
        for event in found[1]:
            if not event.HasField("transaction_posted"):
                continue
            tx, _ = decode_transaction(event)
            if tx.idempotency_key == key:
                return KeyedTransaction(tx.transaction_id, tx.kind, tx.postings)
        raise self._corrupt(client_name(key), found[0])

    async def ended_hold(self, hold_id: str) -> Hold | None:
        """Hold ``hold_id`` as its last ending left it, from the journal."""
        found = await self._find(hold_name(hold_id))
        if found is None:
            return None
        ended: Hold | None = None
        for event in found[1]:
            if not event.HasField("transaction_posted"):
                continue
            tx, hold = decode_transaction(event)
            if tx.kind in _ENDINGS and tx.hold_id == hold_id and hold is not None:
                ended = Hold(
                    hold.hold_id,
                    hold.player_id,
                    hold.table_id,
                    hold.amount,
                    hold.expires_at,
                    _ENDINGS[tx.kind],
                    ended_by=tx.transaction_id,
                )
        if ended is None:
            raise self._corrupt(hold_name(hold_id), found[0])
        return ended

    async def _find(self, name: str) -> tuple[int, Sequence[lpb.LedgerEvent]] | None:
        """The position and events of the record ``name``'s entry points at (None: no entry);
        :class:`IndexCorrupt` unless that is a record the wallet sealed."""
        if name in self._pending.entries:  # appended, not yet written: the state has it too
            position: int | None = self._pending.entries[name]
        else:
            try:
                position = await self.store.get(name)
            except StoreUnavailable as error:
                raise Unavailable("the wallet's key index cannot be read now") from error
        if position is None:
            return None
        try:
            record = await self._journal.read_at(self._key, position)
        except StoreUnavailable as error:
            raise Unavailable("the wallet's journal cannot be read now") from error
        if record is None:
            raise self._corrupt(name, position)
        try:
            self._verify(record, position - 1)
            return position, lpb.LedgerEventBatch.FromString(record.data).events
        except (SealRefused, DecodeError, ValueError) as error:
            raise self._corrupt(name, position) from error

    def _corrupt(self, name: str, position: int) -> IndexCorrupt:
        _log.error("key_index_corrupt", entry=kv_key(name), position=position)
        return IndexCorrupt(
            f"the wallet's key index points at journal record {position}, which does not hold "
            "what it names; the request is refused (see the runbook: the key index)"
        )
