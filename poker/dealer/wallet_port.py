"""The wallet, as the dealer needs it: hold a buy-in before seating, void a hold not used.

The dealer places a hold (hold id = the command id) before it appends PlayerSeated or
ChipsAdded; the wallet later posts the hold into the table's escrow when it sees that event
(ARCHITECTURE.md §4). A hold no seat ever claims expires after its TTL, so a dealer that dies
between the hold and the append loses nobody's money.

:class:`WalletPort` is the seam: the wallet service's gRPC client will implement it. Until then,
:class:`InMemoryWallet` (balances, for unit tests) and :class:`DevWallet` (grants every hold:
local runs and integration tests of the dealer alone) stand in.

The wallet answers a hold with what it holds (:class:`HeldFunds`); the dealer seats a player
only against an **open** hold of that player, table and amount (:func:`verify_open_hold`): a
hold that was posted, voided or expired already paid for something, or for nothing, and never
buys a second seat.

>>> import asyncio
>>> wallet = InMemoryWallet({"ann": 500})
>>> asyncio.run(wallet.place_hold("ann", 200, hold_id="c1", ttl_s=60, table_id="t1")).state
<HoldState.OPEN: 'open'>
>>> asyncio.run(wallet.place_hold("ann", 200, hold_id="c1", ttl_s=60, table_id="t1")).amount
200
>>> wallet.available("ann")
300
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

import structlog

from poker.servicekit.errors import RuleViolation, Unavailable

_log = structlog.get_logger(__name__)


class InsufficientFunds(RuleViolation):
    """The player's available balance does not cover the hold (FAILED_PRECONDITION)."""

    REASON = "INSUFFICIENT_FUNDS"


class WalletUnavailable(Unavailable):
    """The wallet did not answer; the hold may or may not exist (it expires if unused)."""

    REASON = "WALLET_UNAVAILABLE"


class HoldRefused(RuleViolation):
    """The wallet's hold does not pay for this seat (FAILED_PRECONDITION): not open, or not of
    this player, table and amount."""

    REASON = "HOLD_REFUSED"


class HoldState(enum.Enum):
    """Where a hold is in its life, as the wallet says."""

    OPEN = "open"  # placed, not yet posted to a table's escrow: it may pay for one seat
    POSTED = "posted"
    VOIDED = "voided"
    EXPIRED = "expired"
    UNKNOWN = "unknown"  # the wallet did not say: never trusted


@dataclass(frozen=True, slots=True)
class HeldFunds:
    """The wallet's answer to a hold: the hold it has under that id."""

    hold_id: str
    player_id: str
    table_id: str
    amount: int
    state: HoldState


def verify_open_hold(
    held: HeldFunds, *, hold_id: str, player_id: str, table_id: str, amount: int
) -> None:
    """Raise :class:`HoldRefused` unless ``held`` is the open hold ``hold_id`` of ``player_id``
    for ``amount`` at ``table_id``.

    >>> held = HeldFunds("c1", "ann", "t1", 200, HoldState.POSTED)
    >>> verify_open_hold(held, hold_id="c1", player_id="ann", table_id="t1", amount=200)
    Traceback (most recent call last):
    ...
    poker.dealer.wallet_port.HoldRefused: Hold c1 is posted, not open: it cannot pay for a seat.
    """
    if held.hold_id != hold_id:
        raise HoldRefused(f"The wallet answered hold {held.hold_id} for hold {hold_id}.")
    if held.state is not HoldState.OPEN:
        raise HoldRefused(
            f"Hold {held.hold_id} is {held.state.value}, not open: it cannot pay for a seat."
        )
    if (held.player_id, held.table_id, held.amount) != (player_id, table_id, amount):
        raise HoldRefused(
            f"Hold {held.hold_id} holds {held.amount} of player {held.player_id} for table "
            f"{held.table_id}, not {amount} of player {player_id} for table {table_id}."
        )


class WalletPort(Protocol):
    """What the dealer asks of the wallet. Both calls are idempotent per ``hold_id``."""

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> HeldFunds:
        """Reserve ``amount`` of ``player_id``'s money for ``table_id`` under ``hold_id``; the
        hold the wallet then has under ``hold_id`` (the caller checks it with
        :func:`verify_open_hold`).

        Raises :class:`InsufficientFunds` or :class:`WalletUnavailable`. Placing the same hold
        again changes nothing (and answers the hold as it is now, posted or not).
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
    state: HoldState = HoldState.OPEN


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

    def post(self, hold_id: str) -> None:
        """Mark a hold posted, as the wallet does once the seat it paid for is in the log."""
        self.holds[hold_id].state = HoldState.POSTED

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> HeldFunds:
        """See :meth:`WalletPort.place_hold`."""
        hold = self.holds.get(hold_id)
        if hold is None:
            if amount > self.available(player_id):
                raise InsufficientFunds("Your balance does not cover this buy-in.")
            hold = self.holds[hold_id] = _Hold(player_id, amount, table_id)
        return HeldFunds(hold_id, hold.player_id, hold.table_id, hold.amount, hold.state)

    async def void_hold(self, player_id: str, hold_id: str) -> None:
        """See :meth:`WalletPort.void_hold`."""
        hold = self.holds.get(hold_id)
        if hold is not None and hold.state is HoldState.OPEN:
            del self.holds[hold_id]
            self.voided.append(hold_id)


class DevWallet:
    """Grants every hold without funds: play money for local runs, never a real deployment."""

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> HeldFunds:
        """See :meth:`WalletPort.place_hold`."""
        _log.debug("dev_hold_granted", player_id=player_id, amount=amount, hold_id=hold_id)
        return HeldFunds(hold_id, player_id, table_id, amount, HoldState.OPEN)

    async def void_hold(self, player_id: str, hold_id: str) -> None:
        """See :meth:`WalletPort.void_hold`."""
        _log.debug("dev_hold_voided", player_id=player_id, hold_id=hold_id)
