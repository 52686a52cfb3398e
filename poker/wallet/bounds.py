"""The wallet's limits on every request field: the one table the checks and the docs read.

Every number a client sends (amounts, a hold's time to live, page sizes) and every string (ids,
keys, reasons, days) has a limit here, checked by :data:`WALLET_BOUNDS` before anything else a
method does: out of bounds is INVALID_ARGUMENT with a sentence naming the field and the limit,
and nothing is written to the ledger. Unknown enum numbers are refused
(:mod:`poker.servicekit.bounds`).

These are the edge's sanity limits, far inside int64 (a hold's deadline is now + at most a day);
the ledger's own per-transaction and per-account maxima, business settings, are checked by the
ledger behind them. ``docs/security/inputs.md`` lists them (``python -m poker.wallet.bounds``
prints the table).

>>> from google.protobuf.duration_pb2 import Duration
>>> WALLET_BOUNDS.first_problem(wpb.PlaceHoldRequest(hold_id="h1", ttl=Duration(seconds=2**40)))
'ttl.seconds must be between 0 and 86,400 s, not 1099511627776.'
"""

from __future__ import annotations

import datetime
from typing import Final

from google.protobuf.descriptor import Descriptor

from poker.servicekit.bounds import IntRange, Items, Limit, RequestBounds, Text
from poker.v1 import wallet_pb2 as wpb

#: The most one request may move or hold: 10 billion currency units at cents.
MAX_AMOUNT: Final = 10**12
DAY_MS: Final = 86_400_000
#: A hold waits for its seat at most a day (the dealer asks for minutes).
MAX_HOLD_TTL_MS: Final = DAY_MS
MAX_PAGE: Final = 500
#: Client idempotency keys (the ledger scopes them to the player).
MAX_CLIENT_KEY: Final = 64

# The ledger's ids (poker.wallet.ledger.accounts): no ':' can make two account names collide.
_ID: Final = Text(128, r"[A-Za-z0-9_-]+", "letters, digits, '-' and '_'")
_AMOUNT: Final = IntRange(0, MAX_AMOUNT, "minor units")
_KEY: Final = Text(MAX_CLIENT_KEY)
_REASON: Final = Text(200)
_GAME: Final = Text(32, r"[a-z0-9-]+", "lower-case letters, digits and '-'")


def calendar_day_problem(text: str) -> str | None:
    """None for a day of the calendar written ``YYYY-MM-DD`` (the shape is the pattern's to
    check), else why not: ``9999-99-99`` and ``2026-02-30`` have the shape, not the meaning.

    >>> calendar_day_problem("2026-02-28") is None
    True
    >>> calendar_day_problem("2026-02-30")
    'is not a day of the calendar (2026-02-30)'
    """
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return f"is not a day of the calendar ({text})"
    return None


_DAY: Final = Text(
    10, r"[0-9]{4}-[0-9]{2}-[0-9]{2}", "a UTC day, YYYY-MM-DD", meaning=calendar_day_problem
)


def _fields(message: str, limit: Limit, *names: str) -> dict[str, Limit]:
    return {f"poker.v1.{message}.{name}": limit for name in names}


#: Every request field of the Wallet service and its limit (enums: any number they define).
LIMITS: Final[dict[str, Limit]] = {
    **_fields("DepositRequest", _ID, "player_id"),
    **_fields("DepositRequest", _AMOUNT, "amount"),
    **_fields("DepositRequest", _KEY, "idempotency_key"),
    **_fields("DepositRequest", _REASON, "reason"),
    **_fields("WithdrawRequest", _ID, "player_id"),
    **_fields("WithdrawRequest", _AMOUNT, "amount"),
    **_fields("WithdrawRequest", _KEY, "idempotency_key"),
    **_fields("WithdrawRequest", _REASON, "reason"),
    **_fields("GetBalanceRequest", _ID, "player_id"),
    **_fields("ListTransactionsRequest", _ID, "player_id"),
    **_fields("ListTransactionsRequest", IntRange(0, MAX_PAGE, "transactions"), "page_size"),
    **_fields(
        "ListTransactionsRequest",
        Text(41, r"[0-9]+(\.[0-9]+)?", "a page token (digits, one dot)"),
        "page_token",
    ),
    **_fields("PlaceHoldRequest", _ID, "hold_id", "player_id", "table_id"),
    **_fields("PlaceHoldRequest", _AMOUNT, "amount"),
    # PlaceHoldRequest.ttl is the one Duration of the wallet's requests: at most a day.
    "google.protobuf.Duration.seconds": IntRange(0, MAX_HOLD_TTL_MS // 1000, "s"),
    "google.protobuf.Duration.nanos": IntRange(0, 999_999_999, "ns"),
    **_fields("VoidHoldRequest", _ID, "hold_id"),
    **_fields("VoidHoldRequest", _REASON, "reason"),
    **_fields("GetTableEscrowRequest", _ID, "table_id"),
    **_fields("GetRakeReportRequest", Items(3), "group_by"),
    **_fields("GetRakeReportRequest", _ID, "table_id"),
    **_fields("GetRakeReportRequest", _GAME, "game"),
    **_fields("GetRakeReportRequest", _DAY, "day_from", "day_to"),
}

#: The wallet's request checker.
WALLET_BOUNDS: Final = RequestBounds(LIMITS)


def request_types() -> list[Descriptor]:
    """The request message descriptors of every Wallet method."""
    service = wpb.DESCRIPTOR.services_by_name["WalletService"]
    return [method.input_type for method in service.methods]


def markdown_rows() -> str:
    """The limits as the rows of a Markdown table (field, limit), as docs/security/inputs.md
    shows them."""
    rows = WALLET_BOUNDS.rows(request_types())
    return "\n".join(f"| `{name.removeprefix('poker.v1.')}` | {words} |" for name, words in rows)


if __name__ == "__main__":  # pragma: no cover - a documentation helper
    print(markdown_rows())
