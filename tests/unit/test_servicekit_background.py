"""poker.servicekit.background.BackgroundTask: start once, stop cancels and waits, restartable."""

from __future__ import annotations

import asyncio

from poker.servicekit.background import BackgroundTask


async def test_start_is_idempotent_and_stop_cancels() -> None:
    runs: list[int] = []
    cancelled = asyncio.Event()

    async def run() -> None:
        runs.append(1)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = BackgroundTask(run, name="t")
    await task.stop()  # not started: nothing
    task.start()
    task.start()
    await asyncio.sleep(0)
    assert task.running and runs == [1]
    await task.stop()
    assert cancelled.is_set() and not task.running
    task.start()
    await asyncio.sleep(0)
    assert runs == [1, 1]
    await task.stop()
