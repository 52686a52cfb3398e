"""The ledger's error family: every error carries one sentence that says which rule was broken.

The service maps the three branches to gRPC status: :class:`InvalidCommand` → INVALID_ARGUMENT,
:class:`NotFound` → NOT_FOUND, :class:`RuleViolation` → FAILED_PRECONDITION. The rest mean a bug
or a corrupted log (INTERNAL): :class:`LedgerBug` from ``decide``'s last guard, and
:class:`SequenceGap` and :class:`UnknownEvent` from ``evolve``.
"""

from __future__ import annotations


class LedgerError(Exception):
    """Base class of every ledger error; ``str(error)`` is the rule's sentence."""


class InvalidCommand(LedgerError):
    """The command is malformed: a bad id, an amount that is not a positive integer, ..."""


class NotFound(LedgerError):
    """The command names something the ledger does not know."""


class RuleViolation(LedgerError):
    """The command is well formed but breaks a rule of the ledger in its current state."""


class InsufficientFunds(RuleViolation):
    """A player's cash would go negative."""


class UnknownHold(NotFound):
    """No hold has this id."""


class UnknownTable(NotFound):
    """No money has ever been held for or posted to this table."""


class UnknownEscrow(RuleViolation):
    """A posting names a player who has no open escrow at the table."""


class HoldAlreadyPosted(RuleViolation):
    """The hold was already posted into a table's escrow."""


class HoldNotPending(RuleViolation):
    """The hold was voided or expired: its cash went back to the player."""


class HoldMismatch(RuleViolation):
    """A command names a hold with another player, table, or a larger amount than the hold's."""


class EscrowOverdrawn(RuleViolation):
    """A player's escrow at a table would go negative."""


class EscrowMismatch(RuleViolation):
    """A player leaves a table with another amount than his escrow holds."""


class UnbalancedSettlement(RuleViolation):
    """A hand's net results and rake do not sum to zero."""


class TableClosed(RuleViolation):
    """The table was closed and refunded; no more money moves there."""


class LimitExceeded(RuleViolation):
    """A deposit, withdrawal or hold above a money limit (see :mod:`.limits`)."""


class IdempotencyConflict(RuleViolation):
    """An idempotency key (or hold id) was reused for a different command."""


class LedgerBug(LedgerError):
    """``decide`` was about to write a transaction that breaks an invariant although every rule
    passed: a bug in the ledger, never the caller's fault (INTERNAL)."""


class UnknownEvent(LedgerError):
    """``evolve`` got an event body this version does not know (an older binary on a newer log)."""


class SequenceGap(LedgerError):
    """``evolve`` got an event whose sequence does not follow the state's (a bug or bad log)."""
