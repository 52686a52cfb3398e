"""Rule errors of the hand machine: each carries one sentence a player understands.

``decide`` raises them before producing any event, so a rejected command never changes the state.
The services map every :class:`HandRuleError` to FAILED_PRECONDITION with its message.
"""

from __future__ import annotations


class HandRuleError(Exception):
    """A command breaks a rule of the hand; ``str(error)`` is the sentence to show."""


class InvalidHandSetup(HandRuleError):
    """StartHand is not a hand that can be dealt (players, stakes, button, configuration)."""


class TooFewPlayers(InvalidHandSetup):
    """Fewer than two players with chips."""


class InvalidDeck(InvalidHandSetup):
    """The deck is not exactly the game's deck: missing, repeated or foreign cards."""


class HandAlreadyStarted(HandRuleError):
    """StartHand on a state that already holds a hand."""


class HandNotRunning(HandRuleError):
    """An action before the hand started or after it ended."""


class UnknownSeat(HandRuleError):
    """The seat is not dealt into this hand."""


class NotYourTurn(HandRuleError):
    """Someone acts while it is another player's turn (or nobody's)."""


class IllegalAction(HandRuleError):
    """The action is not open to the player now (e.g. checking while facing a bet)."""


class InvalidAmount(HandRuleError):
    """The amount is not a whole number of chips or lies outside what the rules allow."""


class TimeNotUp(HandRuleError):
    """A time-out was claimed before the player's deadline."""
