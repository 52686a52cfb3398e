"""Every error class has a stable reason, reasons are distinct, and docs/api-errors.md lists
exactly the reasons the code can send, each with its status."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import grpc
import pytest

import poker.dealer.app
import poker.wallet.app
from poker.dealer.grpc_api import ERROR_TABLE as DEALER_ERRORS
from poker.dealer.reasons import HAND_REASONS, TABLE_REASONS
from poker.engine.hand import HandRuleError
from poker.engine.table import TableRuleError
from poker.servicekit.errors import ServiceError
from poker.servicekit.status import (
    ErrorTable,
    family_reason_codes,
    fixed_reason_codes,
    status_for,
)
from poker.wallet.grpc_api import ERROR_TABLE as WALLET_ERRORS
from poker.wallet.ledger import LedgerError
from poker.wallet.reasons import BUG_CLASSES, LEDGER_REASONS

DOC = Path(__file__).resolve().parents[2] / "docs/api-errors.md"
_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| ([A-Z_]+) \|", re.MULTILINE)
_UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")

assert poker.dealer.app and poker.wallet.app  # every module with an error class is imported


def _subclasses(root: type[BaseException]) -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    stack = [root]
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith("poker."):
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


def _service_errors() -> list[type[ServiceError]]:
    return [cls for cls in _subclasses(ServiceError) if issubclass(cls, ServiceError)]


def test_every_service_error_class_names_a_reason_of_its_own() -> None:
    for cls in _service_errors():
        assert "REASON" in vars(cls), f"{cls.__module__}.{cls.__name__} has no REASON"
        assert _UPPER_SNAKE.fullmatch(cls.REASON), cls.REASON
    reasons = Counter(cls.REASON for cls in _service_errors())
    # A reason names a meaning; the dealer's and the ledger's shared ones live in other tables.
    assert [reason for reason, count in reasons.items() if count > 1] == []


@pytest.mark.parametrize(
    ("root", "table"),
    [(HandRuleError, HAND_REASONS), (TableRuleError, TABLE_REASONS), (LedgerError, LEDGER_REASONS)],
)
def test_every_engine_and_ledger_error_class_has_a_distinct_reason(
    root: type[BaseException], table: dict[type[BaseException], str]
) -> None:
    classes = [cls for cls in _subclasses(root) if cls not in BUG_CLASSES]
    missing = [cls.__qualname__ for cls in classes if cls not in table]
    assert missing == [], "add them to poker/dealer/reasons.py or poker/wallet/reasons.py"
    reasons = [table[cls] for cls in classes]
    assert len(set(reasons)) == len(reasons)
    assert all(_UPPER_SNAKE.fullmatch(reason) for reason in reasons)


def test_the_ledger_bugs_have_no_reason_and_stay_internal() -> None:
    for cls in BUG_CLASSES:
        assert cls not in LEDGER_REASONS
        if cls is not LedgerError:
            assert status_for(cls("x"), WALLET_ERRORS) is None  # INTERNAL at the edge


def _code_reasons() -> dict[str, grpc.StatusCode]:
    codes: dict[str, grpc.StatusCode] = {}
    tables: list[ErrorTable] = [DEALER_ERRORS, WALLET_ERRORS]
    for part in (family_reason_codes(), fixed_reason_codes(), *(t.reason_codes() for t in tables)):
        for reason, code in part.items():
            assert codes.setdefault(reason, code) == code, f"{reason} comes with two statuses"
    return codes


def test_each_reason_comes_with_one_status() -> None:
    assert _code_reasons()["NOT_YOUR_TURN"] == grpc.StatusCode.FAILED_PRECONDITION


def test_the_api_doc_lists_exactly_the_reasons_in_the_code_with_their_status() -> None:
    rows = _ROW.findall(DOC.read_text(encoding="utf-8"))
    documented = dict(rows)
    assert len(documented) == len(rows), "a reason is listed twice"
    in_code = {reason: code.name for reason, code in _code_reasons().items()}
    assert sorted(set(in_code) - set(documented)) == [], "reasons missing from the doc"
    assert sorted(set(documented) - set(in_code)) == [], "the doc lists reasons the code lacks"
    assert documented == in_code
