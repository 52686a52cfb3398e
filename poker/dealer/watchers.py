"""WatchTable's fan-out: one follower (one NATS consumer) per table per dealer process, shared
by every stream watching that table here, each stream with a bounded backlog.

A :class:`WatchHub` keeps one :class:`_SharedFeed` per watched table. The feed reads the log once
when it starts (to know who sits where, for redaction), then follows the table live from there
and hands each batch to every watcher's backlog: the batch is decoded once, and each event is
redacted once per viewer seat however many watch it (a spectator's copy is every spectator's).
The last watcher to leave stops the feed (its consumer goes with it).

A stream that asks for events from an older version than the feed has reached reads the log up
to the point where it joined the feed (``join_position``, taken in the same step as it joined,
so the feed's batches after it are in its backlog), then its backlog: no gap and no event twice.

Bounds: a caller (token subject) may hold ``max_streams_per_caller`` streams open in this
process (one more is RESOURCE_EXHAUSTED); a stream whose backlog reaches ``backlog`` batches
(its client stopped reading, so gRPC's flow control stopped the handler) is cut off: its backlog
is dropped at once and the stream ends RESOURCE_EXHAUSTED with the version it got to, to watch
again from there. The batches in backlogs are shared objects, so a table's memory is bounded by
its watchers times ``backlog`` references, not copies.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

import structlog

from poker.dealer.errors import FeedInterrupted, StreamTooSlow, TooManyStreams
from poker.dealer.metrics import DealerMetrics
from poker.dealer.redaction import SeatTracker, redact_event
from poker.eventstore.api import Record
from poker.tablelog.feed import TableFeed
from poker.tablelog.repository import decode_batch
from poker.v1 import events_pb2 as pb

_log = structlog.get_logger(__name__)

#: Reads a table's log from its first record up to its last one now, each record's seal checked
#: (TableRepository.read).
LogReader = Callable[[str], AsyncIterator[Record]]
#: Raises unless a trusted writer sealed the record there, after the record at the position
#: given (TableRepository.check_record): followed records are checked as read ones are.
RecordCheck = Callable[[Record, int], None]
#: The batch of a checked record, its secrets back (the dealer's deck keys).
BatchOpener = Callable[[Record], pb.TableEventBatch]

DEFAULT_BACKLOG: Final = 256
DEFAULT_MAX_STREAMS_PER_CALLER: Final = 8


def _seat_of(players: Mapping[int, str], viewer: str | None) -> int | None:
    if viewer is None:
        return None
    return next((seat for seat, player in players.items() if player == viewer), None)


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event as the feed fanned it out: with who sat where right after it (a mapping shared
    by the events between two seat changes), and its redacted copies by viewer seat."""

    event: pb.TableEvent
    players: Mapping[int, str]
    _copies: dict[int | None, pb.TableEvent] = field(default_factory=dict)

    def seen_by(self, viewer: str | None) -> pb.TableEvent:
        """The event as ``viewer`` (a player id; None: spectators) may see it, redacted once
        per seat."""
        seat = _seat_of(self.players, viewer)
        copy = self._copies.get(seat)
        if copy is None:
            copy = self._copies[seat] = redact_event(self.event, seat)
        return copy


@dataclass(frozen=True, slots=True)
class FeedBatch:
    """One record of the log, decoded: its events in order."""

    position: int
    events: tuple[FeedEvent, ...]


class _Ending:
    """Why a watcher's stream ends after its backlog (None: it goes on)."""

    CLOSED = "closed"  # the table closed
    SLOW = "slow"  # the backlog overflowed
    FAILED = "failed"  # the feed broke off


class _Watcher:
    """One WatchTable stream's place in a feed: its backlog, and why it ends, if it does."""

    __slots__ = ("backlog", "ending", "limit", "wake")

    def __init__(self, limit: int) -> None:
        self.backlog: deque[FeedBatch] = deque()
        self.limit = limit
        self.wake = asyncio.Event()
        self.ending: str | None = None

    def offer(self, batch: FeedBatch) -> bool:
        """Queue ``batch``; False (nothing queued) when the backlog is full."""
        if len(self.backlog) >= self.limit:
            return False
        self.backlog.append(batch)
        self.wake.set()
        return True

    def end(self, reason: str, *, drop_backlog: bool = False) -> None:
        """End the stream once it has read its backlog (at once, with ``drop_backlog``)."""
        if self.ending is None:
            self.ending = reason
        if drop_backlog:
            self.backlog.clear()
        self.wake.set()


class _SharedFeed:
    """Every watcher of one table in this process, fed by one follower task."""

    def __init__(self, hub: WatchHub, table_id: str) -> None:
        self.hub = hub
        self.table_id = table_id
        self.watchers: set[_Watcher] = set()
        self.pending = 0  # joiners waiting for the feed to be ready
        self.position = 0  # the last record fanned out (or read at the start)
        self.version = 0  # the version of its last event
        self.closed = False
        self._seats = SeatTracker()
        self._players: Mapping[int, str] = {}
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self._run(), name=f"watch-feed-{table_id}")

    async def _run(self) -> None:
        try:
            await self._read_start()
        except Exception as error:
            self._fail(error, starting=True)
            return
        self.ready.set_result(None)
        if self.closed:
            return
        try:
            async for record in self.hub.feed.follow(self.table_id, self.position):
                # A forged or misplaced record breaks the feed (its streams end UNAVAILABLE),
                # never reaches a watcher: the rebuild refuses it the same way.
                self.hub.check(record, self.position)
                self._fan_out(self._decode(record))
                if self.closed:
                    break
        except Exception as error:
            self._fail(error, starting=False)
            return
        for watcher in self.watchers:
            watcher.end(_Ending.CLOSED)

    async def _read_start(self) -> None:
        """Who sits where up to the last record now: the point the follower starts after."""
        async for record in self.hub.read(self.table_id):
            for event in self.hub.open_batch(record).events:
                self._track(event)
            self.position = record.position

    def _track(self, event: pb.TableEvent) -> None:
        """Follow one event: the seats, the version, the close."""
        body = event.WhichOneof("body")
        self._seats.apply(event)
        if body in ("player_seated", "player_cashed_out"):
            self._players = dict(self._seats.players)  # a new mapping: older events keep theirs
        elif body == "table_closed":
            self.closed = True
        self.version = max(self.version, event.version)

    def _decode(self, record: Record) -> FeedBatch:
        events = []
        for event in self.hub.open_batch(record).events:
            self._track(event)
            events.append(FeedEvent(event, self._players))
        self.position = record.position
        return FeedBatch(record.position, tuple(events))

    def _fan_out(self, batch: FeedBatch) -> None:
        for watcher in list(self.watchers):
            if not watcher.offer(batch):
                self._cut_off(watcher)

    def _cut_off(self, watcher: _Watcher) -> None:
        """A watcher too far behind: out of the feed, its backlog freed now."""
        self.watchers.discard(watcher)
        watcher.end(_Ending.SLOW, drop_backlog=True)
        self.hub.metrics.watchers_dropped.labels(reason="slow").inc()
        _log.info("watcher_cut_off", table_id=self.table_id, backlog=watcher.limit)
        self.stop_if_unwatched()

    def _fail(self, error: Exception, *, starting: bool) -> None:
        _log.warning("watch_feed_failed", table_id=self.table_id, error=repr(error))
        self.hub.forget(self)
        if starting:
            self.ready.set_exception(
                FeedInterrupted("The table's events cannot be read right now.")
            )
            self.ready.exception()  # retrieved: joiners get it from the future themselves
        for watcher in self.watchers:
            self.hub.metrics.watchers_dropped.labels(reason="feed_failed").inc()
            watcher.end(_Ending.FAILED)

    def stop_if_unwatched(self) -> None:
        """Stop following once nobody watches or waits to."""
        if self.watchers or self.pending:
            return
        self.hub.forget(self)
        self.task.cancel()


class WatchHub:
    """WatchTable's streams of one dealer process; see the module docstring."""

    def __init__(
        self,
        feed: TableFeed,
        read: LogReader,
        metrics: DealerMetrics,
        *,
        check: RecordCheck,
        open_batch: BatchOpener = decode_batch,
        backlog: int = DEFAULT_BACKLOG,
        max_streams_per_caller: int = DEFAULT_MAX_STREAMS_PER_CALLER,
    ) -> None:
        self.feed = feed
        self.read = read
        self.check = check
        self.open_batch = open_batch
        self.metrics = metrics
        self.backlog = backlog
        self.max_streams_per_caller = max_streams_per_caller
        self._feeds: dict[str, _SharedFeed] = {}
        self._streams: Counter[str] = Counter()

    def forget(self, feed: _SharedFeed) -> None:
        """Take ``feed`` out of the hub (it stopped or failed); the next watcher starts anew."""
        if self._feeds.get(feed.table_id) is feed:
            del self._feeds[feed.table_id]
            self.metrics.watch_feeds.set(len(self._feeds))

    def backlogs(self, table_id: str) -> list[int]:
        """The backlog length of every watcher of ``table_id`` (tests, diagnostics)."""
        feed = self._feeds.get(table_id)
        return [] if feed is None else [len(w.backlog) for w in feed.watchers]

    def feeds(self) -> int:
        """How many tables are followed now (one NATS consumer each)."""
        return len(self._feeds)

    async def close(self) -> None:
        """Stop every feed (the process stops); their streams end as if the feed broke."""
        feeds = list(self._feeds.values())
        self._feeds.clear()
        self.metrics.watch_feeds.set(0)
        for feed in feeds:
            feed.task.cancel()
            for watcher in feed.watchers:
                watcher.end(_Ending.FAILED)
        for feed in feeds:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await feed.task

    async def watch(
        self, table_id: str, from_version: int, viewer: str | None, caller: str
    ) -> AsyncGenerator[pb.TableEvent, None]:
        """The table's events after ``from_version``, then each new one, as ``viewer`` may see
        them; ends after the table closes. ``caller`` (the token's subject) is what the stream
        cap counts."""
        if self._streams[caller] >= self.max_streams_per_caller:
            self.metrics.watch_refused.inc()
            raise TooManyStreams(
                f"You have {self.max_streams_per_caller} WatchTable streams open, the most one "
                "caller may; close one before opening another."
            )
        self._streams[caller] += 1
        self.metrics.watchers.inc()
        try:
            # aclosing: a stream closed from outside unwinds its feed place now, not when
            # the garbage collector gets to it.
            async with contextlib.aclosing(self._watch(table_id, from_version, viewer)) as events:
                async for event in events:
                    yield event
        finally:
            self.metrics.watchers.dec()
            self._streams[caller] -= 1
            if self._streams[caller] <= 0:
                del self._streams[caller]

    async def _join(self, table_id: str) -> tuple[_SharedFeed, _Watcher, int, int]:
        """Join the table's feed (started if need be): the feed, this stream's watcher, and
        the position and version the feed had reached when the watcher joined."""
        feed = self._feeds.get(table_id)
        if feed is None:
            feed = self._feeds[table_id] = _SharedFeed(self, table_id)
            self.metrics.watch_feeds.set(len(self._feeds))
        feed.pending += 1
        try:
            await asyncio.shield(feed.ready)
        finally:
            feed.pending -= 1
            if feed.ready.cancelled() or not feed.ready.done():
                feed.stop_if_unwatched()
        # No await from here on: the watcher gets every batch after feed.position.
        watcher = _Watcher(self.backlog)
        if feed.closed:
            watcher.end(_Ending.CLOSED)
        else:
            feed.watchers.add(watcher)
        return feed, watcher, feed.position, feed.version

    async def _watch(
        self, table_id: str, from_version: int, viewer: str | None
    ) -> AsyncGenerator[pb.TableEvent, None]:
        feed, watcher, join_position, join_version = await self._join(table_id)
        last = from_version  # the last version this stream sent (or skipped)
        try:
            if from_version < join_version:
                catch_up = self._catch_up(table_id, from_version, join_position, viewer)
                async with contextlib.aclosing(catch_up) as events:
                    async for event in events:
                        last = event.version
                        yield event
                        if event.WhichOneof("body") == "table_closed":
                            return
            while True:
                while watcher.backlog:
                    for item in watcher.backlog.popleft().events:
                        if item.event.version <= last:
                            continue
                        last = item.event.version
                        yield item.seen_by(viewer)
                        if item.event.WhichOneof("body") == "table_closed":
                            return
                if watcher.ending is not None:
                    break
                watcher.wake.clear()
                await watcher.wake.wait()
        finally:
            feed.watchers.discard(watcher)
            feed.stop_if_unwatched()
        if watcher.ending == _Ending.SLOW:
            raise StreamTooSlow(
                f"This stream fell more than {self.backlog} batches behind the table and was "
                f"ended; watch again from version {last}."
            )
        if watcher.ending == _Ending.FAILED:
            raise FeedInterrupted(
                f"The table's event feed broke off; watch again from version {last}."
            )

    async def _catch_up(
        self, table_id: str, from_version: int, until_position: int, viewer: str | None
    ) -> AsyncGenerator[pb.TableEvent, None]:
        """The log's events after ``from_version`` up to record ``until_position``, redacted
        with this stream's own record of the seats (read from the start)."""
        seats = SeatTracker()
        records = self.read(table_id)
        try:
            async for record in records:
                if record.position > until_position:
                    break  # the backlog has it
                for event in self.open_batch(record).events:
                    seats.apply(event)
                    if event.version > from_version:
                        yield redact_event(event, seats.seat_of(viewer))
        finally:
            close = getattr(records, "aclose", None)
            if close is not None:  # the read's consumer goes now, not when collected
                await close()
