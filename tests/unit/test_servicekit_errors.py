"""The error table: each family's status and the details the client reads."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2

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
from poker.servicekit.status import ERROR_DOMAIN, ErrorTable, Status, context_of, status_for
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


# --- the rich status: reasons, the field at fault, the google.rpc.Status -----------------------


def test_each_family_sends_its_reason_and_a_subclass_its_own() -> None:
    class TableGone(NotFound):
        REASON = "TABLE_GONE"

    assert status_for(NotFound("no table t-1")) == Status(
        grpc.StatusCode.NOT_FOUND, "no table t-1", "NOT_FOUND"
    )
    status = status_for(TableGone("no table t-1"))
    assert status is not None and status.reason == "TABLE_GONE"
    assert status_for(TokenExpired("expired")).reason == "TOKEN_EXPIRED"  # type: ignore[union-attr]


def test_an_error_table_gives_foreign_classes_their_reasons_most_specific_first() -> None:
    class RuleError(Exception):
        pass

    class NotYourTurn(RuleError):
        pass

    class Other(RuleError):
        pass

    table = ErrorTable(families={RuleError: RuleViolation}, reasons={NotYourTurn: "NOT_YOUR_TURN"})
    assert status_for(NotYourTurn("wait"), table) == Status(
        grpc.StatusCode.FAILED_PRECONDITION, "wait", "NOT_YOUR_TURN"
    )
    other = status_for(Other("no"), table)
    assert other is not None and other.reason == RuleViolation.REASON  # the family's
    assert table.reason_codes() == {"NOT_YOUR_TURN": grpc.StatusCode.FAILED_PRECONDITION}


def test_an_invalid_argument_names_its_field_and_the_status_proto_carries_both() -> None:
    status = status_for(InvalidArgument("seat must be 1-9", field="seat"))
    assert status is not None and status.field == "seat"
    proto = status.to_proto({"table_id": "t-1"})
    assert (proto.code, proto.message) == (
        grpc.StatusCode.INVALID_ARGUMENT.value[0],
        status.details,
    )
    info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    assert proto.details[0].Unpack(info) and proto.details[1].Unpack(bad)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "INVALID_REQUEST",
        ERROR_DOMAIN,
        {"table_id": "t-1"},
    )
    assert [(v.field, v.description) for v in bad.field_violations] == [("seat", status.details)]
    assert len(status_for(NotFound("x")).to_proto().details) == 1  # type: ignore[union-attr]


def test_only_id_shaped_request_fields_are_echoed_as_metadata() -> None:
    class Request:
        table_id = "t-1"
        hand_id = "bad id\n" + "x" * 100

    assert context_of(Request()) == {"table_id": "t-1"}
    assert context_of(object()) == {}
