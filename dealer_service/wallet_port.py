"""The wallet, as the dealer needs it: hold a buy-in before seating, void a hold not used.

The dealer places a hold (hold id = the command id) before it appends PlayerSeated or
ChipsAdded; the wallet later posts the hold into the table's escrow when it sees that event
(ARCHITECTURE.md §4). A hold no seat ever claims expires after its TTL, so a dealer that dies
between the hold and the append loses nobody's money.

:class:`WalletPort` is the seam: the wallet service's gRPC client will implement it. Until then,
:class:`InMemoryWallet` (balances, for unit tests) and :class:`DevWallet` (grants every hold:
local runs and integration tests of the dealer alone) stand in.

>>> import asyncio
>>> wallet = InMemoryWallet({"ann": 500})
>>> asyncio.run(wallet.place_hold("ann", 200, hold_id="c1", ttl_s=60, table_id="t1"))
>>> asyncio.run(wallet.place_hold("ann", 200, hold_id="c1", ttl_s=60, table_id="t1"))  # a retry
>>> wallet.available("ann")
300
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import structlog

from servicekit.errors import RuleViolation, Unavailable

_log = structlog.get_logger(__name__)


class InsufficientFunds(RuleViolation):
    """The player's available balance does not cover the hold (FAILED_PRECONDITION)."""


class WalletUnavailable(Unavailable):
    """The wallet did not answer; the hold may or may not exist (it expires if unused)."""


class WalletPort(Protocol):
    """What the dealer asks of the wallet. Both calls are idempotent per ``hold_id``."""

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> None:
        """Reserve ``amount`` of ``player_id``'s money for ``table_id`` under ``hold_id``.

        Raises :class:`InsufficientFunds` or :class:`WalletUnavailable`. Placing the same hold
        again changes nothing.
        """
        ...

    async def void_hold(self, player_id: str, hold_id: str) -> None:
        """Release a hold the dealer will not use; unknown or spent holds are ignored."""
        ...


@dataclass(slots=True)
class _Hold:
    player_id: str
    amount: int
    table_id: str


class InMemoryWallet:
    """A wallet of balances in a dict: holds reduce the available balance (unit tests)."""

    def __init__(self, balances: dict[str, int] | None = None) -> None:
        self._balances = dict(balances or {})
        self.holds: dict[str, _Hold] = {}
        self.voided: list[str] = []

    def available(self, player_id: str) -> int:
        """The balance not held."""
        held = sum(hold.amount for hold in self.holds.values() if hold.player_id == player_id)
        return self._balances.get(player_id, 0) - held

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> None:
        """See :meth:`WalletPort.place_hold`."""
        if hold_id in self.holds:
            return
        if amount > self.available(player_id):
            raise InsufficientFunds("Your balance does not cover this buy-in.")
        self.holds[hold_id] = _Hold(player_id, amount, table_id)

    async def void_hold(self, player_id: str, hold_id: str) -> None:
        """See :meth:`WalletPort.void_hold`."""
        if self.holds.pop(hold_id, None) is not None:
            self.voided.append(hold_id)


class DevWallet:
    """Grants every hold without funds: play money for local runs, never a real deployment."""

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> None:
        """See :meth:`WalletPort.place_hold`."""
        _log.debug("dev_hold_granted", player_id=player_id, amount=amount, hold_id=hold_id)

    async def void_hold(self, player_id: str, hold_id: str) -> None:
        """See :meth:`WalletPort.void_hold`."""
        _log.debug("dev_hold_voided", player_id=player_id, hold_id=hold_id)
