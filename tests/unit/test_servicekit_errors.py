"""The error table: each family's status and the details the client reads."""

from __future__ import annotations

import grpc
import pytest

from poker.eventstore.api import ConcurrencyConflict, StoreUnavailable
from poker.eventstore.leases import LeaseLost
from poker.servicekit.errors import (
    Conflict,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RuleViolation,
    ServiceError,
    Unauthenticated,
    Unavailable,
)
from poker.servicekit.status import status_for
from poker.servicekit.tokens import TokenExpired


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (RuleViolation("You cannot raise less than the minimum."), "FAILED_PRECONDITION"),
        (InvalidArgument("seat must be 1-9"), "INVALID_ARGUMENT"),
        (NotFound("no table t-1"), "NOT_FOUND"),
        (Conflict("retry"), "ABORTED"),
        (Unauthenticated("sign in"), "UNAUTHENTICATED"),
        (TokenExpired("the token expired"), "UNAUTHENTICATED"),
        (PermissionDenied("not your seat"), "PERMISSION_DENIED"),
        (Unavailable("wallet down"), "UNAVAILABLE"),
    ],
)
def test_service_errors_map_to_their_status_with_their_message(
    error: ServiceError, code: str
) -> None:
    status = status_for(error)
    assert status is not None
    assert (status.code.name, status.details) == (code, str(error))


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ConcurrencyConflict("t-1", 3, 5), "ABORTED"),
        (StoreUnavailable("timeout"), "UNAVAILABLE"),
        (LeaseLost("t-1", "dealer-a", "dealer-b"), "UNAVAILABLE"),
    ],
)
def test_lower_layer_errors_map_without_leaking_their_internals(
    error: Exception, code: str
) -> None:
    status = status_for(error)
    assert status is not None
    assert status.code.name == code
    assert "t-1" not in status.details


def test_a_rule_violation_keeps_the_engine_sentence() -> None:
    class EngineError(Exception):
        pass

    cause = EngineError("It is not your turn.")
    violation = RuleViolation.from_error(cause)
    assert violation.message == "It is not your turn."
    assert violation.__cause__ is cause


def test_an_extra_family_maps_subclasses_too() -> None:
    class RuleError(Exception):
        pass

    class NotYourTurn(RuleError):
        pass

    status = status_for(NotYourTurn("It is not your turn."), extra={RuleError: RuleViolation})
    assert status is not None
    assert status.code == grpc.StatusCode.FAILED_PRECONDITION
    assert status.details == "It is not your turn."


def test_the_most_specific_mapping_wins() -> None:
    class Base(Exception):
        pass

    class Specific(Base):
        pass

    status = status_for(Specific("x"), extra={Base: InvalidArgument, Specific: NotFound})
    assert status is not None
    assert status.code == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("error", [KeyError("k"), RuntimeError("bug"), ValueError("bad")])
def test_anything_else_is_a_bug(error: Exception) -> None:
    assert status_for(error) is None
