"""Time at the tables: the action deadline (TimeOut) and the pause between hands (next hand).

Both instants are recorded in the log (ActionRequested carries the deadline, NextHandScheduled
the end of the pause, or of the gathering delay before a new game's first hand), so
:func:`next_wake` derives the table's next timed step from its state alone, the same after a
restart as before it. :class:`TableTimers` keeps one timer per table and re-arms it after every
change.

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
import time
from collections.abc import Awaitable, Callable
from typing import Literal, NamedTuple

import structlog

from poker.engine.table import TableState, who_can_play

_log = structlog.get_logger(__name__)

#: Wake a little after the instant, so the engine's own check (now >= deadline) holds.
_MARGIN_S = 0.005


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
    """One timer per table; :meth:`arm` replaces the table's timer with its next wake.

    A timer is an event loop handle (``loop.call_at``), not a task: re-arming after every
    command cancels a handle and schedules another, with no task created, cancelled and woken
    up to die. When a wake is due, a task runs it; from then on it is the table's command, not
    a timer (:meth:`arm` and :meth:`cancel` no longer touch it).
    """

    def __init__(self, fire: WakeHandler, clock_ms: Callable[[], int] = now_ms) -> None:
        self._fire = fire
        self._clock_ms = clock_ms
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._firing: set[asyncio.Task[None]] = set()  # wakes being handled (kept referenced)

    def arm(self, table_id: str, state: TableState | None) -> None:
        """Schedule ``state``'s next wake (cancelling the previous one)."""
        handle = self._handles.pop(table_id, None)
        if handle is not None:
            handle.cancel()
        wake = next_wake(state)
        if wake is not None:
            self._schedule(table_id, wake)

    def retry_later(self, table_id: str, wake: Wake, delay_s: float) -> None:
        """Fire ``wake`` again after ``delay_s`` (a step refused for clock skew)."""
        self.cancel(table_id)
        self._schedule(table_id, wake._replace(at=self._clock_ms() + int(delay_s * 1000)))

    def cancel(self, table_id: str) -> None:
        """Stop the table's timer, if any."""
        handle = self._handles.pop(table_id, None)
        if handle is not None:
            handle.cancel()

    def pending(self, table_id: str) -> bool:
        """Whether the table has a timer armed (tests)."""
        return table_id in self._handles

    async def close(self) -> None:
        """Cancel every timer (wakes already being handled run to their end)."""
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()

    def _schedule(self, table_id: str, wake: Wake) -> None:
        loop = asyncio.get_running_loop()
        delay = (wake.at - self._clock_ms()) / 1000 + _MARGIN_S
        self._handles[table_id] = loop.call_at(
            loop.time() + max(delay, 0.0), self._due, table_id, wake
        )

    def _due(self, table_id: str, wake: Wake) -> None:
        self._handles.pop(table_id, None)
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
