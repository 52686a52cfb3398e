"""The stable reason of every ledger error the wallet answers with, for the edge's ErrorInfo.

The ledger's errors are plain Python; the wallet's edge gives each class its reason here, in one
table (``docs/api-errors.md`` lists them). The classes that mean a bug or a corrupted log
(:data:`BUG_CLASSES`) have none: they are INTERNAL. ``tests/unit/test_error_reasons.py`` keeps
every other class listed and every reason distinct. Renaming a reason breaks clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from poker.wallet import ledger
from poker.wallet.ledger import errors

#: The ledger's refusals: malformed (INVALID_ARGUMENT), unknown (NOT_FOUND), a rule broken
#: (FAILED_PRECONDITION).
LEDGER_REASONS: Final[Mapping[type[BaseException], str]] = {
    ledger.InvalidCommand: "INVALID_LEDGER_COMMAND",
    ledger.NotFound: "LEDGER_NOT_FOUND",
    ledger.RuleViolation: "LEDGER_RULE_VIOLATED",
    errors.InsufficientFunds: "INSUFFICIENT_FUNDS",
    errors.UnknownHold: "HOLD_NOT_FOUND",
    errors.UnknownTable: "NO_TABLE_MONEY",
    errors.UnknownEscrow: "NO_ESCROW",
    errors.HoldAlreadyPosted: "HOLD_ALREADY_POSTED",
    errors.HoldNotPending: "HOLD_NOT_PENDING",
    errors.HoldMismatch: "HOLD_MISMATCH",
    errors.EscrowOverdrawn: "ESCROW_OVERDRAWN",
    errors.EscrowMismatch: "ESCROW_MISMATCH",
    errors.UnbalancedSettlement: "UNBALANCED_SETTLEMENT",
    errors.TableClosed: "TABLE_CLOSED",
    errors.LimitExceeded: "LIMIT_EXCEEDED",
    errors.IdempotencyConflict: "IDEMPOTENCY_KEY_REUSED",
}

#: Ledger errors that mean a bug or a bad log, never the caller's fault: INTERNAL, no reason.
BUG_CLASSES: Final = frozenset(
    {errors.LedgerError, errors.LedgerBug, errors.UnknownEvent, errors.SequenceGap}
)

__all__ = ["BUG_CLASSES", "LEDGER_REASONS"]
