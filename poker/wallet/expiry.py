"""The hold-expiry timer: the leader releases every hold past its deadline, every
``--expiry-interval`` seconds of the service clock.

A hold the sweep missed (three sweeps and a second past its deadline) is the audit's finding
(:class:`~poker.wallet.grpc_api.WalletServicer`'s ``hold_overdue_ms``).
"""

from __future__ import annotations

import asyncio

import structlog

from poker.servicekit.background import BackgroundTask
from poker.wallet.book import LedgerBook
from poker.wallet.ledger import ExpireHolds

_log = structlog.get_logger(__name__)


class HoldExpiry:
    """Runs ``ExpireHolds`` every ``interval_s`` from the service clock."""

    def __init__(self, book: LedgerBook, interval_s: float) -> None:
        self._book = book
        self._interval_s = interval_s
        self._task = BackgroundTask(self._run, name="hold-expiry")

    def start(self) -> None:
        """Sweep in the background until :meth:`stop`."""
        self._task.start()

    async def stop(self) -> None:
        """Stop sweeping."""
        await self._task.stop()

    async def sweep(self) -> int:
        """One sweep; returns the holds expired."""
        events = await self._book.execute([ExpireHolds(self._book.clock())])
        return len(events)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                expired = await self.sweep()
            except Exception as error:  # a refusal or the store: the next sweep retries
                _log.warning("hold_expiry_failed", error=repr(error))
                continue
            if expired:
                _log.info("holds_expired", count=expired)
