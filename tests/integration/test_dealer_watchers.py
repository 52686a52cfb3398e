"""WatchTable's fan-out over real gRPC and a real nats-server: many streams on one table share
one NATS consumer (asked of the server), each sees every event once and in order, redacted for
its viewer, whether it joined at the start or caught up from the log mid-hand; the per-caller
stream cap; and a reader that stops reading is cut off with a bounded backlog while the others
go on."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import grpc
import nats
import pytest

from poker.dealer.redaction import SeatTracker, redact_event
from poker.dealer.watchers import WatchHub
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import eventually
from poker.tools.bot import choose_action
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.integration.test_dealer_grpc import open_table, seat, until_hand
from tests.log_support import opened_batch

SECRET = new_secret()
STREAMS = 60
PLAYERS = ("ann", "bob", "cat")


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    settings = namespace_settings(nats_server.url, SECRET, max_streams_per_caller=3)
    async with DealerHarness(settings) as harness:
        yield harness


async def until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    """Wait (bounded) until ``condition()`` holds."""

    async def probe() -> bool:
        return condition()

    await eventually(probe, bool, timeout_s=timeout_s)


def hub(dealer: DealerHarness) -> WatchHub:
    assert dealer.dealer is not None and dealer.dealer.tables.watchers is not None
    return dealer.dealer.tables.watchers


class Stream:
    """One WatchTable stream read in the background into ``events``."""

    def __init__(self, client: Client, table_id: str, from_seq: int = 0) -> None:
        self.viewer = client.subject
        self.call = client.stub.WatchTable(
            dpb.WatchTableRequest(table_id=table_id, from_seq=from_seq),
            metadata=client.metadata,
            timeout=60,
        )
        self.events: list[pb.TableEvent] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for response in self.call:
            self.events.append(response.event)

    def versions(self) -> list[int]:
        return [event.version for event in self.events]

    async def close(self) -> None:
        self.call.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def expected_events(
    dealer: DealerHarness, table_id: str, viewer: str | None, from_seq: int = 0
) -> list[pb.TableEvent]:
    """The log's events after ``from_seq`` as ``viewer`` may see them (the old per-stream way)."""
    assert dealer.dealer is not None
    seats = SeatTracker()
    out = []
    async for record in dealer.dealer.repository.read(table_id):
        for event in opened_batch(record).events:
            seats.apply(event)
            if event.version > from_seq:
                out.append(redact_event(event, seats.seat_of(viewer)))
    return out


async def table_consumers(nats_server: NatsServer, stream: str, subject: str) -> int:
    """The consumers the server has on ``stream`` for ``subject`` (the dealer's feeds)."""
    client = await nats.connect(nats_server.url)
    try:
        consumers = await client.jetstream().consumers_info(stream)
    finally:
        await client.close()
    return sum(1 for info in consumers if info.config.filter_subject == subject)


async def play_one_hand(dealer: DealerHarness, table_id: str) -> None:
    players = {name: dealer.client(name) for name in PLAYERS}
    view = await until_hand(players["ann"], table_id)
    hand_id = view.hand.hand_id
    for _ in range(60):
        view = await players["ann"].table(table_id)
        if view.hand.hand_id != hand_id or not view.hand.seat_to_act:
            return
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        action, amount = choose_action(view)
        await players[to_act.player_id].act(table_id, hand_id, action, amount)
    raise AssertionError("the hand did not end")


async def test_many_streams_share_one_consumer_and_each_sees_its_own_redacted_events(
    dealer: DealerHarness, nats_server: NatsServer
) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await open_table(operator, pause_ms=60_000)
    viewers = [*PLAYERS, *(f"fan-{n}" for n in range(STREAMS - len(PLAYERS) - 10))]
    early = [Stream(dealer.client(name), table_id) for name in viewers]
    for number, name in enumerate(PLAYERS, start=1):
        await seat(dealer.client(name), table_id, number)
    await until_hand(operator, table_id)
    # Ten more join mid-hand, some from the start of the log (they catch up from it, then
    # join the shared feed), some from the version the table is at now (no catch-up).
    now = (await operator.table(table_id)).version
    late = [Stream(dealer.client(f"late-{n}"), table_id, 0 if n % 2 else now) for n in range(10)]
    streams = [*early, *late]
    await play_one_hand(dealer, table_id)
    version = (await operator.table(table_id)).version
    await until(lambda: all(s.events and s.versions()[-1] == version for s in streams))
    assert len(streams) >= 50
    assert hub(dealer).feeds() == 1
    subject = f"{dealer.settings.table_subject_prefix}.{table_id}"
    # The catch-up reads' own consumers go once read; the feed's stays: exactly one.
    count = await eventually(
        lambda: table_consumers(nats_server, dealer.settings.table_stream, subject),
        lambda n: n == 1,
    )
    assert count == 1

    for stream in streams:
        first = 0 if stream in early or int(stream.viewer.split("-")[1]) % 2 else now
        want = await expected_events(dealer, table_id, stream.viewer, first)
        assert stream.versions() == list(range(first + 1, version + 1))
        assert [e.SerializeToString() for e in stream.events] == [
            e.SerializeToString() for e in want
        ]
    # Each player saw his own hole cards and nobody else's; the fans saw none.
    dealt = next(e for e in early[0].events if e.WhichOneof("body") == "hole_cards_dealt")
    downs = {hand.seat: hand.down for hand in dealt.hole_cards_dealt.hands}
    assert "?" not in downs[1] and all(set(d) == {"?"} for s, d in downs.items() if s != 1)
    for stream in early[len(PLAYERS) :]:
        seen = next(e for e in stream.events if e.WhichOneof("body") == "hole_cards_dealt")
        assert all(set(h.down) == {"?"} for h in seen.hole_cards_dealt.hands)

    for stream in streams:
        await stream.close()
    # The last watcher gone, the feed stops and its consumer goes with it.
    await until(lambda: hub(dealer).feeds() == 0)
    await eventually(
        lambda: table_consumers(nats_server, dealer.settings.table_stream, subject),
        lambda n: n == 0,
        timeout_s=30,
    )


async def test_a_caller_may_hold_only_so_many_streams(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await open_table(operator)
    fan = dealer.client("fan")
    streams = [Stream(fan, table_id) for _ in range(3)]
    await until(lambda: all(s.events for s in streams))
    refused = fan.stub.WatchTable(
        dpb.WatchTableRequest(table_id=table_id), metadata=fan.metadata, timeout=5
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in refused:
            pass
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "3 WatchTable streams open" in (caught.value.details() or "")
    # Someone else is not counted against the fan; and a closed stream frees its place.
    other = Stream(dealer.client("other"), table_id)
    await streams[0].close()
    again = Stream(fan, table_id)
    await until(lambda: bool(again.events and other.events))
    for stream in (*streams[1:], other, again):
        await stream.close()


async def sit_out_and_in(player: Client, table_id: str, times: int) -> None:
    """``times`` SitOut + SitIn pairs of a lone player: two batches each, fast."""
    for _ in range(times):
        for method, request in (
            ("SitOut", dpb.SitOutRequest(command_id=uuid.uuid4().hex, table_id=table_id, seat=1)),
            ("SitIn", dpb.SitInRequest(command_id=uuid.uuid4().hex, table_id=table_id, seat=1)),
        ):
            await player.call(method, request)


async def test_a_reader_that_stops_reading_is_cut_off_and_the_others_go_on(
    nats_server: NatsServer,
) -> None:
    settings = namespace_settings(nats_server.url, SECRET, watch_backlog=8)
    async with DealerHarness(settings) as dealer:
        operator = dealer.client("op", Role.OPERATOR)
        table_id = await open_table(operator)
        ann = dealer.client("ann")
        await seat(ann, table_id, 1)
        fast = [Stream(dealer.client(f"fast-{n}"), table_id) for n in range(5)]
        # The slow reader: a small HTTP/2 window, reads one event and then nothing.
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{dealer.port}",
            options=[("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)],
        ) as channel:
            slow_client = Client(channel, SECRET, "slow", Role.PLAYER)
            slow = slow_client.stub.WatchTable(
                dpb.WatchTableRequest(table_id=table_id),
                metadata=slow_client.metadata,
                timeout=120,
            )
            first = await slow.read()
            assert isinstance(first, dpb.WatchTableResponse) and first.event.version == 1
            registry = hub(dealer).metrics.registry

            def dropped() -> float:
                labels = {"reason": "slow"}
                return registry.get_sample_value("poker_dealer_watchers_dropped_total", labels) or 0

            peak = 0

            async def sample_backlogs() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, *hub(dealer).backlogs(table_id), 0)
                    await asyncio.sleep(0)

            sampler = asyncio.create_task(sample_backlogs())
            for _ in range(40):  # bounded: at most 40 x 50 x 2 batches
                await sit_out_and_in(ann, table_id, 50)
                if dropped() >= 1:
                    break
            await sit_out_and_in(ann, table_id, 50)  # and the others go on after the cut
            sampler.cancel()
            assert dropped() == 1, "the slow reader was never cut off"
            # Its backlog was freed at once; no watcher's backlog ever passed the bound.
            assert peak <= 8
            assert len(hub(dealer).backlogs(table_id)) == len(fast)
            version = (await operator.table(table_id)).version
            await until(lambda: all(s.versions()[-1:] == [version] for s in fast))
            for stream in fast:
                assert stream.versions() == list(range(1, version + 1))
            # Reading again, the slow stream gets what gRPC had buffered, then the sentence.
            got: list[int] = [1]
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                while isinstance(response := await slow.read(), dpb.WatchTableResponse):
                    got.append(response.event.version)
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            details = caught.value.details() or ""
            assert "fell more than 8 batches behind" in details
            resume = int(details.rsplit(" ", 1)[1].rstrip("."))
            assert got == list(range(1, resume + 1)) and resume < version
            print(f"cut off at version {resume} of {version}; backlogs peaked at {peak}")
        # Watching again from there continues without a gap.
        again = Stream(dealer.client("slow"), table_id, resume)
        await until(lambda: again.versions()[-1:] == [version])
        assert again.versions() == list(range(resume + 1, version + 1))
        for stream in (*fast, again):
            await stream.close()


async def test_streams_joining_while_the_table_moves_miss_nothing_and_repeat_nothing(
    nats_server: NatsServer,
) -> None:
    """Streams open from version 0 (catch-up from the log, then the shared feed) and from
    recent versions while commands land: each gets exactly the versions after its start."""
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as dealer:
        operator = dealer.client("op", Role.OPERATOR)
        table_id = await open_table(operator)
        ann = dealer.client("ann")
        await seat(ann, table_id, 1)
        moving = asyncio.create_task(sit_out_and_in(ann, table_id, 60))
        streams: list[tuple[int, Stream]] = []
        for n in range(24):  # bounded: 24 joins spread over the 120 appends
            start = 0 if n % 2 else (await operator.table(table_id)).version
            streams.append((start, Stream(dealer.client(f"joiner-{n}"), table_id, start)))
            await asyncio.sleep(0.005)
        await moving
        version = (await operator.table(table_id)).version
        await until(lambda: all(s.versions()[-1:] == [version] for _, s in streams))
        for start, stream in streams:
            assert stream.versions() == list(range(start + 1, version + 1))
        assert hub(dealer).feeds() == 1
        for _, stream in streams:
            await stream.close()
