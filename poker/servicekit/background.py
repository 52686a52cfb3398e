"""One named asyncio task a component runs in the background: ``start`` it (once), ``stop`` it
(cancel and wait), start it again.

>>> import asyncio
>>> async def demo() -> bool:
...     loop = BackgroundTask(lambda: asyncio.sleep(3600), name="demo")
...     loop.start()
...     running = loop.running
...     await loop.stop()
...     return running and not loop.running
>>> asyncio.run(demo())
True
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from poker.eventstore.tasks import cancel_and_wait


class BackgroundTask:
    """Runs ``run()`` as a task named ``name`` between :meth:`start` and :meth:`stop`."""

    def __init__(self, run: Callable[[], Coroutine[Any, Any, None]], *, name: str) -> None:
        self._run = run
        self._name = name
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether it was started and not stopped since."""
        return self._task is not None

    def start(self) -> None:
        """Start the task unless it is already started."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=self._name)

    async def stop(self) -> None:
        """Cancel the task and wait for it to end (:func:`~poker.eventstore.tasks.cancel_and_wait`:
        a dropped cancel is sent again); nothing if it is not started."""
        if self._task is not None:
            await cancel_and_wait(self._task)  # again if a cancel is dropped (3.11 wait_for)
            self._task = None
