"""The money limits: the most one transaction may move, one account may be brought to, and the
whole ledger may hold; and why they keep every sum inside int64.

Every amount the wallet serves is a protobuf ``int64``, and Python's integers never overflow, so
an overflow does not fail where it is made: it fails later, when a balance is serialized (before
these limits, ``Deposit(2**63 - 1)`` then ``Deposit(1)`` was written, and that player's
``GetBalance`` was INTERNAL for good). The limits are checked in ``decide`` before anything is
written, on the commands that bring money in or reserve it (Deposit, Withdraw, PlaceHold, the
buy-in of a seat and of a top-up), and refuse with a sentence (FAILED_PRECONDITION).

**Why no sum can leave int64.** Money enters only by Deposit and leaves only by Withdraw, and
every transaction sums to zero, so the money inside (every account but ``world:external``) is
``-balance(world:external)``, and no Deposit may take it past ``max_ledger_total``. Every account
but the world stays at or above zero (``decide`` guarantees it), so *any* sum of accounts inside
(a player's cash + held + escrows, a table's escrow, the house's rake, the rake report's totals,
which sum rake lines that sum to ``house:rake``) lies in ``[0, max_ledger_total]``, and the world
in ``[-max_ledger_total, 0]``. A hand's results only move money between a table's escrows and
the rake, so winnings never create any. ``max_ledger_total`` is at most :data:`TOTAL_CEILING`
(``2**62``), so even a sum of absolute values (the inside plus the world's mirror image, as an
external system summing postings might form) stays below ``2**63``. Per account and per
transaction are business limits below that: a deposit never brings a player's cash above
``max_account_balance`` (winnings may: refusing a cash-out would strand chips; the total
bound still holds), and no single deposit, withdrawal or hold moves more than
``max_transaction``.

>>> from poker.wallet.ledger import Deposit, execute
>>> limits = Limits(max_transaction=100, max_account_balance=150, max_ledger_total=10_000)
>>> state, _ = execute(LedgerState(), Deposit("ann", 100, "pay-1", now=0), limits)
>>> execute(state, Deposit("ann", 101, "pay-2", now=0), limits)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
poker.wallet.ledger.errors.LimitExceeded: a deposit of 101 is more than one transaction may ...
>>> execute(state, Deposit("ann", 60, "pay-3", now=0), limits)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
poker.wallet.ledger.errors.LimitExceeded: a deposit of 60 would bring player ann's cash to ...
>>> Limits(max_transaction=2_000, max_account_balance=1_000)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: the money limits must satisfy 0 < max_transaction (2000) <= max_account_balance ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from poker.wallet.ledger.accounts import WORLD, cash_account
from poker.wallet.ledger.errors import LimitExceeded
from poker.wallet.ledger.state import LedgerState

INT64_MAX: Final = 2**63 - 1
#: The highest ``max_ledger_total`` allowed: half of int64, so that even the sum of the money
#: inside and its mirror in ``world:external`` (taken as absolute values) fits.
TOTAL_CEILING: Final = 2**62

#: 10^10 minor units (100 million in a currency of cents) per deposit, withdrawal or hold.
DEFAULT_MAX_TRANSACTION: Final = 10**10
#: 10^12 minor units (10 billion in cents) that a deposit may bring one player's cash to.
DEFAULT_MAX_ACCOUNT_BALANCE: Final = 10**12
#: 10^18 minor units in the whole ledger (below TOTAL_CEILING, about 4.6 * 10^18).
DEFAULT_MAX_LEDGER_TOTAL: Final = 10**18


@dataclass(frozen=True, slots=True)
class Limits:
    """The wallet's money limits (settings ``--max-transaction``, ``--max-account-balance``,
    ``--max-ledger-total``); ValueError unless ``0 < max_transaction <= max_account_balance <=
    max_ledger_total <= 2**62``."""

    max_transaction: int = DEFAULT_MAX_TRANSACTION
    max_account_balance: int = DEFAULT_MAX_ACCOUNT_BALANCE
    max_ledger_total: int = DEFAULT_MAX_LEDGER_TOTAL

    def __post_init__(self) -> None:
        values = (self.max_transaction, self.max_account_balance, self.max_ledger_total)
        ordered = 0 < values[0] <= values[1] <= values[2] <= TOTAL_CEILING
        if not all(type(value) is int for value in values) or not ordered:
            raise ValueError(
                "the money limits must satisfy 0 < max_transaction "
                f"({self.max_transaction}) <= max_account_balance ({self.max_account_balance}) "
                f"<= max_ledger_total ({self.max_ledger_total}) <= 2**62"
            )


DEFAULT_LIMITS: Final = Limits()


def money_inside(state: LedgerState) -> int:
    """Deposits minus withdrawals: what every account but the world holds together."""
    return -state.balance(WORLD)


def verify_transaction_size(what: str, amount: int, limits: Limits) -> None:
    """Raise :class:`LimitExceeded` if one ``what`` of ``amount`` is above the per-transaction
    maximum."""
    if amount > limits.max_transaction:
        raise LimitExceeded(
            f"{what} of {amount} is more than one transaction may move ({limits.max_transaction} "
            "at most); nothing was moved."
        )


def verify_deposit_room(state: LedgerState, player_id: str, amount: int, limits: Limits) -> None:
    """Raise :class:`LimitExceeded` if depositing ``amount`` would take the player's cash above
    the per-account maximum, or the money in the whole ledger above its maximum."""
    cash = state.balance(cash_account(player_id))
    if cash + amount > limits.max_account_balance:
        raise LimitExceeded(
            f"a deposit of {amount} would bring player {player_id}'s cash to {cash + amount}, "
            f"above the most one account may hold ({limits.max_account_balance}); nothing was "
            "deposited."
        )
    inside = money_inside(state)
    if inside + amount > limits.max_ledger_total:
        raise LimitExceeded(
            f"a deposit of {amount} would bring the money in the wallet to {inside + amount}, "
            f"above its maximum ({limits.max_ledger_total}); nothing was deposited."
        )
