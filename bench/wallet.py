"""Wallet benchmark: ledger transactions/s, consumer lag and hand-end -> ledger-posting latency
under the dealer benchmark's load of 100 tables, next to the pure ledger.

Everything runs on 127.0.0.1 against one real ``nats-server`` (:mod:`poker.testing.nats_server`,
a temporary store directory) started here and stopped at the end, and one real wallet process
(``python -m poker.wallet``, a child process as in tests/faults, log level ``warning`` into a
file, the default stream and consumer names on that private server). The room is provisioned
first as the operator does (:meth:`NatsServer.provision`: the table stream, the dealers' buckets
and the wallet's consumer in the TABLES account, the journal and its buckets in the WALLET
account); the wallet connects as its own NATS user, the bench as each account's admin (the
tables' side to append and sample the consumer, the WALLET account's to read the journal).

* **Load.** The dealer's gRPC layer is left out, so that the wallet is what is measured. For each
  rate, :data:`TABLES` fresh tables of :data:`PLAYERS` players (no-limit Hold'em 1/2, no pause
  between hands) are played in this process by the pure engine before the clock starts (bot
  policy of bench.services: check/call mostly, min-raise 15 %, fold 10 % of calls; top-ups of
  short stacks between hands), one ``TableEventBatch`` per command. As the dealer does: every
  player has cash (an operator's Deposit), every SitDown and TopUp first places its hold through
  the wallet's gRPC ``PlaceHold`` with a dealer-role token (poker.dealer.wallet_client, hold id
  = the command id), and every batch is appended to ``poker.table.<table_id>`` through the
  dealer's event store (``Nats-Msg-Id`` = ``<table>:<command id>``,
  ``Nats-Expected-Last-Subject-Sequence`` = the table's last position, request/reply publish).
  The seats are set up untimed; then each table appends its next command every
  ``TABLES / appends_per_s`` seconds (one in flight per table, start times staggered), for
  :data:`PLAY_S`. The base rate, :data:`BASE_APPENDS_PER_S` appends/s (about 30 hands/s), is what
  the dealer benchmark reached with 100 tables; :data:`RATES` are multiples of it.
* **Throughput.** Ledger transactions (``TransactionPosted`` events of the journal) whose record
  was stored during the play window, per second; the wallet process's CPU use over the window.
* **Lag.** The durable consumer's ``num_pending + num_ack_pending`` (table-stream messages not yet
  applied and acked), sampled every :data:`LAG_EVERY_S` from JetStream's consumer info (one small
  API request, nothing inside the wallet); max, mean, and the growth (mean of the last quarter of
  the window minus the first quarter); then the time to drain after the last append.
* **Latency.** For each HandEnded: the JetStream timestamp of its ledger record (the journal
  message holding the SettleHand whose source is that event) minus the JetStream timestamp of the
  table batch holding the HandEnded. Both are the nats-server's store times, read back after the
  run, so measuring perturbs nothing: it is "durable in the dealer's log" to "durable in the
  ledger", the whole of the wallet's path (delivery, mapping, decide, journal append). p50/p99.
* **Pure ledger.** The same commands the wallet decided for :data:`PURE_TABLES` tables of the
  highest rate (deposits, holds, and the mapped dealer events), decided and folded in-process by
  ``decide``/``evolve`` (:func:`bench.harness.rates`); the service's tx/s at the highest rate is
  reported as a ratio to it (the service's figure is the offered load when it keeps up; the CPU
  use says how much headroom is left).

Set ``BENCH_WALLET_PROFILE=<file>`` to run the wallet under cProfile (written when it stops),
``BENCH_WALLET_RATES=1,4,8`` to choose the rates, ``BENCH_WALLET_DEBUG=1`` to print the worst
latencies and the lag samples, ``BENCH_WALLET_LOG=<file>`` to keep the wallet's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import re
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Final

import grpc
import nats
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from bench.harness import Result, rates
from bench.policy import choose_action
from poker.dealer.wallet_client import GrpcWallet
from poker.engine.betting import Stakes, Structure
from poker.engine.cards import DECK_52
from poker.engine.table import (
    Act,
    Command,
    CreateTable,
    SitDown,
    StartNextHand,
    TableState,
    TopUp,
    envelopes,
    execute,
    make_config,
)
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.servicekit.nats_permissions import WALLET_USER, TableNames, WalletNames
from poker.servicekit.provisioning import Room
from poker.servicekit.tokens import Role
from poker.tablelog.chain import genesis, record_hash
from poker.testing.dealer import harness_seals
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ServiceProcess, harness_log_keys_file
from poker.tools.client import WalletClient
from poker.v1 import events_pb2 as pb
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.journal import LEDGER_KEY
from poker.wallet.ledger import Command as LedgerCommand
from poker.wallet.ledger import Deposit, LedgerState, PlaceHold, decide, evolve
from poker.wallet.mapping import TableView, map_batch

ROOT: Final = Path(__file__).resolve().parents[1]
#: The bench appends the dealer's batches itself: sealed as the dealer seals them.
DEALER_SEALS: Final = harness_seals()
SEED: Final = 20_260_302
TABLES: Final = 100
PLAYERS: Final = 3
BUY_IN: Final = 200
CASH: Final = 1_000_000
BASE_APPENDS_PER_S: Final = 400.0
RATES: Final = tuple(
    float(x) for x in os.environ.get("BENCH_WALLET_RATES", "1,4").split(",") if x.strip()
)
"""Multiples of the base rate (``BENCH_WALLET_RATES=1,4,8`` to choose others)."""
PLAY_S: Final = 12.0
LAG_EVERY_S: Final = 0.2
DRAIN_CAP_S: Final = 30.0
PURE_TABLES: Final = 25
HOLD_TTL_S: Final = 120.0
SETUP_CONCURRENCY: Final = 32
# The default room's names (the wallet runs with its defaults): the table stream and the
# dealers' leases in the TABLES account, the journal in the WALLET account, the wallet's durable
# consumer on the table stream (TABLES, reached by the wallet through its imports).
TABLE_STREAM: Final = TableNames().stream
TABLE_PREFIX: Final = TableNames().subject_prefix
WALLET_STREAM: Final = WalletNames().stream
JOURNAL_SUBJECT: Final = f"{WalletNames().subject_prefix}.{LEDGER_KEY}"
CONSUMER: Final = WalletNames().consumer
DEALER_LEASES: Final = TableNames().lease_bucket
_LISTENING: Final = re.compile(r"wallet listening grpc=(\S+)")


# --- the wallet process ---------------------------------------------------------------------------


class WalletProcess(ServiceProcess):
    """``python -m poker.wallet`` as a child process on loopback port 0 (as in tests/faults)."""

    def __init__(self, server: NatsServer, secret: bytes, log: Path) -> None:
        # The default room (the names here), as the operator provisions it before the wallet
        # (``python -m poker.servicekit.provision``: each account's admin its own side). The
        # wallet connects as its own NATS user (WALLET account, its production permissions):
        # the table stream and its consumer through the account's imports.
        server.provision(Room())
        flags = {
            "grpc-host": "127.0.0.1",
            "grpc-port": "0",
            "metrics-port": "0",
            "token-secret": secret.hex(),
            "hold-ttl": str(HOLD_TTL_S),
            "abandon-after": "3600",  # no dealer holds the tables' leases here
            "log-level": "warning",
            "log-keys": str(harness_log_keys_file(log.parent, "wallet")),
        }
        args = [*server.service_flags(WALLET_USER)]
        args += [f"--{name}={value}" for name, value in flags.items()]
        profile = os.environ.get("BENCH_WALLET_PROFILE")
        runner = ["-m", "cProfile", "-o", profile] if profile else []
        super().__init__(
            [sys.executable, *runner, "-m", "poker.wallet", *args],
            log,
            ready=_LISTENING,
            name="the wallet",
            cwd=ROOT,
        )


@contextlib.contextmanager
def running(process: WalletProcess) -> Iterator[WalletProcess]:
    process.start()
    try:
        yield process
    finally:
        process.stop()


# --- tables played by the pure engine -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Append:
    """One dealer command as the dealer appends it."""

    command_id: str
    data: bytes
    hold: tuple[str, int] | None  # (player, amount) held first, hold id = command id
    hand_ended: int  # the HandEnded event's version in it, or 0


@dataclass(slots=True)
class EngineTable:
    """A table played in-process by the engine, its commands recorded as :class:`Append`."""

    table_id: str
    state: TableState | None = None
    now: int = field(default_factory=lambda: time.time_ns() // 1_000_000)
    commands: int = 0
    appends: list[Append] = field(default_factory=list)
    #: The hash chain's link to the last record (the dealer's ``previous_batch_hash``).
    link: bytes = b""

    def run(self, command: Callable[[int], Command], hold: tuple[str, int] | None = None) -> None:
        self.now += 1
        self.commands += 1
        state, events = execute(self.state, command(self.now))
        wrapped = envelopes(self.state, events, table_id=self.table_id, now=self.now)
        self.state = state
        command_id = f"{self.table_id}-c{self.commands}"
        link = self.link or genesis(self.table_id)
        batch = pb.TableEventBatch(command_id=command_id, events=wrapped, previous_batch_hash=link)
        ended = next((e.version for e in wrapped if e.WhichOneof("body") == "hand_ended"), 0)
        data = batch.SerializeToString()
        self.link = record_hash(data)
        self.appends.append(Append(command_id, data, hold, ended))

    def next_id(self) -> str:
        """The command id the next :meth:`run` gives (the hold id of a seat or top-up)."""
        return f"{self.table_id}-c{self.commands + 1}"


def player(table_id: str, seat: int) -> str:
    return f"{table_id}-p{seat}"


def engine_table(table_id: str) -> EngineTable:
    """A created table with :data:`PLAYERS` seated (their holds to place first)."""
    table = EngineTable(table_id)
    config = replace(
        make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2)), pause_between_hands_ms=0
    )
    table.run(partial(CreateTable, config))
    for seat in range(1, PLAYERS + 1):
        name = player(table_id, seat)
        table.run(partial(SitDown, seat, name, BUY_IN, table.next_id()), hold=(name, BUY_IN))
    return table


def play_hand(table: EngineTable, rng: random.Random) -> None:
    """One hand: top-ups of short stacks, the deal, the actions (bench.services' bot policy)."""
    state = table.state
    assert state is not None
    for number in state.occupied():
        seat = state.seat(number)
        if seat is not None and seat.stack < BUY_IN // 2:
            amount = BUY_IN - seat.stack
            table.run(
                partial(TopUp, number, seat.player_id, amount, table.next_id()),
                hold=(seat.player_id, amount),
            )
    deck = tuple(rng.sample(DECK_52, len(DECK_52)))
    table.run(partial(StartNextHand, f"{table.table_id}.{table.commands}", deck))
    wagers = 0
    while table.state is not None and table.state.hand_running:
        hand = table.state.hand
        assert hand is not None and hand.seat_to_act is not None
        number = hand.seat_to_act
        action, amount, wagered = choose_action(table.state, number, rng, wagers)
        wagers += wagered
        seated = table.state.seats[number - 1]
        assert seated is not None
        table.run(partial(Act, number, seated.player_id, action, amount))


def generate(prefix: str, appends_per_table: int, rng: random.Random) -> list[EngineTable]:
    """:data:`TABLES` tables with at least ``appends_per_table`` commands after the seating."""
    tables = []
    for index in range(TABLES):
        table = engine_table(f"{prefix}t{index:03d}")
        setup = len(table.appends)
        while len(table.appends) - setup < appends_per_table:
            play_hand(table, rng)
        tables.append(table)
    return tables


SETUP_APPENDS: Final = 1 + PLAYERS


# --- load -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class PlayLog:
    """What one rate's play did, in this process's clocks."""

    started: float = 0.0  # time.time()
    ended: float = 0.0
    appends: int = 0
    hand_ends: dict[tuple[str, int], int] = field(default_factory=dict)  # (table, ver) -> seq
    lag: list[tuple[float, int]] = field(default_factory=list)  # (time.time(), lag)
    late_s: float = 0.0  # how far behind its schedule the slowest append started


async def consumer_lag(js: JetStreamContext) -> int:
    info = await js.consumer_info(TABLE_STREAM, CONSUMER)
    return int((info.num_pending or 0) + (info.num_ack_pending or 0))


async def wait_caught_up(js: JetStreamContext, cap_s: float) -> float:
    """Seconds until the consumer has nothing pending (at most ``cap_s``)."""
    started = time.perf_counter()
    while time.perf_counter() - started < cap_s:
        with contextlib.suppress(Exception):
            if await consumer_lag(js) == 0:
                break
        await asyncio.sleep(0.02)
    return time.perf_counter() - started


async def bounded(jobs: list[Callable[[], object]], limit: int) -> None:
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], object]) -> None:
        async with gate:
            await job()  # type: ignore[misc]

    await asyncio.gather(*(one(job) for job in jobs))


async def setup_tables(
    tables: list[EngineTable],
    operator: WalletClient,
    dealer: GrpcWallet,
    store: JetStreamEventStore,
    positions: dict[str, int],
) -> None:
    """Cash for every player, then each table created and seated (holds first): untimed."""
    deposits: list[Callable[[], object]] = [
        partial(operator.deposit, player(t.table_id, seat), CASH, f"{t.table_id}-d{seat}")
        for t in tables
        for seat in range(1, PLAYERS + 1)
    ]
    await bounded(deposits, SETUP_CONCURRENCY)

    async def seat(table: EngineTable) -> None:
        for append in table.appends[:SETUP_APPENDS]:
            await do_append(table.table_id, append, dealer, store, positions)

    await bounded([partial(seat, table) for table in tables], SETUP_CONCURRENCY)


async def do_append(
    table_id: str,
    append: Append,
    dealer: GrpcWallet,
    store: JetStreamEventStore,
    positions: dict[str, int],
) -> int:
    """Hold (if the command needs one), then append as the dealer's repository does."""
    if append.hold is not None:
        who, amount = append.hold
        await dealer.place_hold(
            who, amount, hold_id=append.command_id, ttl_s=HOLD_TTL_S, table_id=table_id
        )
    expected = positions.get(table_id, 0)
    position = await store.append(
        table_id,
        append.data,
        expected_position=expected,
        msg_id=append.command_id,
        headers=DEALER_SEALS.headers(table_id, expected, append.command_id, append.data),
    )
    positions[table_id] = position
    return position


async def play(
    tables: list[EngineTable],
    appends_per_s: float,
    *,
    js: JetStreamContext,
    dealer: GrpcWallet,
    store: JetStreamEventStore,
    positions: dict[str, int],
) -> PlayLog:
    """Each table appends its next command every ``TABLES / appends_per_s`` s for PLAY_S."""
    log = PlayLog()
    interval = len(tables) / appends_per_s
    stop_sampling = asyncio.Event()

    async def sample() -> None:
        while not stop_sampling.is_set():
            with contextlib.suppress(Exception):
                log.lag.append((time.time(), await consumer_lag(js)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop_sampling.wait(), LAG_EVERY_S)

    async def table_task(table: EngineTable, offset: float, deadline: float) -> None:
        due = time.perf_counter() + offset
        for append in table.appends[SETUP_APPENDS:]:
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                log.late_s = max(log.late_s, -delay)
            if time.perf_counter() >= deadline:
                return
            position = await do_append(table.table_id, append, dealer, store, positions)
            log.appends += 1
            if append.hand_ended:
                log.hand_ends[(table.table_id, append.hand_ended)] = position
            due += interval

    sampler = asyncio.create_task(sample())
    log.started = time.time()
    deadline = time.perf_counter() + PLAY_S
    await asyncio.gather(
        *(
            table_task(table, interval * index / len(tables), deadline)
            for index, table in enumerate(tables)
        )
    )
    log.ended = time.time()
    stop_sampling.set()
    await sampler
    return log


# --- reading the logs back ------------------------------------------------------------------------


async def read_stream(
    js: JetStreamContext, stream: str, subject: str, after: int, keep: Callable[[Msg], None]
) -> None:
    """Every message of ``subject`` (a wildcard is fine) of ``stream`` (in ``js``'s account)
    after stream sequence ``after``."""
    info = await js.stream_info(stream)
    end = int(info.state.last_seq)
    if end <= after:
        return
    done = asyncio.Event()

    async def deliver(message: Msg) -> None:
        keep(message)
        if message.metadata.sequence.stream >= end or message.metadata.num_pending == 0:
            done.set()

    subscription = await js.subscribe(
        subject,
        cb=deliver,
        ordered_consumer=True,
        deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
        config=api.ConsumerConfig(opt_start_seq=after + 1),
        pending_msgs_limit=-1,
        pending_bytes_limit=-1,
    )
    try:
        await asyncio.wait_for(done.wait(), 30)
    finally:
        await subscription.unsubscribe()


def stored_at(message: Msg) -> float:
    """The message's JetStream store time, unix seconds."""
    return message.metadata.timestamp.timestamp()


@dataclass(slots=True)
class Postings:
    """The journal records of one rate: transactions' store times and the hands they settled."""

    tx_times: list[float] = field(default_factory=list)
    settled: dict[tuple[str, int], float] = field(default_factory=dict)

    def keep(self, message: Msg) -> None:
        at = stored_at(message)
        for event in lpb.LedgerEventBatch.FromString(message.data).events:
            if event.WhichOneof("body") != "transaction_posted":
                continue
            posted = event.transaction_posted
            self.tx_times.append(at)
            if posted.kind == lpb.TRANSACTION_KIND_HAND_SETTLED:
                self.settled[(posted.source.table_id, posted.source.position)] = at


async def stored_times(js: JetStreamContext, after: int, seqs: set[int]) -> dict[int, float]:
    """The store times of the table-stream messages ``seqs``."""
    times: dict[int, float] = {}

    def keep(message: Msg) -> None:
        seq = message.metadata.sequence.stream
        if seq in seqs:
            times[seq] = stored_at(message)

    await read_stream(js, TABLE_STREAM, f"{TABLE_PREFIX}.>", after, keep)
    return times


async def last_seq(js: JetStreamContext, stream: str) -> int:
    return int((await js.stream_info(stream)).state.last_seq)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --- one rate -------------------------------------------------------------------------------------


async def hold_leases(js: JetStreamContext, tables: list[EngineTable]) -> None:
    """Every table's lease held, as by a live dealer (the wallet's reaper reads them)."""
    try:
        kv = await js.key_value(DEALER_LEASES)
    except nats.js.errors.BucketNotFoundError:
        kv = await js.create_key_value(bucket=DEALER_LEASES)
    for table in tables:
        await kv.put(table.table_id, b"bench-dealer")


async def measure_rate(
    multiple: float,
    tables: list[EngineTable],
    *,
    js: JetStreamContext,
    journal_js: JetStreamContext,
    wallet: WalletProcess,
    operator: WalletClient,
    dealer: GrpcWallet,
    store: JetStreamEventStore,
) -> list[Result]:
    appends_per_s = BASE_APPENDS_PER_S * multiple
    positions: dict[str, int] = {}
    await hold_leases(js, tables)
    await setup_tables(tables, operator, dealer, store, positions)
    await wait_caught_up(js, DRAIN_CAP_S)
    table_from = await last_seq(js, TABLE_STREAM)
    journal_from = await last_seq(journal_js, WALLET_STREAM)

    cpu_before = wallet.cpu_seconds()
    log = await play(tables, appends_per_s, js=js, dealer=dealer, store=store, positions=positions)
    cpu_play = wallet.cpu_seconds() - cpu_before
    drain_s = await wait_caught_up(js, DRAIN_CAP_S)

    postings = Postings()
    await read_stream(journal_js, WALLET_STREAM, JOURNAL_SUBJECT, journal_from, postings.keep)
    ended_at = await stored_times(js, table_from, set(log.hand_ends.values()))
    latencies = [
        (postings.settled[key] - ended_at[seq]) * 1000
        for key, seq in log.hand_ends.items()
        if key in postings.settled and seq in ended_at
    ]
    missing = len(log.hand_ends) - len(latencies)
    window = log.ended - log.started
    in_window = sum(1 for at in postings.tx_times if log.started <= at <= log.ended)
    lags = [lag for _, lag in log.lag]
    quarter = max(1, len(lags) // 4)
    growth = statistics.fmean(lags[-quarter:]) - statistics.fmean(lags[:quarter]) if lags else 0.0
    name = f"wallet.{multiple:g}x"
    hands_s = len(log.hand_ends) / window
    print(
        f"  {name}: {log.appends / window:.0f} appends/s, {hands_s:.1f} hands/s, "
        f"{in_window / window:.0f} ledger tx/s, wallet CPU {cpu_play / window:.0%}, "
        f"lag max {max(lags, default=0)} mean {statistics.fmean(lags) if lags else 0:.1f} "
        f"growth {growth:+.1f}, drain {drain_s * 1000:.0f} ms, "
        f"hand end -> posting p50 {quantile(latencies, 0.5):.1f} ms "
        f"p99 {quantile(latencies, 0.99):.1f} ms max {max(latencies, default=0):.1f} ms "
        f"({len(latencies)} hands, {missing} not posted), "
        f"publisher late by up to {log.late_s * 1000:.0f} ms",
        flush=True,
    )
    if os.environ.get("BENCH_WALLET_DEBUG"):
        worst = sorted(
            ((postings.settled[k] - ended_at[q]) * 1000, ended_at[q] - log.started, k)
            for k, q in log.hand_ends.items()
            if k in postings.settled and q in ended_at
        )[-15:]
        print("  worst (ms, at s):", [(round(a), round(b, 2)) for a, b, _ in worst])
        print("  lag:", [(round(t - log.started, 1), n) for t, n in log.lag if n > 5])
    if missing:
        raise RuntimeError(f"{missing} hands of {name} never reached the ledger")
    return [
        Result(f"{name}.appends", log.appends / window, "appends/s"),
        Result(f"{name}.hands", hands_s, "hands/s"),
        Result(f"{name}.ledger_tx", in_window / window, "tx/s"),
        Result(f"{name}.wallet_cpu", 100 * cpu_play / window, "% of a core"),
        Result(f"{name}.lag_max", float(max(lags, default=0)), "messages"),
        Result(f"{name}.lag_mean", statistics.fmean(lags) if lags else 0.0, "messages"),
        Result(f"{name}.lag_growth", growth, "messages"),
        Result(f"{name}.drain", drain_s * 1000, "ms"),
        Result(f"{name}.hand_to_ledger_p50", quantile(latencies, 0.5), "ms"),
        Result(f"{name}.hand_to_ledger_p99", quantile(latencies, 0.99), "ms"),
        # Above a few ms the load generator itself stalled: the machine was busy elsewhere.
        Result(f"{name}.publisher_late_max", log.late_s * 1000, "ms"),
    ]


# --- the pure ledger ------------------------------------------------------------------------------


def ledger_commands(tables: list[EngineTable]) -> list[LedgerCommand]:
    """What the wallet decides for ``tables``: cash, then per command its hold and its events."""
    now = time.time_ns() // 1_000_000
    commands: list[LedgerCommand] = []
    for table in tables:
        for seat in range(1, PLAYERS + 1):
            who = player(table.table_id, seat)
            commands.append(Deposit(who, CASH, f"client:{who}:d", now))
        view = TableView(table.table_id)
        for position, append in enumerate(table.appends, 1):
            if append.hold is not None:
                who, amount = append.hold
                ttl_ms = int(HOLD_TTL_S * 1000)
                commands.append(
                    PlaceHold(append.command_id, who, table.table_id, amount, ttl_ms, now)
                )
            batch = pb.TableEventBatch.FromString(append.data)
            view, mapped = map_batch(view, batch, position=position, now=now)
            commands.extend(mapped)
    return commands


def pure_ledger(tables: list[EngineTable]) -> float:
    """Ledger transactions/s of decide + evolve alone over ``tables``' commands."""
    commands = ledger_commands(tables)

    def batch() -> int:
        state = LedgerState()
        count = 0
        for command in commands:
            for event in decide(state, command):
                state = evolve(state, event)
                count += 1
        return count

    return rates({"ledger": batch}, repeats=3)["ledger"]


# --- all of it ------------------------------------------------------------------------------------


async def _run_all() -> list[Result]:
    results: list[Result] = []
    rng = random.Random(SEED)
    started = time.perf_counter()
    histories = {
        multiple: generate(
            f"r{index}",
            int(BASE_APPENDS_PER_S * multiple / TABLES * PLAY_S) + 2,
            rng,
        )
        for index, multiple in enumerate(RATES)
    }
    print(f"  histories generated in {time.perf_counter() - started:.1f} s", flush=True)
    # The load generator must not pause: its long-lived histories out of the collector's way.
    gc.collect()
    gc.freeze()
    secret = secrets.token_bytes(32)
    with tempfile.TemporaryDirectory(prefix="bench-wallet-") as work:
        server = NatsServer(Path(work) / "nats")
        server.start()
        try:
            log = Path(os.environ.get("BENCH_WALLET_LOG", Path(work) / "wallet.log"))
            with running(WalletProcess(server, secret, log)) as wallet:
                results += await _measure(server, secret, wallet, histories)
        finally:
            server.stop()
    gc.unfreeze()
    top = histories[max(RATES)]
    pure = pure_ledger(top[:PURE_TABLES])
    service = next(r for r in results if r.name == f"wallet.{max(RATES):g}x.ledger_tx")
    results.append(Result("wallet.ledger_pure", pure, "tx/s"))
    results.append(
        Result(f"wallet.{max(RATES):g}x.service_vs_pure", service.value, "tx/s", "pure", pure)
    )
    return results


async def _measure(
    server: NatsServer,
    secret: bytes,
    wallet: WalletProcess,
    histories: dict[float, list[EngineTable]],
) -> list[Result]:
    results: list[Result] = []
    # One connection per account, as its admin: the table stream, the dealers' leases and the
    # wallet's consumer (TABLES), the journal (WALLET: not visible from the TABLES account).
    connection = await nats.connect(server.url, name="bench-wallet")
    journal_connection = await nats.connect(server.wallet_url, name="bench-wallet-journal")
    channel = grpc.aio.insecure_channel(wallet.address)
    dealer = GrpcWallet([wallet.address], secret, timeout_s=10.0)
    try:
        js = connection.jetstream()
        journal_js = journal_connection.jetstream()
        operator = WalletClient(channel, secret, "bench-operator", Role.OPERATOR)
        await _wait_leading(operator)
        store = JetStreamEventStore(
            js, StreamSettings(stream=TABLE_STREAM, subject_prefix=TABLE_PREFIX)
        )
        # The table stream is provisioned (WalletProcess): the bench appends to it as a dealer.
        for multiple, tables in histories.items():
            results += await measure_rate(
                multiple,
                tables,
                js=js,
                journal_js=journal_js,
                wallet=wallet,
                operator=operator,
                dealer=dealer,
                store=store,
            )
    finally:
        await dealer.close()
        await channel.close()
        await journal_connection.close()
        await connection.close()
    return results


async def _wait_leading(operator: WalletClient, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            await operator.call("GetBalance", wpb.GetBalanceRequest(player_id="nobody"))
            return
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return  # answered: it leads
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


def run() -> list[Result]:
    """The wallet's figures (see the module docstring)."""
    return asyncio.run(_run_all())
