"""The dealer's limits on every request field: the one table the checks and the docs read.

Every number a client sends (stakes, buy-ins, timers, seats, amounts, versions, counts) and every
string (ids, names, card strings, reasons) has a limit here, checked by
:data:`DEALER_BOUNDS` before anything else a method does: out of bounds is INVALID_ARGUMENT with a
sentence naming the field and the limit, and nothing is decided or appended. Zero stays allowed
wherever the proto reads zero as "the room's default" (the method says when a value is required).
Unknown enum numbers are refused everywhere (:mod:`poker.servicekit.bounds`).

The values are a real room's, far inside int64, so that no later arithmetic can overflow a
field or misbehave: a deadline is now + at most an hour; the room's default buy-ins (at most
100 big blinds) of the highest stakes still fit the buy-in limit; a rake never exceeds its pot
(:func:`rake_problem`). ``docs/security/inputs.md`` lists them (``python -m poker.dealer.bounds``
prints the table).

>>> DEALER_BOUNDS.first_problem(dpb.SitDownRequest(table_id="t1", seat=3, buy_in=-5))
'buy_in must be between 0 and 1,000,000,000,000 minor units, not -5.'
>>> DEALER_BOUNDS.first_problem(dpb.SitDownRequest(table_id="t1", seat=3, buy_in=500))
"""

from __future__ import annotations

from typing import Final

from google.protobuf.descriptor import Descriptor

from poker.servicekit.bounds import IntRange, Items, Limit, RequestBounds, Text
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

#: The most chips one stake (a blind, an ante, a bet size, the chip unit) may be: 100 million
#: currency units at cents. The room's default maximum buy-in, 100 big blinds, then still fits
#: :data:`MAX_CHIPS`.
MAX_STAKE: Final = 10**10
#: The most chips one amount (a buy-in, a top-up, a bet, a rake figure) may be: 10 billion
#: currency units at cents; ten seats of it are still five orders of magnitude below int64.
MAX_CHIPS: Final = 10**12
HOUR_MS: Final = 3_600_000
DAY_MS: Final = 24 * HOUR_MS
#: No game seats more players (Hold'em: 10).
MAX_SEATS: Final = 10
#: A table's event versions: a million hands of a thousand events each is 10^9.
MAX_VERSION: Final = 10**12
#: Raise caps: limit rooms cap at 3 to 5; anything up to 50 is accepted.
MAX_RAISES: Final = 50
#: Betting rounds and streets of any game (stud: 5 streets; triple draw: 4 rounds), with room.
MAX_STREETS: Final = 8

_ID_CHARS: Final = "letters, digits, '-' and '_'"
_COMMAND_CHARS: Final = "letters, digits, '-', '_', '.' and ':'"

_TABLE_ID: Final = Text(64, r"[A-Za-z0-9_-]+", _ID_CHARS)
_COMMAND_ID: Final = Text(64, r"[A-Za-z0-9_.:-]+", _COMMAND_CHARS)
_HAND_ID: Final = Text(140, r"[A-Za-z0-9_.:-]+", _COMMAND_CHARS)
_GAME: Final = Text(32, r"[a-z0-9-]+", "lower-case letters, digits and '-'")
_REASON: Final = Text(200)
_SEAT: Final = IntRange(0, MAX_SEATS, "(a seat number)")
_SEAT_COUNT: Final = IntRange(0, MAX_SEATS, "seats")
_STAKE: Final = IntRange(0, MAX_STAKE, "minor units")
_CHIPS: Final = IntRange(0, MAX_CHIPS, "minor units")
_TIMER: Final = IntRange(0, HOUR_MS, "ms")
_RAISES: Final = IntRange(0, MAX_RAISES, "raises")


def _fields(message: str, limit: Limit, *names: str) -> dict[str, Limit]:
    return {f"poker.v1.{message}.{name}": limit for name in names}


#: Every request field of the Dealer service and its limit (enums: any number they define).
LIMITS: Final[dict[str, Limit]] = {
    # CreateTable
    **_fields("CreateTableRequest", _COMMAND_ID, "command_id"),
    **_fields("CreateTableRequest", _TABLE_ID, "table_id"),
    **_fields("CreateTableRequest", _GAME, "game"),
    **_fields("CreateTableRequest", _SEAT_COUNT, "seat_count"),
    **_fields("CreateTableRequest", _CHIPS, "min_buy_in", "max_buy_in"),
    **_fields("CreateTableRequest", _TIMER, "action_timer_ms", "pause_between_hands_ms"),
    **_fields("Stakes", _STAKE, "small_blind", "big_blind", "ante", "small_bet", "big_bet"),
    **_fields("Stakes", _STAKE, "bring_in"),
    **_fields("Stakes", IntRange(0, MAX_STAKE, "minor units", MAX_STREETS), "spread_round_max"),
    # CreateTable.settings: the table switches
    **_fields("TableConfig", _GAME, "game"),
    **_fields("TableConfig", _SEAT_COUNT, "seat_count"),
    **_fields("TableConfig", _CHIPS, "min_buy_in", "max_buy_in"),
    **_fields("TableConfig", _TIMER, "pause_between_hands_ms", "gathering_ms"),
    **_fields("TableConfig", IntRange(0, DAY_MS, "ms"), "rejoin_window_ms"),
    **_fields("TableConfig", IntRange(0, 24, "per 24 hours"), "artificial_allin_per_24h"),
    **_fields("TableConfig", IntRange(0, 10_000, "hands"), "sit_out_max_hands"),
    **_fields("HandRules", _STAKE, "chip_unit"),
    **_fields("HandRules", _RAISES, "max_raises", "spread_max_raises"),
    **_fields("HandRules", _TIMER, "action_timer_ms", "draw_timer_ms"),
    **_fields(
        "HandRules", Text(4, r"[shdc]{4}", "the four suits s, h, d, c"), "bring_in_suit_order"
    ),
    **_fields("HandRules", IntRange(0, 5, "cards"), "max_discard"),
    **_fields("RakeSchedule", _CHIPS, "per", "step", "minimum_pot", "band_below", "band_rake"),
    **_fields("RakeSchedule", Items(MAX_SEATS), "caps"),
    **_fields("RakeSchedule", IntRange(0, MAX_STREETS, "(a street)"), "trigger_street"),
    **_fields("RakeCap", IntRange(0, MAX_SEATS, "players"), "up_to_players"),
    **_fields("RakeCap", _CHIPS, "cap"),
    # ListTables: one page of at most 1,000 tables; the token as the service gave it
    **_fields("ListTablesRequest", IntRange(0, 1000, "tables (0: 100)"), "page_size"),
    **_fields("ListTablesRequest", Text(256, r"[A-Za-z0-9_-]+", _ID_CHARS), "page_token"),
    **_fields("ListTablesRequest", _GAME, "game"),
    **_fields("ListTablesRequest", _STAKE, "big_blind"),
    # GetTable, CloseTable, WatchTable, GetHandHistory
    **_fields("GetTableRequest", _TABLE_ID, "table_id"),
    **_fields("CloseTableRequest", _COMMAND_ID, "command_id"),
    **_fields("CloseTableRequest", _TABLE_ID, "table_id"),
    **_fields("CloseTableRequest", _REASON, "reason"),
    **_fields("DrainTableRequest", _TABLE_ID, "table_id"),
    # Ten minutes at most: the call waits that long for the hand (unset or 0: the dealer's
    # default). DrainTableRequest.timeout is the one Duration of the dealer's requests.
    "google.protobuf.Duration.seconds": IntRange(0, 600, "s"),
    "google.protobuf.Duration.nanos": IntRange(0, 999_999_999, "ns"),
    **_fields("WatchTableRequest", _TABLE_ID, "table_id"),
    **_fields("WatchTableRequest", IntRange(0, MAX_VERSION, "(a table version)"), "from_seq"),
    **_fields("GetHandHistoryRequest", _HAND_ID, "hand_id"),
    **_fields("GetHandHistoryRequest", _TABLE_ID, "table_id"),
    # The seat commands (unary and over Play)
    **_fields("SitDownRequest", _COMMAND_ID, "command_id"),
    **_fields("SitDownRequest", _TABLE_ID, "table_id"),
    **_fields("SitDownRequest", _SEAT, "seat"),
    **_fields("SitDownRequest", _CHIPS, "buy_in"),
    **_fields("TopUpRequest", _COMMAND_ID, "command_id"),
    **_fields("TopUpRequest", _TABLE_ID, "table_id"),
    **_fields("TopUpRequest", _SEAT, "seat"),
    **_fields("TopUpRequest", _CHIPS, "amount"),
    **_fields("StandUpRequest", _COMMAND_ID, "command_id"),
    **_fields("SitOutRequest", _COMMAND_ID, "command_id"),
    **_fields("StandUpRequest", _TABLE_ID, "table_id"),
    **_fields("SitOutRequest", _TABLE_ID, "table_id"),
    **_fields("StandUpRequest", _SEAT, "seat"),
    **_fields("SitOutRequest", _SEAT, "seat"),
    **_fields("SitInRequest", _COMMAND_ID, "command_id"),
    **_fields("SitInRequest", _TABLE_ID, "table_id"),
    **_fields("SitInRequest", _SEAT, "seat"),
    **_fields("CommitSeedRequest", _COMMAND_ID, "command_id"),
    **_fields("CommitSeedRequest", _TABLE_ID, "table_id"),
    **_fields("CommitSeedRequest", _SEAT, "seat"),
    **_fields("CommitSeedRequest", Text(128, r"[0-9a-fA-F]+", "hex digits"), "seed_hex"),
    # The hand commands
    **_fields("ActRequest", _COMMAND_ID, "command_id"),
    **_fields("ActRequest", _TABLE_ID, "table_id"),
    **_fields("ActRequest", _HAND_ID, "hand_id"),
    **_fields("ActRequest", _CHIPS, "amount"),
    **_fields("DrawRequest", _COMMAND_ID, "command_id"),
    **_fields("DrawRequest", _TABLE_ID, "table_id"),
    **_fields("DrawRequest", _HAND_ID, "hand_id"),
    # Up to five cards, written together ("2c7d"), spaced or with commas, '10' for 'T'.
    **_fields(
        "DrawRequest",
        Text(20, r"[0-9TJQKAtjqkashdcSHDC ,]+", "card ranks and suits, spaces and commas"),
        "discards",
    ),
    **_fields("AgreeSplitRequest", _COMMAND_ID, "command_id"),
    **_fields("AgreeSplitRequest", _TABLE_ID, "table_id"),
    **_fields("AgreeSplitRequest", _HAND_ID, "hand_id"),
}

#: The dealer's request checker.
DEALER_BOUNDS: Final = RequestBounds(LIMITS)


def request_types() -> list[Descriptor]:
    """The request message descriptors of every Dealer method."""
    service = dpb.DESCRIPTOR.services_by_name["DealerService"]
    return [method.input_type for method in service.methods]


def rake_problem(rake: pb.RakeSchedule) -> str | None:
    """Why a rake schedule a client sends cannot be played, or None: ``per`` must be at least 1
    (the rake divides the pot by it), ``step`` at most ``per`` and ``band_rake`` at most
    ``minimum_pot``, so that no rake exceeds the pot it is taken from."""
    if rake.per < 1:
        return "settings.rules.rake.per must be at least 1."
    if rake.step > rake.per:
        return "settings.rules.rake.step may not exceed per: no rake may exceed its pot."
    if rake.band_rake > rake.minimum_pot:
        return (
            "settings.rules.rake.band_rake may not exceed minimum_pot: no rake may exceed its pot."
        )
    return None


def markdown_rows() -> str:
    """The limits as the rows of a Markdown table (field, limit), as docs/security/inputs.md
    shows them."""
    rows = DEALER_BOUNDS.rows(request_types())
    return "\n".join(f"| `{name.removeprefix('poker.v1.')}` | {words} |" for name, words in rows)


if __name__ == "__main__":  # pragma: no cover - a documentation helper
    print(markdown_rows())
