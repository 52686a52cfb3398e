"""Service benchmarks: the dealer over gRPC and JetStream, next to raw JetStream on the same server.

Everything runs on 127.0.0.1 against one real ``nats-server`` (:mod:`poker.testing.nats_server`,
a temporary store directory) started here and stopped at the end.

* **Play.** A real dealer process (``python -m poker.dealer``, a child process as in
  tests/faults: its own interpreter and GIL, as in production, default log level ``info`` with
  the log going to a file) serves the tables of each :data:`SCENARIOS` entry, :data:`PLAYERS`
  bots each (no-limit Hold'em 1/2, a 1 ms pause between hands). The bots run in this process
  (no garbage collection while timed), one task per table: Act for the seat to act (check/call
  mostly, min-raise 15 %, fold 7 % of calls), reading the next seat to act and its options from
  Act's reply (GetTable only between hands and when a reply has no table), a few hands per table
  or :data:`PLAY_CAP_S`, whichever comes first. The bots act over a Play stream each (one message
  per action) or with one unary Act call per action (``BENCH_BOT_TRANSPORT``, both by default);
  either way one action in flight per table. Saturation scenarios act as soon as it is a bot's
  turn (the most the dealer can take: the Act latency there is mostly queueing, p50 ~ tables /
  throughput); the paced scenario has the bots think :data:`PACED_THINK_S` on average
  (exponentially distributed, so actions arrive at random as from independent players) at 100
  tables: the Act latency below saturation. The human-pace scenario plays 2,000 tables for a fixed
  window with the bots thinking 2 s on average, each player at eight tables over his one Play
  stream (multi-tabling; a table's commands wait for the player's other tables' on that stream):
  the latency and each process's CPU (dealer, bots, nats-server) at a real room's load.
  Hands/s and events/s are counted from the log itself (events whose ``occurred_at`` falls in
  the timed window), the Act latency is the client's, call to reply.
* **Raw JetStream.** As many concurrent append chains as tables, each appending with the dealer's
  headers (``Nats-Msg-Id`` and ``Nats-Expected-Last-Subject-Sequence``, request/reply publish, one
  in flight per chain) records of the dealer's mean record size, for :data:`RAW_SECONDS`; the
  dealer process is stopped by then. The peer figure of the dealer's appends/s.
* **Floors** (stream scenarios at saturation). :mod:`bench.shell`, the thinnest dealer possible
  (gRPC in, the same JetStream append, gRPC out; no rules, protobuf, auth, logs or metrics), and
  the same shell answering at once without appending, driven like the bots (as many streams as
  tables, one message in flight each, the dealer's mean request, record and reply sizes): what
  grpc.aio and nats-py alone allow in one Python process on this machine, next to raw JetStream,
  and the dealer next to the shell. The appending shell is also driven paced to the dealer's own
  appends/s: its CPU per append there is the floor at the dealer's rate, where each wake-up of
  the event loop carries as few messages as the dealer's do (at saturation the shell batches
  several per wake-up, which the slower dealer cannot).
* **Rebuild.** A table log of :data:`REPLAY_HANDS` hands played by the pure engine in this process
  (one record per command, as the dealer writes them) is folded by the dealer's
  :class:`~poker.tablelog.repository.TableRepository` with no snapshot, against the raw read of
  the same subject by an ordered consumer (best of :data:`REPEATS` each).
* **Recovery.** A table with 10^6 events in its log is rebuilt from its snapshot plus the events
  after it. The history is built in a few seconds: seat two players, then the prefix is the cheap
  command pair SitOut/SitIn of one player (one event each; the state repeats every pair, checked
  by folding the first records with the engine), packed :data:`BULK_EVENTS_PER_RECORD` events per
  record; then real hands are played by the engine and appended through the repository, which
  writes its snapshot every 100 events as the dealer does, until the tail after the snapshot is
  :data:`RECOVERY_TAIL` events. Reported: the median of :data:`REPEATS` full ``load()`` calls.

Set ``BENCH_DEALER_PROFILE=<file>`` to run the dealer under cProfile (written when it stops),
``BENCH_DEALER_INSTRUCTIONS=<directory>`` to count its instructions per append under callgrind
(:mod:`bench.instructions`: the one dealer figure the machine's load does not move), or
``BENCH_DEALER_STAGES=<directory>`` for its CPU per append by stage (:mod:`bench.sampling`,
py-spy samples). ``BENCH_SCENARIOS`` plays only the
scenarios named, ``BENCH_REBUILD=0`` skips the rebuild figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Final

import grpc
import nats
import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from bench import instructions, sampling
from bench.harness import Result, gc_paused
from bench.policy import choose_action
from bench.shell import METHOD as SHELL_METHOD
from poker.dealer.metrics import DealerMetrics
from poker.engine.betting import Stakes, Structure
from poker.engine.cards import DECK_52
from poker.engine.table import (
    Act,
    Command,
    CreateTable,
    SitDown,
    SitIn,
    SitOut,
    StartNextHand,
    TableState,
    TopUp,
    envelopes,
    evolve,
    execute,
    make_config,
)
from poker.eventstore.aggregate import Loaded
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.snapshots import (
    InMemorySnapshotStore,
    SnapshotSettings,
)
from poker.servicekit.nats_permissions import TableNames
from poker.servicekit.provisioning import DEFAULT_LEASE_TTL_S, Room, TablesSpec
from poker.servicekit.tokens import Role
from poker.tablelog.chain import ChainState, genesis, record_hash
from poker.tablelog.command_ids import CommandIndex, Outcome
from poker.tablelog.repository import LoadedTable, TableLog, TableRepository, decode_batch
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import (
    provision_as_admin,
    provisioned_event_store,
    provisioned_snapshot_store,
)
from poker.testing.service_process import (
    ServiceProcess,
    harness_deck_key_file,
    harness_log_keys_file,
)
from poker.tools.bot import choose_action as choose_wire_action
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb


@dataclass(frozen=True, slots=True)
class Scenario:
    """One play scenario: how many tables, how the bots send, how long they think."""

    tables: int
    transport: str = "stream"
    think_s: float = 0.0
    hands: int = 6
    #: The timed window's cap (the human-pace scenario plays for a fixed time, not hands).
    cap_s: float = 40.0
    #: How many tables each player sits at, playing them all over his one Play stream.
    tables_per_player: int = 1

    @property
    def name(self) -> str:
        """The results' prefix."""
        paced = f".think_{round(1000 * self.think_s)}ms" if self.think_s else ""
        return f"services.play.{self.tables}_tables.{self.transport}{paced}"


ROOT: Final = Path(__file__).resolve().parents[1]
SEED: Final = 20_260_301
PLAYERS: Final = 3
PLAY_CAP_S: Final = 40.0
RAW_SECONDS: Final = 4.0
REPLAY_HANDS: Final = 1_500
RECOVERY_EVENTS: Final = 1_000_000
BULK_EVENTS_PER_RECORD: Final = 200
RECOVERY_TAIL: Final = 60
SNAPSHOT_EVERY: Final = 100
#: ``BENCH_GET_TABLE_EACH_TURN=1``: the bots call GetTable before every Act (two RPCs per action,
#: the loop before Act replies carried the table), for comparisons with older results.
GET_TABLE_EACH_TURN: Final = os.environ.get("BENCH_GET_TABLE_EACH_TURN") == "1"
#: ``BENCH_BOT_TRANSPORT``: how the bots send their actions: ``stream`` (one Play stream per bot,
#: each Act a message on it), ``unary`` (one Act call per action), or ``both`` (the default: each
#: table count is played once per transport, a fresh dealer each time).
BOT_TRANSPORTS: Final = {
    "unary": ("unary",),
    "stream": ("stream",),
    "both": ("unary", "stream"),
}[os.environ.get("BENCH_BOT_TRANSPORT", "both")]
#: How long the paced bots think before each action: 100 tables then offer at most
#: 100 / (0.2 s + Act latency) actions/s, a fraction of what the dealer can take, yet still
#: several times the pace of human players (who take seconds).
PACED_THINK_S: Final = 0.2
#: Human pace: 2,000 tables whose players act every 2 s on average (1,000 actions/s in all),
#: played for a fixed window; the Act latency and each process's CPU at a real room's load.
HUMAN_TABLES: Final = 2_000
HUMAN_THINK_S: Final = 2.0
HUMAN_WINDOW_S: Final = 30.0
#: Players there sit at eight tables each (multi-tabling, as online players do), each playing
#: them over his one Play stream: 750 streams. (One bench process here cannot hold one stream
#: per seat: with 1,500 streams and more open, grpc.aio cancels some of them.)
HUMAN_TABLES_PER_PLAYER: Final = 8
#: The tables whose bots share one gRPC connection.
TABLES_PER_CONNECTION: Final = 200
#: Tables seated at once while a scenario is set up.
SEATING_CONCURRENCY: Final = 50
#: The scenarios, in order: saturation (bots act as soon as it is their turn) at 10 and 100
#: tables over each transport, then 100 tables of paced bots (the Act latency below saturation).
SCENARIOS: Final = (
    *(Scenario(10, transport, hands=40) for transport in BOT_TRANSPORTS),
    *(Scenario(100, transport, hands=6) for transport in BOT_TRANSPORTS),
    Scenario(100, "stream", think_s=PACED_THINK_S, hands=3),
    Scenario(
        HUMAN_TABLES,
        "stream",
        think_s=HUMAN_THINK_S,
        hands=1_000,
        cap_s=HUMAN_WINDOW_S,
        tables_per_player=HUMAN_TABLES_PER_PLAYER,
    ),
)
#: ``BENCH_SCENARIOS``: the scenarios to play, by name without the ``services.play.`` prefix
#: (comma-separated, e.g. ``10_tables.stream,100_tables.stream``; every one by default);
#: ``BENCH_REBUILD=0`` skips the rebuild figures.
ONLY: Final = frozenset(filter(None, os.environ.get("BENCH_SCENARIOS", "").split(",")))
REBUILD: Final = os.environ.get("BENCH_REBUILD", "1") != "0"
REPEATS: Final = 5
_SERVING: Final = re.compile(r"dealer serving grpc=(\S+)")
_SHELL_SERVING: Final = re.compile(r"shell serving grpc=(\S+)")


# --- the dealer process ---------------------------------------------------------------------------


def dealer_process(nats_url: str, namespace: str, secret: bytes, log: Path) -> ServiceProcess:
    """``python -m poker.dealer`` as a child process on loopback port 0 (as in tests/faults),
    its tables under ``namespace``; ``BENCH_DEALER_PROFILE`` runs it under cProfile."""
    profile = os.environ.get("BENCH_DEALER_PROFILE")
    prefix = ["-m", "cProfile", "-o", profile] if profile else []
    # As the operator provisions them before a dealer starts (it creates nothing).
    names = TableNames(
        f"B_{namespace}",
        f"b{namespace}.table",
        f"BS_{namespace}",
        f"BL_{namespace}",
        f"BI_{namespace}",
    )
    lease_ttl = float(os.environ.get("BENCH_LEASE_TTL_S", DEFAULT_LEASE_TTL_S))
    provision_as_admin([nats_url], Room(TablesSpec(names, 1, lease_ttl), wallet=None))
    args = [
        sys.executable,
        *prefix,
        "-m",
        "poker.dealer",
        *("--nats-url", nats_url, "--grpc-port", "0", "--metrics-port", "0"),
        *("--token-secret", secret.hex(), "--table-stream", f"B_{namespace}"),
        *("--table-subject-prefix", f"b{namespace}.table"),
        *("--table-snapshot-bucket", f"BS_{namespace}", "--table-lease-bucket", f"BL_{namespace}"),
        *("--table-index-bucket", f"BI_{namespace}"),
        *("--owner-id", f"bench-{namespace}"),
        *("--log-keys", str(harness_log_keys_file(log.parent, "dealer"))),
        *("--deck-key", str(harness_deck_key_file(log.parent))),
        # The bots leave their last hands unfinished: a stop need not wait for them to end.
        *("--drain-timeout", "0"),
        # BENCH_LEASE_TTL_S: the tables' lease TTL (each lease is renewed every third of it).
        *(
            ("--lease-ttl", os.environ["BENCH_LEASE_TTL_S"])
            if "BENCH_LEASE_TTL_S" in os.environ
            else ()
        ),
    ]
    counted = instructions.directory()
    if counted is None:
        return ServiceProcess(args, log, ready=_SERVING, name="the dealer", stop_timeout_s=20)
    counted.mkdir(parents=True, exist_ok=True)
    args = instructions.wrap(args, counted / f"callgrind.{namespace}.out")
    slow = instructions.SLOW_START_S
    return ServiceProcess(
        args, log, ready=_SERVING, name="the dealer", stop_timeout_s=slow, start_timeout_s=slow
    )


def dealer_pid(dealer: ServiceProcess) -> int:
    """The dealer's process id (a started dealer)."""
    assert dealer.process is not None
    return dealer.process.pid


def instructions_per_append(prefix: str, namespace: str, appends: int) -> list[Result]:
    """The dealer's instructions per append in the window (nothing unless they were counted)."""
    counted = instructions.directory()
    if counted is None:
        return []
    total = instructions.total(counted / f"callgrind.{namespace}.out")
    per_append = total / max(1, appends) / 1e6
    return [Result(f"{prefix}.dealer_instructions_per_append", per_append, "M instructions")]


def stage_profile(prefix: str, cpu_ms_per_append: float) -> list[Result]:
    """The dealer's CPU per append by stage (nothing unless it was sampled)."""
    sampled = sampling.directory()
    if sampled is None:
        return []
    with (sampled / f"{prefix}.txt").open() as samples:
        stages = sampling.per_append(sampling.parse(samples), cpu_ms_per_append)
    return [
        Result(f"{prefix}.stage.{re.sub(r'[^a-z]+', '_', stage).strip('_')}", value, "µs/append")
        for stage, value in stages.items()
    ]


def dealer_stream(namespace: str) -> StreamSettings:
    """Where the dealer started with ``namespace`` keeps its tables."""
    return StreamSettings(stream=f"B_{namespace}", subject_prefix=f"b{namespace}.table")


@contextlib.contextmanager
def running(process: ServiceProcess) -> Iterator[ServiceProcess]:
    """The process, started, stopped on the way out whatever happens."""
    try:
        process.start()
        yield process
    finally:
        process.stop()


# --- bots -----------------------------------------------------------------------------------------


class Refused(Exception):
    """The dealer refused a bot's action (a status in a Play reply)."""


class StreamBot:
    """A bot acting over its own Play stream: one message out, its reply back (one at a time:
    the tables of a player who sits at several share his stream)."""

    def __init__(self, client: Client, sizes: MessageSizes) -> None:
        self.call = client.stub.Play(metadata=client.metadata)
        self.sizes = sizes
        self.turn = asyncio.Lock()

    async def act(self, table_id: str, hand_id: str, action: int, amount: int) -> dpb.PlayResponse:
        """One Act with a fresh command id; :class:`Refused` if the dealer refused it."""
        request = dpb.PlayRequest(
            act=dpb.ActRequest(
                command_id=uuid.uuid4().hex,
                table_id=table_id,
                hand_id=hand_id,
                action=action,  # type: ignore[arg-type]
                amount=amount,
            )
        )
        async with self.turn:
            await self.call.write(request)
            reply = await self.call.read()
        if not isinstance(reply, dpb.PlayResponse):
            raise Refused("the stream ended")
        self.sizes.add(request.ByteSize(), reply.ByteSize())
        if reply.code:
            raise Refused(reply.message)
        return reply

    async def close(self) -> None:
        """End the stream."""
        await self.call.done_writing()
        await self.call.code()


@dataclass(slots=True)
class MessageSizes:
    """The Play messages' sizes on the wire (for the shell floor's messages)."""

    count: int = 0
    request_bytes: int = 0
    reply_bytes: int = 0

    def add(self, request: int, reply: int) -> None:
        """Count one request and its reply."""
        self.count += 1
        self.request_bytes += request
        self.reply_bytes += reply

    def means(self) -> tuple[int, int]:
        """The mean request and reply sizes in bytes."""
        count = max(1, self.count)
        return round(self.request_bytes / count), round(self.reply_bytes / count)


@dataclass(slots=True)
class PlayStats:
    """What the bots saw."""

    act_latencies: list[float] = field(default_factory=list)
    refused: int = 0
    #: GetTable calls in flight at once (thousands at once: grpc.aio cancels some).
    reads: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(100))


async def seat_table(
    channel: grpc.aio.Channel, secret: bytes, table_id: str, player: Callable[[int], str]
) -> tuple[Client, dict[int, Client]]:
    """Create the table and seat the bots (``player(seat)``: the id of seat's player); returns
    the operator and the bots by seat."""
    operator = Client(channel, secret, "operator", Role.OPERATOR)
    await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=f"create-{table_id}",
            table_id=table_id,
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            real_money=False,
            pause_between_hands_ms=1,
        ),
    )
    bots: dict[int, Client] = {}
    for seat in range(1, PLAYERS + 1):
        bot = bots[seat] = Client(channel, secret, player(seat), Role.PLAYER)
        await bot.call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=f"sit-{table_id}-{seat}", table_id=table_id, seat=seat, buy_in=200
            ),
        )
    return operator, bots


async def seat_tables(
    channels: list[grpc.aio.Channel], secret: bytes, table_ids: list[str], tables_per_player: int
) -> list[tuple[Client, dict[int, Client]]]:
    """:func:`seat_table` for every table, :data:`SEATING_CONCURRENCY` at a time, in order;
    table ``n``'s clients on ``channels[n // TABLES_PER_CONNECTION]``; a player sits at
    ``tables_per_player`` consecutive tables, in the same seat."""
    gate = asyncio.Semaphore(SEATING_CONCURRENCY)

    async def seat(n: int, table_id: str) -> tuple[Client, dict[int, Client]]:
        def player(seat: int) -> str:
            return f"{table_ids[n - n % tables_per_player]}-p{seat}"

        async with gate:
            channel = channels[n // TABLES_PER_CONNECTION]
            return await seat_table(channel, secret, table_id, player)

    return list(await asyncio.gather(*(seat(n, table_id) for n, table_id in enumerate(table_ids))))


async def play_table(
    operator: Client,
    bots: dict[int, Client] | dict[int, StreamBot],
    table_id: str,
    *,
    hands: int,
    deadline: float,
    rng: random.Random,
    stats: PlayStats,
    think_s: float = 0.0,
) -> None:
    """Play until ``hands`` more hands have started and ended, or the deadline; each bot thinks
    ``think_s`` on average before acting (not counted in the Act latency)."""
    target: int | None = None
    view: dpb.TableView | None = None
    while time.monotonic() < deadline:
        if view is None or GET_TABLE_EACH_TURN:
            async with stats.reads:
                view = await operator.table(table_id)
        if target is None:
            target = view.hands_started + hands
        to_act = view.hand.seat_to_act
        if not to_act:
            if view.hands_started >= target or view.closed:
                return
            # Between hands: the dealer's timer deals the next one at next_hand_at.
            planned = view.HasField("next_hand_at")
            wait_s = view.next_hand_at.ToMilliseconds() / 1000 - time.time() if planned else 0
            await asyncio.sleep(min(max(wait_s, 0.0) + 0.002, 0.1))
            view = None
            continue
        action, amount = choose_wire_action(view, rng)
        if think_s:
            # Exponential think times: independent players' actions arrive at random
            # (a Poisson stream), not in lock-step bursts of one action per table.
            think = rng.expovariate(1 / think_s)
            if time.monotonic() + think >= deadline:
                return  # acting after the window would stretch it with a tail of few actions
            await asyncio.sleep(think)
        started = time.perf_counter()
        try:
            reply = await bots[to_act].act(table_id, view.hand.hand_id, action, amount)
        except (grpc.aio.AioRpcError, Refused):
            stats.refused += 1
            reply = None
        stats.act_latencies.append(time.perf_counter() - started)
        # The reply carries the table after the action (the seat to act next, its options):
        # GetTable only when there is none, and between hands.
        view = reply.table if reply is not None and reply.HasField("table") else None


@dataclass(frozen=True, slots=True)
class LogCounts:
    """What the tables' logs hold within a time window."""

    records: int
    events: int
    hands: int
    data_bytes: int


async def count_logs(
    js: JetStreamContext, settings: StreamSettings, tables: list[str], window: tuple[int, int]
) -> LogCounts:
    """Records, events, ended hands and payload bytes with ``occurred_at`` within ``window``."""
    store = JetStreamEventStore(js, settings)
    records = events = hands = data_bytes = 0
    for table_id in tables:
        async for record in store.read(table_id):
            batch = decode_batch(record)
            inside = [e for e in batch.events if window[0] <= e.occurred_at <= window[1]]
            if not inside:
                continue
            records += 1
            data_bytes += len(record.data)
            events += len(inside)
            hands += sum(1 for e in inside if e.WhichOneof("body") == "hand_ended")
    return LogCounts(records, events, hands, data_bytes)


async def raw_chains(js: JetStreamContext, chains: int, size: int, seconds: float) -> float:
    """Appends/s of ``chains`` concurrent chains with the dealer's headers, ``size``-byte data."""
    namespace = uuid.uuid4().hex[:8]
    settings = StreamSettings(stream=f"RAW_{namespace}", subject_prefix=f"raw{namespace}")
    await provisioned_event_store(js, settings)
    payload = random.Random(SEED).randbytes(size)
    counts = [0] * chains
    lasts = [0] * chains

    async def chain(index: int, deadline: float) -> None:
        subject = f"{settings.subject_prefix}.c{index}"
        while time.monotonic() < deadline:
            headers = {
                "Nats-Msg-Id": f"c{index}:{lasts[index]}",
                "Nats-Expected-Last-Subject-Sequence": str(lasts[index]),
            }
            ack = await js.publish(subject, payload, timeout=5.0, headers=headers)
            lasts[index] = ack.seq
            counts[index] += 1

    await asyncio.gather(*(chain(i, time.monotonic() + 0.3) for i in range(chains)))  # warm-up
    counts[:] = [0] * chains
    started = time.perf_counter()
    await asyncio.gather(*(chain(i, time.monotonic() + seconds) for i in range(chains)))
    elapsed = time.perf_counter() - started
    return sum(counts) / elapsed


async def play(nats_server: NatsServer, scenario: Scenario, work: Path) -> list[Result]:
    """One play scenario (see the module docstring), then its peers: the raw chains and, for
    the stream transport without think time, the shell floor."""
    tables, transport = scenario.tables, scenario.transport
    nats_url = nats_server.url
    secret = new_secret()
    namespace = uuid.uuid4().hex[:8]
    dealer = dealer_process(nats_url, namespace, secret, work / f"dealer-{namespace}.log")
    stats = PlayStats()
    sizes = MessageSizes()
    rng = random.Random(SEED + tables)
    table_ids = [f"bench{n:03d}" for n in range(tables)]
    with running(dealer):
        async with contextlib.AsyncExitStack() as connections:
            # One HTTP/2 connection holds the streams of TABLES_PER_CONNECTION tables (one
            # connection for thousands of streams ends some of them: gRPC's own limits).
            channels = [
                await connections.enter_async_context(grpc.aio.insecure_channel(dealer.address))
                for _ in range(0, tables, TABLES_PER_CONNECTION)
            ]
            seated = await seat_tables(channels, secret, table_ids, scenario.tables_per_player)
            streams: list[dict[int, StreamBot]] = []
            by_player: dict[str, StreamBot] = {}  # a player's one stream, for all his tables
            if transport == "stream":

                def stream_of(bot: Client) -> StreamBot:
                    if bot.subject not in by_player:
                        by_player[bot.subject] = StreamBot(bot, sizes)
                    return by_player[bot.subject]

                streams = [{n: stream_of(bot) for n, bot in bots.items()} for _, bots in seated]
            players: list[dict[int, Client] | dict[int, StreamBot]] = (
                list(streams) if streams else [bots for _, bots in seated]
            )
            await asyncio.sleep(0.2)  # the first hands are dealt
            window_start = time.time_ns() // 1_000_000
            started = time.perf_counter()
            dealer_cpu = dealer.cpu_seconds()
            bench_cpu = time.process_time()
            counted = instructions.directory()
            if counted is not None:
                instructions.count(dealer_pid(dealer), on=True)
            sampled = sampling.directory()
            sampler = None
            if sampled is not None:
                sampled.mkdir(parents=True, exist_ok=True)
                sampler = sampling.Sampler(dealer_pid(dealer), sampled / f"{scenario.name}.txt")
                sampler.start()
            nats_cpu = nats_server.cpu_seconds()
            deadline = time.monotonic() + min(PLAY_CAP_S, scenario.cap_s)
            with gc_paused():
                await asyncio.gather(
                    *(
                        play_table(
                            operator,
                            bots,
                            table_id,
                            hands=scenario.hands,
                            deadline=deadline,
                            rng=rng,
                            stats=stats,
                            think_s=scenario.think_s,
                        )
                        for table_id, (operator, _), bots in zip(
                            table_ids, seated, players, strict=True
                        )
                    )
                )
            elapsed = time.perf_counter() - started
            window_end = time.time_ns() // 1_000_000
            dealer_cpu = dealer.cpu_seconds() - dealer_cpu
            bench_cpu = time.process_time() - bench_cpu
            nats_cpu = nats_server.cpu_seconds() - nats_cpu
            if counted is not None:
                instructions.count(dealer_pid(dealer), on=False)
            if sampler is not None:
                sampler.stop()
            for bot in by_player.values():
                await bot.close()
    client = await nats.connect(nats_url)
    try:
        js = client.jetstream()
        counts = await count_logs(
            js, dealer_stream(namespace), table_ids, (window_start, window_end)
        )
        mean_size = max(1, round(counts.data_bytes / max(1, counts.records)))
        raw = await raw_chains(js, tables, mean_size, RAW_SECONDS)
    finally:
        await client.close()
    appends = counts.records / elapsed
    latencies = sorted(stats.act_latencies)
    prefix = scenario.name
    results = [
        Result(f"{prefix}.hands", counts.hands / elapsed, "hands/s"),
        Result(f"{prefix}.events", counts.events / elapsed, "events/s"),
        Result(f"{prefix}.act_p50", 1000 * _quantile(latencies, 0.50), "ms"),
        Result(f"{prefix}.act_p99", 1000 * _quantile(latencies, 0.99), "ms"),
        Result(f"{prefix}.acts", len(latencies), "acts"),
        Result(f"{prefix}.acts_per_s", len(latencies) / elapsed, "acts/s"),
        Result(f"{prefix}.acts_refused", stats.refused, "acts"),
        Result(f"{prefix}.dealer_cpu", 100 * dealer_cpu / elapsed, "% of a core"),
        Result(
            f"{prefix}.dealer_cpu_per_append",
            1000 * dealer_cpu / max(1, counts.records),
            "ms",
        ),
        *instructions_per_append(prefix, namespace, counts.records),
        *stage_profile(prefix, 1000 * dealer_cpu / max(1, counts.records)),
        Result(f"{prefix}.bots_cpu", 100 * bench_cpu / elapsed, "% of a core"),
        Result(f"{prefix}.nats_server_cpu", 100 * nats_cpu / elapsed, "% of a core"),
        Result(f"{prefix}.mean_batch", counts.events / max(1, counts.records), "events/append"),
        Result(f"{prefix}.mean_record", mean_size, "bytes"),
        Result(
            f"{prefix}.appends",
            appends,
            "appends/s",
            peer=f"raw JetStream, {tables} chains",
            peer_value=raw,
        ),
    ]
    if transport == "stream" and not scenario.think_s:
        request_size, reply_size = sizes.means()
        floor = await shell_floor(
            nats_url, tables, (request_size, mean_size, reply_size), work, paced_to=appends
        )
        results += [
            Result(
                f"{prefix}.appends_vs_shell",
                appends,
                "appends/s",
                peer="thinnest gRPC+JetStream shell",
                peer_value=floor["append"],
            ),
            Result(
                f"services.floor.{tables}_chains.shell_append",
                floor["append"],
                "appends/s",
                peer=f"raw JetStream, {tables} chains",
                peer_value=raw,
            ),
            Result(
                f"services.floor.{tables}_chains.shell_append_cpu_per_append",
                floor["append_cpu_ms"],
                "ms",
            ),
            Result(
                f"{prefix}.dealer_cpu_vs_shell_at_same_rate",
                1000 * dealer_cpu / max(1, counts.records),
                "ms/append",
                peer="the shell paced to the dealer's appends/s",
                peer_value=floor["paced_cpu_ms"],
            ),
            Result(
                f"services.floor.{tables}_chains.shell_echo",
                floor["echo"],
                "replies/s",
                peer=f"raw JetStream, {tables} chains",
                peer_value=raw,
            ),
        ]
    return results


async def shell_floor(
    nats_url: str, chains: int, sizes: tuple[int, int, int], work: Path, *, paced_to: float
) -> dict[str, float]:
    """Commands/s of :mod:`bench.shell` in ``echo`` and ``append`` mode (and the shell's CPU
    milliseconds per command, ``<mode>_cpu_ms``), driven like the dealer's stream bots:
    ``chains`` streams, one message in flight on each, with the dealer's request, record and
    reply sizes (``sizes``); then the appending shell's CPU per command when its chains are
    paced to ``paced_to`` commands/s in all (``paced_cpu_ms``): the floor at the dealer's own
    rate, where a wake-up of the event loop carries as few messages as the dealer's do."""
    request_size, record_size, reply_size = sizes
    head = f"{record_size}:{reply_size}:".encode()
    request = head + bytes(max(0, request_size - len(head)))
    rates: dict[str, float] = {}
    for mode in ("echo", "append"):
        args = [sys.executable, "-m", "bench.shell", "--mode", mode, "--nats-url", nats_url]
        args += ["--stream", f"SHELL{uuid.uuid4().hex[:8].upper()}"]
        log = work / f"shell-{mode}.log"
        shell = ServiceProcess(args, log, ready=_SHELL_SERVING, name="the shell")
        with running(shell):
            async with grpc.aio.insecure_channel(shell.address) as channel:
                cpu = shell.cpu_seconds()
                rate, elapsed = await _drive_shell(channel, chains, request)
                rates[mode] = rate
                rates[f"{mode}_cpu_ms"] = 1000 * (shell.cpu_seconds() - cpu) / (rate * elapsed)
                if mode == "append":
                    cpu = shell.cpu_seconds()
                    rate, elapsed = await _drive_shell(channel, chains, request, paced_to)
                    rates["paced"] = rate
                    rates["paced_cpu_ms"] = (
                        1000 * (shell.cpu_seconds() - cpu) / max(1.0, rate * elapsed)
                    )
    return rates


async def _drive_shell(
    channel: grpc.aio.Channel, chains: int, request: bytes, paced_to: float | None = None
) -> tuple[float, float]:
    """Messages/s over ``chains`` streams (after a warm-up) and the timed seconds; with
    ``paced_to``, each chain sends at most its share of that rate (as a schedule: a late
    message is sent at once, the next one keeps the schedule)."""
    interval = chains / paced_to if paced_to else 0.0
    method = channel.stream_stream(
        SHELL_METHOD, request_serializer=_identity, response_deserializer=_identity
    )
    calls = [method() for _ in range(chains)]
    counts = [0] * chains

    async def chain(index: int, deadline: float) -> None:
        call = calls[index]
        due = time.monotonic() + interval * index / chains  # spread the chains' schedules
        while time.monotonic() < deadline:
            if interval:
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                due += interval
            await call.write(request)
            await call.read()
            counts[index] += 1

    await asyncio.gather(*(chain(i, time.monotonic() + 0.3) for i in range(chains)))  # warm-up
    counts[:] = [0] * chains
    started = time.perf_counter()
    await asyncio.gather(*(chain(i, time.monotonic() + RAW_SECONDS) for i in range(chains)))
    elapsed = time.perf_counter() - started
    for call in calls:
        await call.done_writing()
    return sum(counts) / elapsed, elapsed


def _identity(data: bytes) -> bytes:
    return data


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


# --- tables played by the pure engine -------------------------------------------------------------


@dataclass(slots=True)
class EngineTable:
    """A table played in-process by the engine: the state and a fake clock."""

    table_id: str
    state: TableState | None = None
    now: int = 1_000
    commands: int = 0
    records: list[tuple[str, bytes]] = field(default_factory=list)

    def run(self, command: Callable[[int], Command]) -> list[pb.TableEvent]:
        """Execute ``command(now)``, record its batch (id, bytes, linked to the record before
        it as the dealer links them); the enveloped events."""
        self.now += 1
        self.commands += 1
        state, events = execute(self.state, command(self.now))
        wrapped = envelopes(self.state, events, table_id=self.table_id, now=self.now)
        self.state = state
        command_id = f"c{self.commands}"
        batch = pb.TableEventBatch(command_id=command_id, events=wrapped)
        self.record(batch)
        return wrapped

    def record(self, batch: pb.TableEventBatch) -> None:
        """Append ``batch`` to the records, linked to the last one."""
        last = self.records[-1][1] if self.records else None
        batch.previous_batch_hash = genesis(self.table_id) if last is None else record_hash(last)
        self.records.append((batch.command_id, batch.SerializeToString()))


def engine_table(table_id: str, players: int) -> EngineTable:
    """A created table with ``players`` seated, no pause between hands."""
    table = EngineTable(table_id)
    config = replace(
        make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2)), pause_between_hands_ms=0
    )
    table.run(partial(CreateTable, config))
    for seat in range(1, players + 1):
        table.run(partial(SitDown, seat, f"p{seat}", 200, f"h{seat}"))
    return table


def hand_commands(table: EngineTable, rng: random.Random) -> Iterator[Callable[[int], Command]]:
    """The commands of one hand: top-ups of short stacks, the deal, the actions (bot policy)."""
    state = table.state
    assert state is not None
    for number in state.occupied():
        seat = state.seat(number)
        if seat is not None and seat.stack < 100:
            yield partial(TopUp, number, seat.player_id, 200 - seat.stack, f"top{table.commands}")
    deck = tuple(rng.sample(DECK_52, len(DECK_52)))
    hand_id = f"{table.table_id}.{table.commands}"
    yield partial(StartNextHand, hand_id, deck)  # no pause between hands: "now" is late enough
    wagers = 0
    while table.state is not None and table.state.hand_running:
        hand = table.state.hand
        assert hand is not None and hand.seat_to_act is not None
        seat_number = hand.seat_to_act
        action, amount, wagered = choose_action(table.state, seat_number, rng, wagers)
        wagers += wagered
        player = table.state.seats[seat_number - 1]
        assert player is not None
        yield partial(Act, seat_number, player.player_id, action, amount)


def play_hands(table: EngineTable, hands: int, rng: random.Random) -> None:
    """Play ``hands`` hands (recorded in ``table.records``)."""
    for _ in range(hands):
        for command in hand_commands(table, rng):
            table.run(command)


async def publish_all(
    js: JetStreamContext, store: JetStreamEventStore, key: str, records: list[tuple[str, bytes]]
) -> int:
    """Append ``records`` to ``key``'s log pipelined (setup, not timed), sealed as the dealer
    seals them; the last position. Nothing else may write the stream meanwhile: each record's
    position is predicted (its seal binds the one before), and checked by the server."""
    subject = store.subject(key)
    seals = harness_seals()
    previous = await store.last_position(key)
    info = await js.stream_info(store.settings.stream)
    position = info.state.last_seq
    for command_id, data in records:
        position += 1
        headers = {
            **seals.headers(key, previous, command_id, data),
            "Nats-Msg-Id": f"{key}:{command_id}",
            "Nats-Expected-Last-Subject-Sequence": str(previous),
        }
        await js.publish_async(subject, data, headers=headers)
        previous = position
    await js.publish_async_completed()
    last = await store.last_position(key)
    assert last == previous, "another writer moved the stream during the setup"
    return last


# --- rebuild and recovery -------------------------------------------------------------------------


async def raw_read(js: JetStreamContext, subject: str, end: int) -> int:
    """Read ``subject`` from the start with an ordered consumer, the fastest way nats-py offers
    (a callback appending to a deque that the reader drains, as the event store reads;
    ``next_msg`` is several times slower); nothing decoded. The records read."""
    arrived: deque[Msg] = deque()
    wake = asyncio.Event()

    async def deliver(message: Msg) -> None:
        arrived.append(message)
        wake.set()

    subscription = await js.subscribe(
        subject, cb=deliver, ordered_consumer=True, pending_msgs_limit=-1, pending_bytes_limit=-1
    )
    records = 0
    try:
        while True:
            if not arrived:
                wake.clear()
                await wake.wait()
            while arrived:
                message = arrived.popleft()
                records += 1
                if message.metadata.sequence.stream >= end:
                    return records
    finally:
        await subscription.unsubscribe()


async def best_time(action: Callable[[], object], repeats: int = REPEATS) -> list[float]:
    """The durations of ``repeats`` runs of the coroutine function ``action``, sorted."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        await action()  # type: ignore[misc]
        times.append(time.perf_counter() - started)
    return sorted(times)


async def rebuild(nats_url: str) -> list[Result]:
    """Replay rate against the raw read rate, and the recovery of a 10^6-event table."""
    client = await nats.connect(nats_url)
    namespace = uuid.uuid4().hex[:8]
    settings = StreamSettings(stream=f"REB{namespace}".upper(), subject_prefix=f"reb{namespace}")
    try:
        js = client.jetstream(publish_async_max_pending=2_000)
        store = await provisioned_event_store(js, settings)
        metrics = DealerMetrics(CollectorRegistry())

        # Replay: real hands, one record per command, no snapshot.
        table = engine_table("replayed", 4)
        play_hands(table, REPLAY_HANDS, random.Random(SEED))
        assert table.state is not None
        records = table.records
        subject = store.subject("replayed")
        end = await publish_all(js, store, "replayed", records)
        events = table.state.version
        no_snapshot = TableRepository(
            store,
            InMemorySnapshotStore(),
            metrics.table_log,
            seals=harness_seals(),
            deck_keys=TEST_DECK_KEYS,
            snapshot_every=10**12,
        )
        loaded: list[LoadedTable] = []

        async def replay() -> None:
            loaded.append(await no_snapshot.load("replayed"))

        async def read() -> None:
            await raw_read(js, subject, end)

        await replay()  # warm-up
        replay_s = (await best_time(replay))[0]
        read_s = (await best_time(read))[0]
        assert loaded[-1].state.table == table.state, "the replayed table differs from the live one"

        # Recovery: 10^6 events, then the snapshot and a short tail.
        recovery, tail = await recovery_time(js, store, metrics)
    finally:
        with contextlib.suppress(Exception):
            await client.jetstream().delete_stream(settings.stream)
        await client.close()
    return [
        Result(
            "services.rebuild.replay",
            events / replay_s,
            "events/s",
            peer="raw ordered-consumer read",
            peer_value=events / read_s,
        ),
        Result("services.rebuild.replay_log", events, "events"),
        Result("services.rebuild.replay_records", len(records), "records"),
        Result("services.rebuild.recovery_1M_events", 1000 * recovery, "ms"),
        Result("services.rebuild.recovery_tail", tail, "events"),
    ]


async def recovery_time(
    js: JetStreamContext, store: JetStreamEventStore, metrics: DealerMetrics
) -> tuple[float, int]:
    """Build the 10^6-event table (see the module docstring); the median load time and the tail."""
    table_id = "million"
    table = engine_table(table_id, 2)
    head = list(table.records)
    # One SitOut/SitIn pair with the engine: its events and the state after it, which repeats.
    sat_out = table.run(partial(SitOut, 1, "p1"))[0].player_sat_out
    sat_in = table.run(partial(SitIn, 1, "p1"))[0].player_sat_in
    table.records = head  # the pair's own records are not in the log: the bulk repeats them
    assert table.state is not None
    cycle_state = table.state
    first = cycle_state.version - 1  # the version of the first SitOut event
    bulk_events = RECOVERY_EVENTS - first + 1 - 400  # leave room for the hands at the end
    bulk_events -= bulk_events % 2
    version = first
    command = 0
    while version < first + bulk_events:
        batch = pb.TableEventBatch()
        for _ in range(min(BULK_EVENTS_PER_RECORD, first + bulk_events - version)):
            envelope = batch.events.add(table_id=table_id, version=version, occurred_at=table.now)
            if (version - first) % 2 == 0:
                envelope.player_sat_out.CopyFrom(sat_out)
            else:
                envelope.player_sat_in.CopyFrom(sat_in)
            version += 1
        command += 1
        batch.command_id = f"bulk{command}"
        table.record(batch)
    records = table.records
    position = await publish_all(js, store, table_id, records)
    state = cycle_state._replace(version=version - 1)
    # The chain after the last bulk record, as a live dealer's state carries it.
    chain = ChainState(
        record_hash(records[-1][1]),
        record_hash(records[-2][1]),
        state.version,
        True,
        position,
        table.now,
    )
    # The pair's state repeats: fold the first bulk records with the engine and compare.
    check: TableState | None = None
    async for record in store.read(table_id):
        for event in decode_batch(record).events:
            check = evolve(check, event)
        if check is not None and check.version >= first + 3 * BULK_EVENTS_PER_RECORD - 1:
            break
    assert check is not None and check == cycle_state._replace(version=check.version), (
        "the bulk history is not a valid table log"
    )

    # Real hands through the repository (snapshots every 100 events), until the tail is reached.
    bucket = f"SNAP_{uuid.uuid4().hex[:8]}"
    snapshots = await provisioned_snapshot_store(js, SnapshotSettings(bucket=bucket))
    repository = TableRepository(
        store,
        snapshots,
        metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
        snapshot_bucket=bucket,
        snapshot_every=SNAPSHOT_EVERY,
    )
    # The bulk records' ids, as a live table would know them (positions: a lower bound of each).
    commands = CommandIndex()
    for n in range(1, command + 1):
        commands.add(f"bulk{n}", Outcome(0, 0, n, b""))
    loaded = Loaded(table_id, TableLog(state, commands, chain), position, state.version)
    table.state = state
    rng = random.Random(SEED)
    while not _tail_reached(loaded):
        for build in hand_commands(table, rng):
            table.now += 1
            table.commands += 1
            new_state, events = execute(table.state, build(table.now))
            loaded = await repository.append(
                loaded, f"c{table.commands}", events, new_state, table.now
            )
            table.state = new_state
            if _tail_reached(loaded):
                break
    await repository.flush_snapshots()  # written off the command path
    recovered: list[LoadedTable] = []

    async def recover() -> None:
        recovered.append(await repository.load(table_id))

    times = await best_time(recover)
    assert recovered[-1].state.table == loaded.state.table, (
        "the recovered table differs from the live one"
    )
    assert recovered[-1].snapshot_mark > 0
    return statistics.median(times), loaded.state.version - recovered[-1].snapshot_mark


def _tail_reached(loaded: LoadedTable) -> bool:
    return (
        loaded.state.version >= RECOVERY_EVENTS
        and loaded.state.version % SNAPSHOT_EVERY >= RECOVERY_TAIL
    )


# --- the module's entry point ---------------------------------------------------------------------


async def _run_all() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="bench-services-") as work:
        server = NatsServer(Path(work) / "jetstream")
        server.start()
        try:
            results: list[Result] = []
            for scenario in SCENARIOS:
                if not ONLY or scenario.name.removeprefix("services.play.") in ONLY:
                    results += await play(server, scenario, Path(work))
            if REBUILD:
                results += await rebuild(server.url)
            return results
        finally:
            server.stop()


def run() -> list[Result]:
    """The service benchmarks (see the module docstring); about two minutes."""
    # The repository logs every rebuild; keep the bench's output to the results.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return asyncio.run(_run_all())
