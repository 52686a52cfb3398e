"""The index of open tables: one small listing per open table in a JetStream KV bucket
(``--table-index-bucket``, ``POKER_TABLE_INDEX``), keyed by table id.

It is a cache of the log, never trusted for money: the log stays the truth. The dealer that
serves a table keeps its entry (after an append that changes what a listing shows: a create,
a seat taken or freed, a hand started or ended, the close, which deletes the entry) and
rewrites it when it takes a table over. Every dealer watches the bucket and keeps the listings
in memory (:class:`TableIndex`): ListTables pages through that view and the takeover scan
takes its candidates from it, so neither costs anything per table ever closed.

Crash windows, and how each heals:

- a create: the entry is written (``creating``) *before* the creation is appended, so a
  table never exists unlisted; a creation refused or never appended leaves an entry the next
  scan adopts, finds no table behind and deletes;
- any other append: the write goes out in the background (coalesced, latest listing only);
  lost in a crash, the entry is stale until the table's next taker rewrites it (every
  takeover does) - a close whose delete was lost is adopted once more, found closed, deleted;
- a room whose index is empty while its stream is not (the index is new, or was lost) is
  rebuilt from the whole log once at start (:func:`rebuild_index`; ``--rebuild-index``
  forces it): linear in the tables ever opened, once.

Every value read from the bucket is hostile until checked: one that does not decode as a
listing of its own key is skipped, logged and counted (``poker_dealer_table_index_refused``).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import nats.errors
import nats.js.errors
import structlog
from google.protobuf.message import DecodeError
from nats.js import JetStreamContext, api
from nats.js.kv import KeyValue

from poker.dealer.metrics import DealerMetrics
from poker.dealer.pages import ListFilter
from poker.engine.hand.codec import config_to_wire as hand_config_to_wire
from poker.engine.table import TableState
from poker.eventstore.jetstream import READ_CONSUMER_INACTIVE_S
from poker.servicekit.background import BackgroundTask
from poker.tablelog.feed import is_table_id
from poker.v1 import events_pb2 as pb

_log = structlog.get_logger(__name__)

#: How long a deleted entry's purge marker stays in the bucket (then it is gone: the bucket
#: holds open tables and the closes of the last minute, nothing older).
PURGE_MARKER_TTL_S: Final = 60.0
_RETRY_S: Final = 1.0


def listing_of(table_id: str, state: TableState | None) -> pb.TableListing | None:
    """The listing of a table as it is now; None for no table or a closed one (not listed)."""
    if state is None or state.closed:
        return None
    game, structure, stakes, _ = hand_config_to_wire(state.config.hand)
    return pb.TableListing(
        table_id=table_id,
        version=state.version,
        game=game,
        structure=pb.BettingStructure.ValueType(structure),
        stakes=stakes,
        real_money=state.config.real_money,
        seat_count=state.config.seat_count,
        players=len(state.occupied()),
        hand_running=state.hand_running,
    )


def _shown(listing: pb.TableListing) -> bytes:
    """What a listing shows, without the version (a write is due only when this changes)."""
    shown = pb.TableListing()
    shown.CopyFrom(listing)
    shown.version = 0
    return shown.SerializeToString(deterministic=True)


class TableIndex:
    """This dealer's view of the index of open tables, and its writes (see the module)."""

    def __init__(self, js: JetStreamContext, bucket: str, metrics: DealerMetrics) -> None:
        self._js = js
        self._bucket_name = bucket
        self._metrics = metrics
        self._kv: KeyValue | None = None
        #: table id -> its listing, as the bucket (and this process's own writes) say.
        self.view: dict[str, pb.TableListing] = {}
        self._keys: list[str] = []  # the view's keys, sorted
        #: What :meth:`note` last listed of each table (config, players, hand running).
        self._noted: dict[str, tuple[object, int, bool]] = {}
        self._pending: dict[str, pb.TableListing | None] = {}  # None: delete
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._loaded = asyncio.Event()
        self._watch_task = BackgroundTask(self._watch, name="table-index-watch")
        self._writer_task = BackgroundTask(self._write, name="table-index-writer")

    async def start(self, timeout_s: float = 30.0) -> None:
        """Bind the bucket, load every entry (the watch's initial values), then follow it and
        write in the background."""
        self._kv = await self._js.key_value(self._bucket_name)
        self._watch_task.start()
        self._writer_task.start()
        await asyncio.wait_for(self._loaded.wait(), timeout_s)

    async def stop(self, *, flush: bool = True) -> None:
        """Flush what is pending (briefly; not for a simulated crash), then stop watching and
        writing."""
        if flush:
            try:
                await asyncio.wait_for(self.flush(), 2.0)
            except TimeoutError:
                _log.warning("table_index_unflushed", pending=len(self._pending))
        await self._writer_task.stop()
        await self._watch_task.stop()

    # --- reads ------------------------------------------------------------------------------

    def open_tables(self) -> list[str]:
        """Every table the index lists (the takeover scan's candidates), by id."""
        return list(self._keys)

    def page(self, filters: ListFilter, after: str, size: int) -> tuple[list[pb.TableListing], str]:
        """Up to ``size`` listings after table id ``after`` that pass ``filters``, by id, and
        the id to continue after ("" when there is nothing more)."""
        found: list[pb.TableListing] = []
        keys = self._keys
        for place in range(bisect.bisect_right(keys, after), len(keys)):  # no copy of the keys
            table_id = keys[place]
            listing = self.view[table_id]
            if listing.creating or not filters.matches(listing):
                continue
            if len(found) == size:
                return found, found[-1].table_id
            found.append(listing)
        return found, ""

    # --- writes -----------------------------------------------------------------------------

    def note(self, table_id: str, state: TableState | None) -> None:
        """The table as it is after an append (or a takeover): its entry rewritten if what it
        shows changed, deleted if it is closed or gone (in the background). On the command
        path: what this process last listed of the table is compared first (the same config
        object, players and hand running: no listing built for an append that changes none)."""
        if state is not None and not state.closed:
            shown = (state.config, len(state.occupied()), state.hand_running)
            last = self._noted.get(table_id)
            unchanged = last is not None and last[0] is shown[0] and last[1:] == shown[1:]
            if unchanged and table_id in self.view:
                return
            self._noted[table_id] = shown
        else:
            self._noted.pop(table_id, None)
        listing = listing_of(table_id, state)
        current = self.view.get(table_id)
        if listing is None:
            if current is None and table_id not in self._pending:
                return
            self._drop(table_id)
        else:
            if current is not None and not current.creating and _shown(current) == _shown(listing):
                return
            self._set(table_id, listing)
        self._metrics.index_entries.set(len(self.view))
        self._pending[table_id] = listing
        self._idle.clear()
        self._wake.set()

    def rewrite(self, table_id: str, state: TableState | None) -> None:
        """A table just taken over: its entry written whatever the view says (it may be
        stale or missing: a crash between an append and its write)."""
        self._drop(table_id)
        self._noted.pop(table_id, None)
        if state is None or state.closed:
            self._pending[table_id] = None
            self._idle.clear()
            self._wake.set()
            self._metrics.index_entries.set(len(self.view))
            return
        self.note(table_id, state)

    async def reserve(self, table_id: str) -> None:
        """Before a table's creation is appended: its entry, marked ``creating``, written and
        acknowledged (a creation never lands unlisted)."""
        # A delete queued for the id (a takeover found no table yet) must not land after this.
        if self._pending.get(table_id, False) is None:
            del self._pending[table_id]
        if table_id in self.view:
            return
        listing = pb.TableListing(table_id=table_id, creating=True)
        await self._bucket().put(table_id, listing.SerializeToString())
        if table_id not in self.view:
            self._set(table_id, listing)
        self._metrics.index_entries.set(len(self.view))

    async def flush(self) -> None:
        """Wait until every write noted so far has been made (tests, shutdown)."""
        await self._idle.wait()

    def count_repair(self) -> None:
        """Count one rebuild of the index from the whole log."""
        self._metrics.index_repairs.inc()

    def _bucket(self) -> KeyValue:
        if self._kv is None:
            raise RuntimeError("the table index is not started")
        return self._kv

    async def _write(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                table_id, listing = next(iter(self._pending.items()))
                del self._pending[table_id]
                try:
                    await self._write_one(table_id, listing)
                except (nats.errors.Error, nats.js.errors.Error, TimeoutError) as error:
                    self._metrics.index_write_failures.inc()
                    _log.warning("table_index_write_failed", table_id=table_id, error=str(error))
                    self._pending.setdefault(table_id, listing)  # unless a newer one came
                    await asyncio.sleep(_RETRY_S)
            self._idle.set()

    async def _write_one(self, table_id: str, listing: pb.TableListing | None) -> None:
        bucket = self._bucket()
        if listing is None:
            await bucket.purge(table_id, msg_ttl=PURGE_MARKER_TTL_S)
        else:
            await bucket.put(table_id, listing.SerializeToString())

    # --- the watch --------------------------------------------------------------------------

    async def _watch(self) -> None:
        """Follow the bucket: an ordered consumer of its stream from the last value of each
        key on (what a KV watch does, without the consumer-info call the dealer's user may not
        make); the initial values are in once one arrives with nothing pending, or the
        stream holds none."""
        stream = f"KV_{self._bucket_name}"
        prefix = f"$KV.{self._bucket_name}."
        if not (await self._js.stream_info(stream)).state.messages:
            self._loaded.set()  # nothing to load (a value appended since is delivered below)
        subscription = await self._js.subscribe(
            f"{prefix}>",
            stream=stream,
            ordered_consumer=True,
            deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
            config=api.ConsumerConfig(inactive_threshold=READ_CONSUMER_INACTIVE_S),
        )
        try:
            while True:
                try:
                    message = await subscription.next_msg(timeout=1.0)
                except nats.errors.TimeoutError:
                    if not self._loaded.is_set():
                        info = await self._js.stream_info(stream)
                        if not info.state.messages:
                            self._loaded.set()
                    continue
                operation = (message.headers or {}).get("KV-Operation", "")
                key = message.subject.removeprefix(prefix)
                self.apply(key, message.data, deleted=operation in ("DEL", "PURGE"))
                if message.metadata.num_pending == 0:
                    self._loaded.set()
        finally:
            with contextlib.suppress(nats.errors.Error, nats.js.errors.Error):
                await subscription.unsubscribe()

    def apply(self, key: str, value: bytes | None, *, deleted: bool) -> None:
        """One entry of the bucket as the watch delivers it; a value that is no listing of
        its key is skipped, logged and counted (never raised)."""
        if key in self._pending:
            return  # this process's own newer write is on its way
        if deleted:
            if self._drop(key):
                self._metrics.index_entries.set(len(self.view))
            return
        listing = self._checked(key, value)
        if listing is None:
            return
        current = self.view.get(key)
        if current is not None and not current.creating and current.version > listing.version:
            return  # an older writer's late value: keep the newer one
        self._set(key, listing)
        self._metrics.index_entries.set(len(self.view))

    def _set(self, table_id: str, listing: pb.TableListing) -> None:
        """``view[table_id] = listing``, its id kept in :attr:`_keys` (sorted: a page starts
        by bisection, not by sorting every open table)."""
        if table_id not in self.view:
            bisect.insort(self._keys, table_id)
        self.view[table_id] = listing

    def _drop(self, table_id: str) -> bool:
        """Remove ``table_id`` from the view; whether it was there."""
        if self.view.pop(table_id, None) is None:
            return False
        del self._keys[bisect.bisect_left(self._keys, table_id)]
        return True

    def _checked(self, key: str, value: bytes | None) -> pb.TableListing | None:
        reason = None
        listing = pb.TableListing()
        if not is_table_id(key):
            reason = "bad_key"
        else:
            try:
                listing.ParseFromString(value or b"")
            except DecodeError:
                reason = "undecodable"
            else:
                if listing.table_id != key:
                    reason = "wrong_table"
                elif listing.seat_count < 0 or listing.players < 0 or listing.version < 0:
                    reason = "out_of_range"
        if reason is None:
            return listing
        self._metrics.index_refused.labels(reason=reason).inc()
        _log.error("table_index_value_refused", key=key[:128], reason=reason)
        return None


async def rebuild_index(
    index: TableIndex,
    table_ids: Iterable[str],
    read: Callable[[str], Awaitable[TableState | None]],
) -> int:
    """Every table of ``table_ids`` read from its log (``read``: None for no table, raising
    for a table that cannot be read, which is skipped) and its entry written if it is open;
    returns how many were listed. Linear in the tables ever opened: run once, when the index
    is empty while the stream is not, or asked (``--rebuild-index``)."""
    index.count_repair()
    listed = 0
    for table_id in table_ids:
        try:
            state = await read(table_id)
        except Exception as error:  # one table's failure (a quarantined log) costs it alone
            _log.warning("table_index_rebuild_skipped", table_id=table_id, error=str(error))
            continue
        if state is not None and not state.closed:
            index.note(table_id, state)
            listed += 1
    await index.flush()
    return listed


__all__ = ["TableIndex", "listing_of", "rebuild_index"]
