"""One writer at a time: the wallet lease, and a standby process that takes over.

Every wallet process runs :class:`Leadership`: it tries to take the ``wallet`` lease, and retries
every ``poll_s`` while another process holds it (the standby). The holder renews it in the
background (:class:`~poker.eventstore.leases.LeaseKeeper`); if it is lost (a pause, a partition),
the process steps down at once and becomes a standby again. The lease keeps two wallets from
writing at the same time in the normal case; the journal's expected-position check keeps even
a paused ex-holder from writing over its successor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

from poker.eventstore.api import StoreUnavailable
from poker.eventstore.leases import LeaseKeeper, LeaseStore
from poker.servicekit import flags
from poker.servicekit.background import BackgroundTask

_log = structlog.get_logger(__name__)

#: The lease's name in the wallet's lease bucket.
WALLET_LEASE = "wallet"

Hook = Callable[[], Awaitable[None]]


class Leadership:
    """Runs ``on_elected`` when this process takes the lease, ``on_deposed`` when it loses it."""

    def __init__(
        self,
        leases: LeaseStore,
        owner_id: str,
        *,
        on_elected: Hook,
        on_deposed: Hook,
        poll_s: float = flags.STANDBY_POLL.default,
    ) -> None:
        self._leases = leases
        self.owner_id = owner_id
        self._on_elected = on_elected
        self._on_deposed = on_deposed
        self._poll_s = poll_s
        self._keeper: LeaseKeeper | None = None
        self._task = BackgroundTask(self._run, name="wallet-leadership")
        #: Set while this process leads (tests and the composition root wait on it).
        self.leading = asyncio.Event()

    def start(self) -> None:
        """Campaign in the background."""
        self._task.start()

    async def stop(self, *, release: bool = True) -> None:
        """Stop campaigning; step down (and release the lease, unless simulating a crash)."""
        await self._task.stop()
        if self.leading.is_set():
            await self._step_down()
        if self._keeper is not None:
            await self._keeper.stop(release=release)
            self._keeper = None

    async def _run(self) -> None:
        while True:
            keeper = await self._campaign()
            self._keeper = keeper
            try:
                await self._on_elected()
            except Exception:
                _log.exception("wallet_takeover_failed")
                await keeper.stop(release=True)
                await asyncio.sleep(self._poll_s)
                continue
            self.leading.set()
            _log.info("wallet_leading", owner=self.owner_id)
            await keeper.lost.wait()
            _log.warning("wallet_lease_lost", owner=self.owner_id)
            await self._step_down()

    async def _campaign(self) -> LeaseKeeper:
        """Wait until the lease is ours; the standby's loop."""
        announced = False
        while True:
            try:
                lease = await self._leases.acquire(WALLET_LEASE, self.owner_id)
            except StoreUnavailable as error:
                _log.warning("wallet_lease_unavailable", error=str(error))
                lease = None
            if lease is not None:
                keeper = LeaseKeeper(self._leases, lease)
                keeper.start()
                return keeper
            if not announced:
                _log.info("wallet_standby", owner=self.owner_id)
                announced = True
            await asyncio.sleep(self._poll_s)

    async def _step_down(self) -> None:
        self.leading.clear()
        try:
            await self._on_deposed()
        except Exception:
            _log.exception("wallet_step_down_failed")
