"""The dealer's timers: every table's wake fires once, in the order of their instants; a wake
replaced or cancelled never fires; one fired is the table's command, not a timer any more."""

from __future__ import annotations

import asyncio

from poker.dealer.clock import _HEAP_SLACK, TableTimers, Wake, now_ms


async def _timers() -> tuple[TableTimers, list[tuple[str, Wake]]]:
    fired: list[tuple[str, Wake]] = []

    async def fire(table_id: str, wake: Wake) -> None:
        fired.append((table_id, wake))

    return TableTimers(fire), fired


def _wake(version: int) -> Wake:
    return Wake("timeout", 0, version, seat=1)


async def test_wakes_fire_in_the_order_of_their_instants() -> None:
    timers, fired = await _timers()
    timers.retry_later("late", _wake(1), 0.06)
    timers.retry_later("early", _wake(2), 0.02)
    timers.retry_later("middle", _wake(3), 0.04)
    await asyncio.sleep(0.15)
    assert [table for table, _ in fired] == ["early", "middle", "late"]
    assert not any(timers.pending(table) for table in ("early", "middle", "late"))
    assert all(now_ms() >= wake.at for _, wake in fired)


async def test_a_replaced_wake_fires_only_as_the_new_one() -> None:
    timers, fired = await _timers()
    timers.retry_later("t1", _wake(1), 0.02)
    timers.retry_later("t1", _wake(2), 0.05)  # replaces the first: later, not earlier
    await asyncio.sleep(0.12)
    assert [wake.version for _, wake in fired] == [2]


async def test_an_earlier_wake_moves_the_one_timer_forward() -> None:
    timers, fired = await _timers()
    timers.retry_later("slow", _wake(1), 5.0)
    timers.retry_later("fast", _wake(2), 0.02)
    await asyncio.sleep(0.1)
    assert [table for table, _ in fired] == ["fast"]
    assert timers.pending("slow")
    await timers.close()
    assert not timers.pending("slow")


async def test_a_cancelled_wake_never_fires() -> None:
    timers, fired = await _timers()
    timers.retry_later("t1", _wake(1), 0.02)
    timers.retry_later("t2", _wake(2), 0.03)
    timers.cancel("t1")
    await asyncio.sleep(0.1)
    assert [table for table, _ in fired] == ["t2"]


async def test_many_replacements_keep_the_heap_bounded() -> None:
    timers, fired = await _timers()
    for version in range(5_000):
        timers.retry_later(f"t{version % 3}", _wake(version), 10.0)
    assert len(timers._heap) <= 2 * 3 + _HEAP_SLACK + 1  # stale entries are swept, not kept
    await timers.close()
    assert fired == []
