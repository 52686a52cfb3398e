"""Time at the tables: the action deadline (TimeOut) and the pause between hands (next hand).

Both instants are recorded in the log (ActionRequested carries the deadline, NextHandScheduled
the end of the pause), so :func:`next_wake` derives the table's next timed step from its state
alone, the same after a restart as before it. :class:`TableTimers` keeps one sleeping task per
table and re-arms it after every change.

>>> from engine.betting import Stakes, Structure
>>> from engine.table import CreateTable, SitDown, execute, make_config
>>> table, _ = execute(None, CreateTable(make_config("holdem", Structure.NO_LIMIT,
...     Stakes(1, 2), pause_between_hands_ms=500), now=0))
>>> next_wake(table) is None  # nobody to deal to
True
>>> table, _ = execute(table, SitDown(1, "ann", 100, "h1", now=1))
>>> table, _ = execute(table, SitDown(2, "bob", 100, "h2", now=2))
>>> next_wake(table)
Wake(kind='start', at=0, version=3, seat=0)
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Literal, NamedTuple

import structlog

from engine.table import TableState, who_can_play

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
    """One timer per table; :meth:`arm` replaces the table's timer with its next wake."""

    def __init__(self, fire: WakeHandler, clock_ms: Callable[[], int] = now_ms) -> None:
        self._fire = fire
        self._clock_ms = clock_ms
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def arm(self, table_id: str, state: TableState | None) -> None:
        """Schedule ``state``'s next wake (cancelling the previous one)."""
        self.cancel(table_id)
        wake = next_wake(state)
        if wake is not None:
            self._tasks[table_id] = asyncio.create_task(
                self._sleep_then_fire(table_id, wake), name=f"timer-{table_id}"
            )

    def retry_later(self, table_id: str, wake: Wake, delay_s: float) -> None:
        """Fire ``wake`` again after ``delay_s`` (a step refused for clock skew)."""
        self.cancel(table_id)
        retry = wake._replace(at=self._clock_ms() + int(delay_s * 1000))
        self._tasks[table_id] = asyncio.create_task(
            self._sleep_then_fire(table_id, retry), name=f"timer-{table_id}"
        )

    def cancel(self, table_id: str) -> None:
        """Stop the table's timer, if any."""
        task = self._tasks.pop(table_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def pending(self, table_id: str) -> bool:
        """Whether the table has a timer armed (tests)."""
        return table_id in self._tasks

    async def close(self) -> None:
        """Cancel every timer and wait for them to end."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _sleep_then_fire(self, table_id: str, wake: Wake) -> None:
        delay = (wake.at - self._clock_ms()) / 1000 + _MARGIN_S
        if delay > 0:
            await asyncio.sleep(delay)
        # From here on the task is the table's command, not a timer: arm() must not cancel it.
        if self._tasks.get(table_id) is asyncio.current_task():
            del self._tasks[table_id]
        try:
            await self._fire(table_id, wake)
        except Exception:
            _log.exception("timer_failed", table_id=table_id, kind=wake.kind)
