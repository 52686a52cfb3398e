"""ListTables' pages: the filters, the page sizes and the page tokens (opaque, checked: a
token this service did not give for these filters is INVALID_ARGUMENT, never INTERNAL).

A token is the table id its page ended at and a check of it and of the filters (base64url): any
dealer of the room accepts another's, and a token that is well formed but made up only moves the
cursor (it shows nothing a first page would not).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Final

from poker.servicekit.errors import InvalidArgument
from poker.tablelog.feed import is_table_id
from poker.v1 import events_pb2 as pb

#: ListTables' page size when none is asked, and the largest one served.
DEFAULT_PAGE_SIZE: Final = 100
MAX_PAGE_SIZE: Final = 1000
#: The largest page token a client may send back (a table id and a check, base64).
MAX_PAGE_TOKEN_CHARS: Final = 256
_TOKEN_VERSION: Final = b"\x01"


@dataclass(frozen=True, slots=True)
class ListFilter:
    """ListTables' filters; each left at its zero value matches every table."""

    game: str = ""
    structure: int = 0
    big_blind: int = 0
    real_money: bool | None = None
    has_free_seats: bool = False

    def matches(self, listing: pb.TableListing) -> bool:
        """Whether ``listing`` passes every filter."""
        return (
            (not self.game or listing.game == self.game)
            and (not self.structure or listing.structure == self.structure)
            and (not self.big_blind or listing.stakes.big_blind == self.big_blind)
            and (self.real_money is None or listing.real_money == self.real_money)
            and (not self.has_free_seats or listing.players < listing.seat_count)
        )

    def digest(self) -> bytes:
        """8 bytes naming the filters (a page token is valid for the filters it came with)."""
        text = f"{self.game}|{self.structure}|{self.big_blind}|{self.real_money}|"
        return hashlib.sha256(f"{text}{self.has_free_seats}".encode()).digest()[:8]


def page_token(after: str, filters: ListFilter) -> str:
    """The opaque token of the page after table id ``after`` under ``filters``."""
    body = after.encode()
    check = hashlib.sha256(_TOKEN_VERSION + filters.digest() + body).digest()[:8]
    return base64.urlsafe_b64encode(_TOKEN_VERSION + check + body).decode().rstrip("=")


def after_of(token: str, filters: ListFilter) -> str:
    """The table id a page token continues after ("" for none); InvalidArgument for a token
    this service did not give with these filters (forged, truncated, or other filters)."""
    if not token:
        return ""
    refused = InvalidArgument(
        "page_token is not one this service gave for these filters: start again without it.",
        field="page_token",
    )
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise refused
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, TypeError):
        raise refused from None
    version, check, body = raw[:1], raw[1:9], raw[9:]
    expected = hashlib.sha256(_TOKEN_VERSION + filters.digest() + body).digest()[:8]
    if version != _TOKEN_VERSION or check != expected:
        raise refused
    try:
        after = body.decode()
    except UnicodeDecodeError:
        raise refused from None
    if not is_table_id(after):
        raise refused
    return after


def page_size_of(requested: int) -> int:
    """The page size to serve: ``requested``, the default for 0; InvalidArgument out of
    1-1000."""
    if requested == 0:
        return DEFAULT_PAGE_SIZE
    if not 1 <= requested <= MAX_PAGE_SIZE:
        raise InvalidArgument(
            f"page_size must be 1-{MAX_PAGE_SIZE} (0: {DEFAULT_PAGE_SIZE}); got {requested}.",
            field="page_size",
        )
    return requested


@dataclass(frozen=True, slots=True)
class ListRequest:
    """One ListTables request as the application takes it: the filters, the page size asked
    (0: the default) and the page token given back (empty: the first page)."""

    filters: ListFilter = field(default_factory=ListFilter)
    page_size: int = 0
    page_token: str = ""


__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "ListFilter",
    "ListRequest",
    "after_of",
    "page_size_of",
    "page_token",
]
