"""Time at the tables: the action deadline (TimeOut) and the pause between hands (next hand).

Both instants are recorded in the log (ActionRequested carries the deadline, NextHandScheduled
the end of the pause, or of the gathering delay before a new game's first hand), so
:func:`next_wake` derives the table's next timed step from its state alone, the same after a
restart as before it. :class:`TableTimers` keeps each table's next wake, re-armed after every
change, under one event loop timer for them all.

>>> from poker.engine.betting import Stakes, Structure
>>> from poker.engine.table import CreateTable, SitDown, execute, make_config
>>> table, _ = execute(None, CreateTable(make_config("holdem", Structure.NO_LIMIT,
...     Stakes(1, 2), pause_between_hands_ms=500), now=0))
>>> next_wake(table) is None  # nobody to deal to
True
>>> table, _ = execute(table, SitDown(1, "ann", 100, "h1", now=1))
>>> table, _ = execute(table, SitDown(2, "bob", 100, "h2", now=2))
>>> next_wake(table)  # the gathering delay (by default the pause): others may still sit down
Wake(kind='start', at=502, version=4, seat=0)
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Literal, NamedTuple

import structlog

from poker.engine.table import TableState, who_can_play

_log = structlog.get_logger(__name__)

#: Wake a little after the instant, so the engine's own check (now >= deadline) holds.
_MARGIN_S = 0.005
#: Stale heap entries tolerated beyond twice the armed wakes before the heap is rebuilt.
_HEAP_SLACK = 1024


def now_ms() -> int:
    """The wall clock in unix milliseconds: the one place the dealer reads the time."""
    return time.time_ns() // 1_000_000


class Wake(NamedTuple):
    """The table's next timed step: ``kind`` at unix ms ``at``, decided on ``version``."""

    kind: Literal["timeout", "start"]
    at: int
    version: int
    seat: int = 0


def next_wake(state: TableState | None) -> Wake | None:
    """The next timed step of the table, or None while it waits for a player."""
    if state is None or state.closed:
        return None
    hand = state.hand
    if state.hand_running:
        assert hand is not None
        seat = hand.seat_to_act
        return None if seat is None else Wake("timeout", hand.deadline, state.version, seat)
    if len(who_can_play(state)) < 2:
        return None
    return Wake("start", state.next_hand_at, state.version)


WakeHandler = Callable[[str, Wake], Awaitable[None]]


class TableTimers:
    """The tables' next wakes; :meth:`arm` replaces a table's wake with its next one.

    One event loop handle serves every table: the armed wakes sit in a heap ordered by their
    instant, and the handle is set for the earliest. Arming after a command pushes one tuple
    (compared in C) and moves the handle only when the new wake comes first (a new turn's
    deadline is seconds away: it rarely does); the entry of a wake replaced or cancelled stays
    in the heap and is skipped when it surfaces. A handle per table instead cost a cancel, a
    new ``TimerHandle`` and a heap push compared in Python for every command (arming was
    2.3-3.0 % of the dealer's samples at 10 and 100 tables, 1.4-2.3 % since). At 2,000 tables
    the sweep of stale entries runs every 3 s or so and takes 2-3 ms there (its tuples can
    set the garbage collector off), measured once over a 30 s human-pace run: 10 sweeps, 23 ms.
    When a wake is due, a task runs it; from then on it is the table's command, not a timer
    (:meth:`arm` and :meth:`cancel` no longer touch it).
    """

    def __init__(self, fire: WakeHandler, clock_ms: Callable[[], int] = now_ms) -> None:
        self._fire = fire
        self._clock_ms = clock_ms
        self._armed: dict[str, Wake] = {}  # the one live wake per table
        self._heap: list[tuple[int, int, str, Wake]] = []  # (at, order, table, wake); stale too
        self._order = itertools.count()
        self._handle: asyncio.TimerHandle | None = None
        self._handle_at: int | None = None  # the instant (unix ms) the handle is set for
        self._firing: set[asyncio.Task[None]] = set()  # wakes being handled (kept referenced)

    def arm(self, table_id: str, state: TableState | None) -> None:
        """Schedule ``state``'s next wake (replacing the previous one)."""
        wake = next_wake(state)
        if wake is None:
            self._armed.pop(table_id, None)
        else:
            self._put(table_id, wake)

    def retry_later(self, table_id: str, wake: Wake, delay_s: float) -> None:
        """Fire ``wake`` again after ``delay_s`` (a step refused for clock skew)."""
        self._put(table_id, wake._replace(at=self._clock_ms() + int(delay_s * 1000)))

    def cancel(self, table_id: str) -> None:
        """Stop the table's timer, if any."""
        self._armed.pop(table_id, None)

    def pending(self, table_id: str) -> bool:
        """Whether the table has a timer armed (tests)."""
        return table_id in self._armed

    async def close(self) -> None:
        """Cancel every timer (wakes already being handled run to their end)."""
        if self._handle is not None:
            self._handle.cancel()
        self._handle = self._handle_at = None
        self._armed.clear()
        self._heap.clear()

    def _put(self, table_id: str, wake: Wake) -> None:
        self._armed[table_id] = wake
        heap = self._heap
        heapq.heappush(heap, (wake.at, next(self._order), table_id, wake))
        if len(heap) > 2 * len(self._armed) + _HEAP_SLACK:  # mostly stale: rebuild it
            heap[:] = [(w.at, next(self._order), t, w) for t, w in self._armed.items()]
            heapq.heapify(heap)
        if self._handle_at is None or wake.at < self._handle_at:
            self._set_handle(wake.at)

    def _set_handle(self, at: int) -> None:
        if self._handle is not None:
            self._handle.cancel()
        loop = asyncio.get_running_loop()
        delay = (at - self._clock_ms()) / 1000 + _MARGIN_S
        self._handle = loop.call_at(loop.time() + max(delay, 0.0), self._due)
        self._handle_at = at

    def _due(self) -> None:
        """Run every wake due (each in its task), then set the handle for the next one."""
        self._handle = self._handle_at = None
        now = self._clock_ms()
        heap, armed = self._heap, self._armed
        while heap:
            at, _, table_id, wake = heap[0]
            if armed.get(table_id) is not wake:
                heapq.heappop(heap)  # replaced or cancelled since
            elif at <= now:
                heapq.heappop(heap)
                del armed[table_id]
                self._start(table_id, wake)
            else:
                self._set_handle(at)
                return

    def _start(self, table_id: str, wake: Wake) -> None:
        task = asyncio.get_running_loop().create_task(
            self._run(table_id, wake), name=f"timer-{table_id}"
        )
        self._firing.add(task)
        task.add_done_callback(self._firing.discard)

    async def _run(self, table_id: str, wake: Wake) -> None:
        try:
            await self._fire(table_id, wake)
        except Exception:
            _log.exception("timer_failed", table_id=table_id, kind=wake.kind)
