"""Rule errors of the table: each carries one sentence a player understands.

``decide`` raises them before producing any event, so a rejected command changes nothing. The
hand machine's own errors (:class:`poker.engine.hand.HandRuleError`) pass through unchanged for
commands that reach the hand. The services map both families to FAILED_PRECONDITION, except
:class:`NotYourSeat` (PERMISSION_DENIED).
"""

from __future__ import annotations


class TableRuleError(Exception):
    """A command breaks a rule of the table; ``str(error)`` is the sentence to show."""


class InvalidTableConfig(TableRuleError):
    """The configuration is not a table that can be played."""


class TableNotOpen(TableRuleError):
    """The table does not exist yet, or it was closed."""


class TableAlreadyExists(TableRuleError):
    """CreateTable on a table that exists."""


class InvalidRequest(TableRuleError):
    """A missing id or a malformed value in the command."""


class NoSuchSeat(TableRuleError):
    """The seat number is not a seat of this table."""


class SeatTaken(TableRuleError):
    """Someone already sits there."""


class AlreadySeated(TableRuleError):
    """The player already holds a seat at this table."""


class BuyInOutOfRange(TableRuleError):
    """The buy-in or top-up breaks the table's minimum or maximum."""


class EmptySeat(TableRuleError):
    """Nobody sits in that seat."""


class NotYourSeat(TableRuleError):
    """The seat belongs to another player."""


class HandInProgress(TableRuleError):
    """Not allowed while the player is dealt into the running hand (or while a hand runs)."""


class NoHandRunning(TableRuleError):
    """A hand command with no hand in progress."""


class NotEnoughPlayers(TableRuleError):
    """Fewer than two players can be dealt in."""


class TooEarly(TableRuleError):
    """The pause between hands is not over."""


class SeatStateError(TableRuleError):
    """Sitting out when already out, sitting in without chips, standing up twice."""
