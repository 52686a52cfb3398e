"""Stopping a background task for sure: :func:`cancel_and_wait`.

One ``task.cancel()`` does not always end a task. On Python 3.11, ``asyncio.wait_for`` returns
its inner future's result when the cancel arrives after that future completed (the cancel is
dropped; 3.12 rewrote ``wait_for``), and nats-py waits for every request's reply that way: a
loop that sends requests (a takeover scan, a lease renewal, a consumer's fetch) and is cancelled
just as a reply lands runs on, and ``await task`` after one cancel waits forever. That stalled a
dealer's SIGTERM before its hand-off began (issue #14).

>>> import asyncio
>>> async def demo() -> bool:
...     task = asyncio.create_task(asyncio.sleep(3600))
...     await asyncio.sleep(0)
...     await cancel_and_wait(task)
...     return task.cancelled()
>>> asyncio.run(demo())
True
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

#: How long a cancelled task may take to end before it is cancelled again.
RECANCEL_AFTER_S: Final = 0.05


async def cancel_and_wait(
    task: asyncio.Task[Any], *, recancel_after_s: float = RECANCEL_AFTER_S
) -> None:
    """Cancel ``task`` and wait until it has ended, cancelling it again every
    ``recancel_after_s`` while it runs on (a cancel it dropped). An exception the task ended
    with (other than its cancellation) is raised here, as ``await task`` would."""
    task.cancel()
    while not task.done():
        await asyncio.wait({task}, timeout=recancel_after_s)
        if not task.done():
            task.cancel()  # the last one was dropped: ask again
    with contextlib.suppress(asyncio.CancelledError):
        await task
