"""The index of open tables (poker/dealer/index.py) on a real authorizing nats-server: closed
tables leave it and are never rebuilt again (not by a restart, not by the scanner), ListTables
pages through it (every open table once, filters, refused page sizes and forged tokens), and its
crash windows heal (a creation reserved but never appended, a lost write, an empty index over a
stream that is not)."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest
from nats.js.kv import KeyValue
from prometheus_client import CollectorRegistry

from poker.dealer.index import TableIndex
from poker.dealer.metrics import DealerMetrics
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

SECRET = new_secret()
REBUILDS = "poker_dealer_replay_duration_seconds_count"


def cid() -> str:
    return uuid.uuid4().hex


async def create(
    operator: Client, game: str = "holdem", *, big_blind: int = 2, seats: int = 6
) -> str:
    structure = (
        pb.BETTING_STRUCTURE_NO_LIMIT if game == "holdem" else pb.BETTING_STRUCTURE_POT_LIMIT
    )
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game=game,
            structure=structure,
            stakes=pb.Stakes(small_blind=big_blind // 2, big_blind=big_blind),
            seat_count=seats,
            pause_between_hands_ms=60_000,
            action_timer_ms=30_000,
        ),
    )
    return str(reply.table_id)


async def close(operator: Client, table_id: str) -> None:
    await operator.call(
        "CloseTable", dpb.CloseTableRequest(command_id=cid(), table_id=table_id, reason="done")
    )


async def sit(harness: DealerHarness, player: str, table_id: str, seat: int) -> None:
    await harness.client(player).call(
        "SitDown", dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=seat, buy_in=100)
    )


def index_of(harness: DealerHarness) -> TableIndex:
    assert harness.dealer is not None
    return harness.dealer.index


async def bucket(harness: DealerHarness) -> KeyValue:
    """The index bucket, as the dealer's own NATS user reaches it."""
    assert harness.dealer is not None
    return await harness.dealer.nats.jetstream().key_value(harness.settings.table_index_bucket)


async def stored_keys(harness: DealerHarness) -> list[str]:
    """The tables the bucket lists now, as a fresh reader of it loads them (as the dealer's
    user), and the keys of the values it skipped."""
    assert harness.dealer is not None
    registry = CollectorRegistry()
    reader = TableIndex(
        harness.dealer.nats.jetstream(),
        harness.settings.table_index_bucket,
        DealerMetrics(registry),
    )
    await reader.start()
    await reader.stop()
    return reader.open_tables()


def metric(harness: DealerHarness, name: str) -> float:
    return harness.registry.get_sample_value(name) or 0.0


async def list_all(operator: Client, **filters: object) -> tuple[list[str], int]:
    """Every table ListTables lists, following the page tokens (page_size 2); the pages."""
    ids: list[str] = []
    token, pages = "", 0
    while True:
        request = dpb.ListTablesRequest(page_size=2, page_token=token, **filters)  # type: ignore[arg-type]
        reply = await operator.call("ListTables", request)
        ids += [summary.table_id for summary in reply.tables]
        pages += 1
        token = reply.next_page_token
        if not token or pages > 50:
            return ids, pages


async def test_closed_tables_leave_the_index_and_a_restart_rebuilds_none(
    nats_server: NatsServer,
) -> None:
    namespace = uuid.uuid4().hex[:10]
    settings = namespace_settings(nats_server.url, SECRET, namespace)
    async with DealerHarness(settings) as first:
        operator = first.client("op", Role.OPERATOR)
        tables = [await create(operator) for _ in range(5)]
        for table_id in tables[:3]:
            await close(operator, table_id)
        await index_of(first).flush()
        open_tables = sorted(tables[3:])
        assert await stored_keys(first) == open_tables
        assert index_of(first).open_tables() == open_tables
        listed, _ = await list_all(operator)
        assert listed == open_tables
    # The next dealer rebuilds the open tables only: no closed table is taken, read or let go.
    second = DealerHarness(namespace_settings(nats_server.url, SECRET, namespace))
    async with second:
        assert metric(second, REBUILDS) == len(open_tables)
        assert metric(second, "poker_dealer_table_index_repairs_total") == 0
        assert sorted(second.dealer.ownership.owned()) == open_tables  # type: ignore[union-attr]
        await second.dealer.scanner.scan_once()  # type: ignore[union-attr]
        assert metric(second, REBUILDS) == len(open_tables)  # the scanner takes none again


async def test_list_tables_pages_through_every_open_table_once_with_its_filters(
    nats_server: NatsServer,
) -> None:
    settings = namespace_settings(nats_server.url, SECRET)
    async with DealerHarness(settings) as harness:
        operator = harness.client("op", Role.OPERATOR)
        holdem = [await create(operator, "holdem") for _ in range(4)]
        omaha = [await create(operator, "omaha", big_blind=4) for _ in range(3)]
        full = await create(operator, "holdem", seats=2)
        await sit(harness, "ann", full, 1)
        await sit(harness, "bob", full, 2)
        closed = await create(operator)
        await close(operator, closed)
        await index_of(harness).flush()
        everything = sorted([*holdem, *omaha, full])
        listed, pages = await list_all(operator)
        assert listed == everything and pages == 4  # each open table once, in id order
        assert (await list_all(operator, game="omaha"))[0] == sorted(omaha)
        assert (await list_all(operator, big_blind=4))[0] == sorted(omaha)
        structure = pb.BETTING_STRUCTURE_NO_LIMIT
        assert (await list_all(operator, structure=structure))[0] == sorted([*holdem, full])
        assert (await list_all(operator, has_free_seats=True))[0] == sorted([*holdem, *omaha])
        assert (await list_all(operator, money=dpb.MONEY_FILTER_REAL))[0] == []
        assert (await list_all(operator, money=dpb.MONEY_FILTER_PLAY))[0] == everything
        reply = await operator.call("ListTables", dpb.ListTablesRequest())
        row = next(summary for summary in reply.tables if summary.table_id == full)
        assert (row.players, row.seat_count, row.game) == (2, 2, "holdem")
        assert not reply.next_page_token  # 8 tables: one page of 100


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"page_size": 1001}, "page_size"),
        ({"page_size": -1}, "page_size"),
        ({"page_token": "bm90LWEtdG9rZW4"}, "page_token"),  # base64 of "not-a-token"
        ({"page_token": "x" * 300}, "page_token"),
        ({"page_token": "a/b"}, "page_token"),
    ],
)
async def test_a_bad_page_size_or_a_forged_token_is_invalid_argument(
    nats_server: NatsServer, request_fields: dict[str, object], field: str
) -> None:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        operator = harness.client("op", Role.OPERATOR)
        request = dpb.ListTablesRequest(**request_fields)  # type: ignore[arg-type]
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await operator.call("ListTables", request)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in (refused.value.details() or "")


async def test_a_token_is_valid_only_with_the_filters_it_came_with(
    nats_server: NatsServer,
) -> None:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        operator = harness.client("op", Role.OPERATOR)
        for _ in range(3):
            await create(operator)
        reply = await operator.call("ListTables", dpb.ListTablesRequest(page_size=1))
        assert reply.next_page_token
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await operator.call(
                "ListTables",
                dpb.ListTablesRequest(page_size=1, page_token=reply.next_page_token, game="omaha"),
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        # A token altered by one character is refused too.
        token = reply.next_page_token
        forged = token[:-1] + ("A" if token[-1] != "A" else "B")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await operator.call("ListTables", dpb.ListTablesRequest(page_size=1, page_token=forged))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_the_index_heals_after_a_crash_between_an_append_and_its_write(
    nats_server: NatsServer,
) -> None:
    """A creation reserved but never appended, a seat whose write was lost (the entry says
    nobody sits), hostile values: the next dealer repairs the entries and skips the values."""
    namespace = uuid.uuid4().hex[:10]
    settings = namespace_settings(nats_server.url, SECRET, namespace, lease_ttl_s=1.0)
    first = DealerHarness(settings)
    await first.__aenter__()
    operator = first.client("op", Role.OPERATOR)
    seated = await create(operator)
    await sit(first, "ann", seated, 1)
    await index_of(first).flush()
    kv = await bucket(first)
    # The seat's write lost: the entry as it was before it.
    stale = pb.TableListing()
    stale.CopyFrom(index_of(first).view[seated])
    stale.players, stale.version = 0, 1
    await kv.put(seated, stale.SerializeToString())
    # A creation reserved, then the dealer died before appending it.
    await kv.put(
        "never-made", pb.TableListing(table_id="never-made", creating=True).SerializeToString()
    )
    # Hostile values: not a listing, another table's listing.
    await kv.put("garbage", b"\xff\xff\xff")
    await kv.put("liar", pb.TableListing(table_id="someone-else").SerializeToString())
    assert first.dealer is not None and first.channel is not None
    await first.dealer.crash()
    await first.channel.close()

    second = DealerHarness(namespace_settings(nats_server.url, SECRET, namespace, lease_ttl_s=1.0))
    async with second:
        index = index_of(second)
        refused = "poker_dealer_table_index_refused_total"
        assert second.registry.get_sample_value(refused, {"reason": "undecodable"}) == 1
        assert second.registry.get_sample_value(refused, {"reason": "wrong_table"}) == 1
        # The scanner takes the dead dealer's table once its lease expired: its entry rewritten.
        for _ in range(100):
            await second.dealer.scanner.scan_once()  # type: ignore[union-attr]
            if index.view.get(seated, stale).players == 1 and "never-made" not in index.view:
                break
            await index.flush()
            await _lease_expiry(second)
        assert index.view[seated].players == 1
        assert "never-made" not in index.view
        await index.flush()
        assert await stored_keys(second) == [seated]  # the hostile values skipped
        listed, _ = await list_all(second.client("op", Role.OPERATOR))
        assert listed == [seated]


async def _lease_expiry(harness: DealerHarness) -> None:
    """A tenth of the dead dealer's lease TTL (1 s): the scan is retried, bounded above."""
    await asyncio.sleep(0.1)


async def test_an_empty_index_over_a_stream_that_is_not_is_rebuilt_once(
    nats_server: NatsServer,
) -> None:
    namespace = uuid.uuid4().hex[:10]
    settings = namespace_settings(nats_server.url, SECRET, namespace)
    async with DealerHarness(settings) as first:
        operator = first.client("op", Role.OPERATOR)
        tables = [await create(operator) for _ in range(3)]
        await close(operator, tables[0])
        await index_of(first).flush()
        kv = await bucket(first)
        for table_id in tables[1:]:
            await kv.purge(table_id)  # an index lost (or a room from before it)
    async with DealerHarness(namespace_settings(nats_server.url, SECRET, namespace)) as second:
        assert metric(second, "poker_dealer_table_index_repairs_total") == 1
        await index_of(second).flush()
        assert index_of(second).open_tables() == sorted(tables[1:])
        assert await stored_keys(second) == sorted(tables[1:])
