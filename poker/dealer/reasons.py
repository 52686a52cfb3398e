"""The stable reason of every rule error the engine raises, for the edge's ErrorInfo.

The engine's errors are plain Python and know nothing of the API; the dealer's edge gives each
class its reason here, in one table (``docs/api-errors.md`` lists them). A class not listed
takes its nearest listed base's reason: ``tests/unit/test_error_reasons.py`` keeps every class
listed and every reason distinct. Renaming a reason breaks clients: add, never rename.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from poker.engine.hand import errors as hand
from poker.engine.hand.draws import InvalidDiscard
from poker.engine.table import errors as table

#: The hand machine's rule errors (FAILED_PRECONDITION).
HAND_REASONS: Final[Mapping[type[BaseException], str]] = {
    hand.HandRuleError: "HAND_RULE_VIOLATED",
    hand.InvalidHandSetup: "INVALID_HAND_SETUP",
    hand.TooFewPlayers: "TOO_FEW_PLAYERS",
    hand.InvalidDeck: "INVALID_DECK",
    hand.HandAlreadyStarted: "HAND_ALREADY_STARTED",
    hand.HandNotRunning: "HAND_NOT_RUNNING",
    hand.UnknownSeat: "SEAT_NOT_IN_HAND",
    hand.NotYourTurn: "NOT_YOUR_TURN",
    hand.IllegalAction: "ILLEGAL_ACTION",
    hand.InvalidAmount: "INVALID_AMOUNT",
    hand.TimeNotUp: "TIME_NOT_UP",
    InvalidDiscard: "INVALID_DISCARD",
}

#: The table's rule errors (FAILED_PRECONDITION; NOT_YOUR_SEAT is PERMISSION_DENIED).
TABLE_REASONS: Final[Mapping[type[BaseException], str]] = {
    table.TableRuleError: "TABLE_RULE_VIOLATED",
    table.InvalidTableConfig: "INVALID_TABLE_CONFIG",
    table.TableNotOpen: "TABLE_NOT_OPEN",
    table.TableAlreadyExists: "TABLE_ALREADY_EXISTS",
    table.InvalidRequest: "INVALID_TABLE_COMMAND",
    table.NoSuchSeat: "NO_SUCH_SEAT",
    table.SeatTaken: "SEAT_TAKEN",
    table.AlreadySeated: "ALREADY_SEATED",
    table.BuyInOutOfRange: "BUY_IN_OUT_OF_RANGE",
    table.EmptySeat: "SEAT_EMPTY",
    table.NotYourSeat: "NOT_YOUR_SEAT",
    table.HandInProgress: "HAND_IN_PROGRESS",
    table.NoHandRunning: "NO_HAND_RUNNING",
    table.NotEnoughPlayers: "NOT_ENOUGH_PLAYERS",
    table.TooEarly: "TOO_EARLY",
    table.SeatStateError: "SEAT_STATE_CONFLICT",
}

#: Every engine error class's reason.
ENGINE_REASONS: Final[Mapping[type[BaseException], str]] = {**HAND_REASONS, **TABLE_REASONS}

__all__ = ["ENGINE_REASONS", "HAND_REASONS", "TABLE_REASONS"]
