"""Account names of the ledger: one string per account, ``<type>:<owner>[:<owner>]``.

=========================  ====================================================================
``cash:<player>``          The player's spendable money. Never negative.
``held:<player>``          The player's money reserved by open holds (buy-ins, top-ups in flight).
                           Equals the sum of the player's pending holds. Never negative.
``escrow:<table>:<player>`` The player's chips at a table. Never negative.
``house:rake``             The house's income from rake. Never negative.
``world:external``         The counter-account of deposits and withdrawals: money outside the
                           system. Its balance is minus the money inside the system.
=========================  ====================================================================

A posting's amount is signed: positive raises the account's balance, negative lowers it. Every
transaction's postings sum to zero, so all balances together always sum to zero, and the money
inside the system (every account but ``world:external``) is exactly deposits minus withdrawals.

Ids are 1-128 letters, digits, ``_`` or ``-``: no ``:`` can make two account names collide, and a
table id is also a valid event-store key.

>>> escrow_account("t1", "ann")
'escrow:t1:ann'
>>> parse_account("escrow:t1:ann")
Account(type='escrow', table_id='t1', player_id='ann')
>>> parse_account("cash:ann").player_id
'ann'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from poker.wallet.ledger.errors import InvalidCommand

CASH = "cash"
HELD = "held"
ESCROW = "escrow"
HOUSE_RAKE = "house:rake"
WORLD = "world:external"

_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
# A bounded memo of ids already checked. Process-local, and only ever answers "valid" for strings
# that matched the pattern, so it cannot change a decision (decide stays a pure function).
_VALID_IDS_KEPT = 1 << 16
_valid_ids: set[str] = set()


def verify_id(what: str, value: str) -> None:
    """Raise :class:`InvalidCommand` unless ``value`` is a valid id (1-128 of ``[A-Za-z0-9_-]``)."""
    if type(value) is str and value in _valid_ids:  # the same ids come back hand after hand
        return
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidCommand(
            f"{what} {value!r} is not a valid id: use 1-128 letters, digits, '-' and '_'."
        )
    if len(_valid_ids) >= _VALID_IDS_KEPT:
        _valid_ids.clear()
    _valid_ids.add(value)


def cash_account(player_id: str) -> str:
    """The spendable-cash account of ``player_id``."""
    return f"{CASH}:{player_id}"


def held_account(player_id: str) -> str:
    """The account holding ``player_id``'s reserved (held) cash."""
    return f"{HELD}:{player_id}"


def escrow_account(table_id: str, player_id: str) -> str:
    """The account of ``player_id``'s chips at ``table_id``."""
    return f"{ESCROW}:{table_id}:{player_id}"


@dataclass(frozen=True, slots=True)
class Account:
    """A parsed account name; ``table_id`` and ``player_id`` are empty where they do not apply."""

    type: str
    table_id: str = ""
    player_id: str = ""


def parse_account(name: str) -> Account:
    """Split an account name into its parts; raise :class:`InvalidCommand` if it is not one."""
    if name in (HOUSE_RAKE, WORLD):
        return Account(type=name)
    parts = name.split(":")
    if len(parts) == 2 and parts[0] in (CASH, HELD) and _ID.fullmatch(parts[1]):
        return Account(type=parts[0], player_id=parts[1])
    if (
        len(parts) == 3
        and parts[0] == ESCROW
        and _ID.fullmatch(parts[1])
        and _ID.fullmatch(parts[2])
    ):
        return Account(type=ESCROW, table_id=parts[1], player_id=parts[2])
    raise InvalidCommand(f"{name!r} is not an account name of this ledger.")


def must_stay_non_negative(name: str) -> bool:
    """Whether a balance below zero on ``name`` breaks an invariant (all but the world's)."""
    return name != WORLD
