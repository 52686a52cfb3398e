"""The index of open tables' pure parts (poker/dealer/index.py): what a listing shows, the
page tokens (opaque, checked: a forged one is INVALID_ARGUMENT naming the field), the page
sizes, the filters, the pages, and hostile values read from the bucket (skipped and counted,
never raised)."""

from __future__ import annotations

import base64
from typing import Any, cast

import pytest
from prometheus_client import CollectorRegistry

from poker.dealer.index import TableIndex, listing_of
from poker.dealer.metrics import DealerMetrics
from poker.dealer.pages import DEFAULT_PAGE_SIZE, ListFilter, after_of, page_size_of, page_token
from poker.engine.betting import Stakes, Structure
from poker.engine.table import CreateTable, SitDown, execute, make_config
from poker.servicekit.errors import InvalidArgument
from poker.v1 import events_pb2 as pb


def index() -> tuple[TableIndex, CollectorRegistry]:
    registry = CollectorRegistry()
    return TableIndex(cast(Any, None), "I", DealerMetrics(registry)), registry


def listing(table_id: str, **fields: Any) -> pb.TableListing:
    values = {"game": "holdem", "seat_count": 6, "version": 1, **fields}
    return pb.TableListing(table_id=table_id, **values)


def test_a_listing_shows_what_list_tables_returns_and_a_closed_table_has_none() -> None:
    config = make_config("omaha", Structure.POT_LIMIT, Stakes(1, 2), real_money=False)
    table, _ = execute(None, CreateTable(config, now=1))
    table, _ = execute(table, SitDown(1, "ann", 100, "hold-1", now=2))
    shown = listing_of("t1", table)
    assert shown is not None
    assert (shown.game, shown.players, shown.seat_count, shown.real_money) == (
        "omaha",
        1,
        config.seat_count,
        False,
    )
    assert shown.stakes.big_blind == 2 and shown.version == table.version
    assert listing_of("t1", None) is None


def test_a_page_token_goes_back_to_where_its_page_ended_with_the_same_filters() -> None:
    filters = ListFilter(game="holdem")
    token = page_token("t-17", filters)
    assert after_of(token, filters) == "t-17"
    assert after_of("", filters) == ""
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize(
    "forged",
    [
        "x",
        "not-a-token",
        base64.urlsafe_b64encode(b"\x01" + b"\x00" * 8 + b"t-17").decode(),  # wrong check
        base64.urlsafe_b64encode(b"\x02" + b"\x00" * 8).decode(),
        "A" * 300,
    ],
)
def test_a_forged_page_token_is_invalid_argument(forged: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        after_of(forged, ListFilter())
    assert refused.value.field == "page_token"


def test_a_token_of_other_filters_or_altered_is_refused() -> None:
    token = page_token("t-17", ListFilter(game="holdem"))
    with pytest.raises(InvalidArgument):
        after_of(token, ListFilter(game="omaha"))
    with pytest.raises(InvalidArgument):
        after_of(token[:-1] + ("A" if token[-1] != "A" else "B"), ListFilter(game="holdem"))


def test_page_sizes() -> None:
    assert page_size_of(0) == DEFAULT_PAGE_SIZE
    assert page_size_of(1000) == 1000
    for bad in (-1, 1001):
        with pytest.raises(InvalidArgument, match="page_size must be 1-1000"):
            page_size_of(bad)


def test_filters() -> None:
    full = listing("t1", players=6, stakes=pb.Stakes(big_blind=4), real_money=True)
    assert ListFilter().matches(full)
    assert not ListFilter(has_free_seats=True).matches(full)
    assert ListFilter(big_blind=4, real_money=True, game="holdem").matches(full)
    assert not ListFilter(real_money=False).matches(full)
    assert not ListFilter(structure=pb.BETTING_STRUCTURE_POT_LIMIT).matches(full)


def test_pages_cover_every_listed_table_once_and_skip_creations() -> None:
    tables, _ = index()
    for n in range(7):
        tables.apply(f"t{n}", listing(f"t{n}").SerializeToString(), deleted=False)
    tables.apply(
        "t9", pb.TableListing(table_id="t9", creating=True).SerializeToString(), deleted=False
    )
    seen, after = [], ""
    for _ in range(10):
        page, after = tables.page(ListFilter(), after, 3)
        seen += [each.table_id for each in page]
        if not after:
            break
    assert seen == [f"t{n}" for n in range(7)]
    assert tables.open_tables()[-1] == "t9"  # a candidate of the scan, not listed
    tables.apply("t3", None, deleted=True)
    assert "t3" not in tables.open_tables()


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("t1", b"\xff\xff\xff", "undecodable"),
        ("t1", pb.TableListing(table_id="t2").SerializeToString(), "wrong_table"),
        ("a.b", pb.TableListing(table_id="a.b").SerializeToString(), "bad_key"),
        ("t1", pb.TableListing(table_id="t1", players=-1).SerializeToString(), "out_of_range"),
    ],
)
def test_a_hostile_value_is_skipped_and_counted(key: str, value: bytes, reason: str) -> None:
    tables, registry = index()
    tables.apply(key, value, deleted=False)
    assert tables.open_tables() == []
    counted = registry.get_sample_value(
        "poker_dealer_table_index_refused_total", {"reason": reason}
    )
    assert counted == 1


def test_an_older_value_does_not_replace_a_newer_one() -> None:
    tables, _ = index()
    tables.apply("t1", listing("t1", version=9, players=3).SerializeToString(), deleted=False)
    tables.apply("t1", listing("t1", version=4, players=1).SerializeToString(), deleted=False)
    assert tables.view["t1"].players == 3


class _Bucket:
    """The bucket's put and purge, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def put(self, key: str, value: bytes, validate_keys: bool = True) -> int:
        self.calls.append(("put", key))
        return len(self.calls)

    async def purge(self, key: str, msg_ttl: float | None = None) -> bool:
        self.calls.append(("purge", key))
        return True


async def test_a_creation_reserved_after_a_takeover_found_no_table_is_not_purged_after() -> None:
    """A CreateTable takes the id over first (no table: a delete is queued), then reserves
    its entry: the queued delete must not land after the reservation (the table would exist
    unlisted, and no scan would ever take it)."""
    tables, _ = index()
    bucket = _Bucket()
    tables._kv = cast(Any, bucket)
    tables.rewrite("t1", None)
    await tables.reserve("t1")
    assert bucket.calls == [("put", "t1")]
    assert "t1" not in tables._pending and tables.open_tables() == ["t1"]
