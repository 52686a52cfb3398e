"""One contract, three event stores: the in-memory one, JetStream on a real nats-server, and
JetStream as the wallet reaches the table log: from its own NATS account, through the services
it imports (the API under ``$JS.TABLES.API``, appends to the table subjects), reading by batch
direct get (small batches here, so that every read spans several)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import nats
import nats.js.errors
import pytest

from poker.eventstore.api import ConcurrencyConflict, DuplicateAppend, EventStore, Record
from poker.eventstore.jetstream import BatchDirectGet, JetStreamEventStore, StreamSettings
from poker.eventstore.memory import InMemoryEventStore
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import TABLES_API_PREFIX, WALLET_USER, inbox_prefix
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_event_store


@pytest.fixture(params=["memory", "jetstream", "jetstream-imported"])
async def store(
    request: pytest.FixtureRequest, nats_server: NatsServer
) -> AsyncIterator[EventStore]:
    """Each contract test runs once per implementation."""
    if request.param == "memory":
        yield InMemoryEventStore()
        return
    client = await nats.connect(nats_server.url)
    try:
        provisioned = await provisioned_event_store(client.jetstream())
        if request.param == "jetstream":
            yield provisioned
            return
        # The deployed names (the test server's first namespace): the wallet's user, its
        # account importing them from the dealer's.
        credentials = load_credentials(str(nats_server.credentials(WALLET_USER)))
        wallet = await nats.connect(
            nats_server.service_url,
            user=credentials.user,
            password=credentials.password,
            inbox_prefix=inbox_prefix(WALLET_USER),
        )
        try:
            yield JetStreamEventStore(
                wallet.jetstream(prefix=TABLES_API_PREFIX),
                provisioned.settings,
                direct=BatchDirectGet(wallet, TABLES_API_PREFIX, batch=7),
            )
        finally:
            await wallet.drain()
    finally:
        await client.drain()


def new_key() -> str:
    """A fresh log per test: tests share one JetStream stream."""
    return f"t-{uuid.uuid4().hex[:12]}"


async def read_all(store: EventStore, key: str, after: int = 0) -> list[Record]:
    return [record async for record in store.read(key, after)]


async def test_an_empty_log_is_at_position_zero_and_reads_nothing(store: EventStore) -> None:
    key = new_key()
    assert await store.last_position(key) == 0
    assert await read_all(store, key) == []


async def test_appends_read_back_in_order_with_their_ids(store: EventStore) -> None:
    key = new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    second = await store.append(key, b"two", expected_position=first, msg_id="c2")
    assert 0 < first < second
    records = await read_all(store, key)
    assert [(r.position, r.msg_id, r.data) for r in records] == [
        (first, "c1", b"one"),
        (second, "c2", b"two"),
    ]
    assert await store.last_position(key) == second


async def test_read_after_a_position_returns_only_later_records(store: EventStore) -> None:
    key = new_key()
    position = 0
    for index in range(5):
        position = await store.append(
            key, b"%d" % index, expected_position=position, msg_id=f"c{index}"
        )
    middle = (await read_all(store, key))[2].position
    assert [r.data for r in await read_all(store, key, after=middle)] == [b"3", b"4"]
    assert await read_all(store, key, after=position) == []


async def test_read_batches_gives_what_read_gives_in_nonempty_lists(store: EventStore) -> None:
    key = new_key()
    position = 0
    for index in range(40):
        position = await store.append(
            key, b"%d" % index, expected_position=position, msg_id=f"c{index}"
        )
    middle = (await read_all(store, key))[9].position
    for after in (0, middle, position):
        batches = [batch async for batch in store.read_batches(key, after)]
        assert all(batches)
        assert [r for batch in batches for r in batch] == await read_all(store, key, after)


async def test_a_read_ends_at_the_last_record_present_when_it_began(store: EventStore) -> None:
    key = new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    reading = store.read(key)
    assert (await anext(reading)).position == first
    await store.append(key, b"two", expected_position=first, msg_id="c2")
    assert [record async for record in reading] == []


async def test_a_stale_expected_position_is_a_conflict_and_appends_nothing(
    store: EventStore,
) -> None:
    key = new_key()
    position = await store.append(key, b"one", expected_position=0, msg_id="c1")
    with pytest.raises(ConcurrencyConflict) as caught:
        await store.append(key, b"stale", expected_position=0, msg_id="c2")
    assert caught.value.actual == position
    assert [r.data for r in await read_all(store, key)] == [b"one"]


async def test_a_retried_append_lands_once(store: EventStore) -> None:
    key = new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="same")
    again = await store.append(key, b"one", expected_position=0, msg_id="same")
    assert again == first
    assert len(await read_all(store, key)) == 1


async def test_a_retry_after_other_appends_still_lands_once(store: EventStore) -> None:
    key = new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    await store.append(key, b"two", expected_position=first, msg_id="c2")
    assert await store.append(key, b"one", expected_position=0, msg_id="c1") == first
    assert [r.data for r in await read_all(store, key)] == [b"one", b"two"]


async def test_a_used_id_with_other_data_is_a_duplicate_naming_the_first_record(
    store: EventStore,
) -> None:
    """The dealer's wedge of issue #10: the id's first record is reported, never a new one.

    The expected position is the log's real end, so JetStream's own check passes and only the
    duplicate window stands between the append and the log.
    """
    key = new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    second = await store.append(key, b"two", expected_position=first, msg_id="c2")
    with pytest.raises(DuplicateAppend) as caught:
        await store.append(key, b"other", expected_position=second, msg_id="c1")
    assert (caught.value.key, caught.value.msg_id, caught.value.position) == (key, "c1", first)
    assert [r.data for r in await read_all(store, key)] == [b"one", b"two"]
    assert await store.last_position(key) == second
    # The log goes on: the next append lands where the writer expects it.
    third = await store.append(key, b"three", expected_position=second, msg_id="c3")
    assert third > second


async def test_a_used_id_with_other_data_at_a_stale_position_is_a_duplicate(
    store: EventStore,
) -> None:
    key = new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    await store.append(key, b"two", expected_position=first, msg_id="c2")
    with pytest.raises(DuplicateAppend) as caught:
        await store.append(key, b"other", expected_position=0, msg_id="c1")
    assert caught.value.position == first
    assert [r.data for r in await read_all(store, key)] == [b"one", b"two"]


async def test_read_at_gives_the_record_at_a_position_of_its_own_log_only(
    store: EventStore,
) -> None:
    key, other = new_key(), new_key()
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    elsewhere = await store.append(other, b"x", expected_position=0, msg_id="c1")
    record = await store.read_at(key, first)
    assert record is not None
    assert (record.key, record.position, record.msg_id, record.data) == (key, first, "c1", b"one")
    assert await store.read_at(key, elsewhere) is None
    assert await store.read_at(key, elsewhere + 1000) is None
    assert await store.read_at(key, 0) is None


async def test_two_writers_racing_on_one_position_one_wins(store: EventStore) -> None:
    key = new_key()
    results = await asyncio.gather(
        *(
            store.append(key, f"w{n}".encode(), expected_position=0, msg_id=f"w{n}")
            for n in range(8)
        ),
        return_exceptions=True,
    )
    winners = [result for result in results if isinstance(result, int)]
    conflicts = [result for result in results if isinstance(result, ConcurrencyConflict)]
    assert len(winners) == 1
    assert len(conflicts) == 7
    assert len(await read_all(store, key)) == 1


async def test_logs_are_independent(store: EventStore) -> None:
    first_key, second_key = new_key(), new_key()
    await store.append(first_key, b"a", expected_position=0, msg_id="c1")
    await store.append(second_key, b"b", expected_position=0, msg_id="c1")
    assert [r.data for r in await read_all(store, first_key)] == [b"a"]
    assert [r.data for r in await read_all(store, second_key)] == [b"b"]


@pytest.mark.parametrize("key", ["", "a.b", "a b", "t*", ">", "x" * 129])
async def test_a_key_that_is_not_one_subject_token_is_refused(store: EventStore, key: str) -> None:
    with pytest.raises(ValueError, match="not a valid log key"):
        await store.append(key, b"x", expected_position=0, msg_id="c1")


async def test_the_jetstream_stream_refuses_purge_and_lets_the_operator_delete_one_message(
    nats_server: NatsServer,
) -> None:
    """Never purged; one message may be deleted, by the operator alone (the services' users
    have no MSG.DELETE permission): a record the checks refuse (pokerctl log remove-record)."""
    client = await nats.connect(nats_server.url)  # the admin user
    try:
        # A table stream of its own, provisioned as the room's is (deny_delete off: JetStream
        # cannot switch it off on a stream another test made with it on).
        name = uuid.uuid4().hex[:8]
        settings = StreamSettings(stream=f"DEL_{name}", subject_prefix=f"del{name}.table")
        store = await provisioned_event_store(client.jetstream(), settings, deny_delete=False)
        key = new_key()
        position = await store.append(key, b"kept", expected_position=0, msg_id="c1")
        forged = await store.append(key, b"forged", expected_position=position, msg_id="c2")
        manager = client.jetstream()
        with pytest.raises(nats.js.errors.APIError):
            await manager.purge_stream(settings.stream)
        assert await manager.delete_msg(settings.stream, forged)
        assert await store.last_position(key) == position
    finally:
        await client.drain()


async def test_headers_of_an_append_read_back_with_their_record(store: EventStore) -> None:
    key = new_key()
    first = await store.append(
        key, b"one", expected_position=0, msg_id="c1", headers={"Poker-Seal": "k:0:abc"}
    )
    await store.append(key, b"two", expected_position=first, msg_id="c2")
    records = await read_all(store, key)
    assert [dict(r.headers) for r in records] == [{"Poker-Seal": "k:0:abc"}, {}]
    batches = [record async for batch in store.read_batches(key) for record in batch]
    assert [dict(r.headers) for r in batches] == [{"Poker-Seal": "k:0:abc"}, {}]


@pytest.mark.parametrize(
    "headers",
    [
        {"Nats-Msg-Id": "x"},
        {"Nats-Expected-Last-Subject-Sequence": "9"},
        {"Bad Name": "v"},
        {"Poker-Seal": "line\nbreak"},
    ],
)
async def test_headers_that_are_not_the_writers_own_are_refused(
    store: EventStore, headers: dict[str, str]
) -> None:
    key = new_key()
    with pytest.raises(ValueError):
        await store.append(key, b"one", expected_position=0, msg_id="c1", headers=headers)
    assert await store.last_position(key) == 0


async def test_every_record_carries_the_time_the_store_took_it(store: EventStore) -> None:
    """``stored_at`` is the store's clock at the append (JetStream: the server's), the same on
    every read path (a consumer's delivery, a direct get) and for every reader: the time the
    wallet-close rule reads, which no writer chooses."""
    key = new_key()
    before = time.time_ns() // 1_000_000
    first = await store.append(key, b"one", expected_position=0, msg_id="c1")
    second = await store.append(key, b"two", expected_position=first, msg_id="c2")
    after = time.time_ns() // 1_000_000
    records = await read_all(store, key)
    stamps = [record.stored_at for record in records]
    assert all(stamp is not None and before - 5 <= stamp <= after + 5 for stamp in stamps), (
        before,
        stamps,
        after,
    )
    assert stamps[0] is not None and stamps[1] is not None and stamps[0] <= stamps[1]
    batches = [record async for batch in store.read_batches(key) for record in batch]
    assert [record.stored_at for record in batches] == stamps
    at = [await store.read_at(key, position) for position in (first, second)]
    assert [record.stored_at for record in at if record is not None] == stamps


async def test_jetstream_finds_a_logs_first_record_stored_at_or_after_an_instant(
    store: EventStore,
) -> None:
    if not isinstance(store, JetStreamEventStore):
        pytest.skip("locating by time is JetStream's (a direct get by start time)")
    key, other = new_key(), new_key()
    for n in range(3):
        await store.append(
            other, b"o", expected_position=await store.last_position(other), msg_id=f"o{n}"
        )
        await store.append(
            key, b"k", expected_position=await store.last_position(key), msg_id=f"k{n}"
        )
    records = await read_all(store, key)
    assert await store.first_position_at(key, 0) == records[0].position
    for record in records:
        assert record.stored_at is not None
        first = next(
            r for r in records if r.stored_at is not None and r.stored_at >= record.stored_at
        )
        assert await store.first_position_at(key, record.stored_at) == first.position
    assert await store.first_position_at(key, records[-1].stored_at + 60_000) is None  # type: ignore[operator]
