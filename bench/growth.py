"""Growth benchmarks: what the room's costs do as its past grows (issue #26: every cost should be
bounded by what is live, not by what is past).

Each cost is measured at two sizes ten times apart (:func:`sizes`) and reported per size, plus
its slope fitted by least squares over the sizes (:func:`fit`), in a unit that names what grows
("ms per 1,000 tables ever opened", "µs per hand of history"): a flat cost has a slope near
zero, a linear one a slope that says what a year of the room would cost.

Everything runs on 127.0.0.1 against real ``nats-server`` processes (one per size, a temporary
store directory, the default room provisioned as the operator does with
:meth:`NatsServer.provision`) and the real services as child processes
(:mod:`poker.testing.service_process`, each connecting as its own NATS user), stopped by pid.
The history is written to the table stream directly (the dealer's batches, linked and sealed
with the test dealer keys as the dealer writes them: :func:`bench.services.publish_all`,
:func:`bench.wallet.do_append`) rather than played through gRPC, which would take hours at the
larger sizes; the services then read it as any log of theirs. Only public entry points are
measured: the services' start until their ready line / health SERVING, gRPC calls, and
``pokerctl`` as a child process (the one exception is the table rebuild, which has no RPC of its
own: the dealer's repository, as :mod:`bench.services` measures it).

* **Tables ever opened** (:data:`TABLES`): that many tables in the log, all but
  :data:`OPEN_TABLES` of them closed (each: created, two players seated, one hand, closed, by
  the engine); a first dealer starts, creates the open ones over gRPC and stops (a graceful
  stop: its leases released); then a second dealer's start until it prints its ready line
  (which it does once SERVING): wall time, and the CPU time of the dealer process by then (the
  interpreter's own start-up included: the slope leaves it out). Then ``ListTables`` (the
  default request: the first page once it is paginated): the first call's wall time and the
  best of :data:`REPEATS` more.
* **Hands of history** (:data:`HANDS`): :data:`HISTORY_TABLES` tables of three players
  (no-limit Hold'em 1/2) play that many hands in all (the engine, :mod:`bench.wallet`'s bot
  policy); every player has cash, every seat and top-up its hold placed through the wallet's
  gRPC first (as the dealer does), and the batches are appended as the dealer appends them; the
  wallet consumes them all. Then: the wallet's ``Audit`` (wall, first call; it must come back
  clean), the wallet's restart (SIGTERM, then a new process until health SERVING), ``pokerctl
  verify`` of the whole room (``--no-live``, with the deck key; wall of the child process) and
  ``pokerctl export --player`` (one player's hands; the child's peak RSS, from ``wait4``).
* **Table rebuild** (:data:`EVENTS`): a table of that many events (the bulk history of
  :func:`bench.services.recovery_time`) rebuilt from its sealed snapshot plus a short tail by
  the dealer's repository: the median of a few ``load()`` calls.
* **Idle, open tables** (:data:`IDLE_TABLES`): a wallet and a dealer, that many (empty) tables
  created over gRPC, consumed by the wallet and their listings written to the index of open
  tables by the dealer (the tail of the creations); then nothing happens for :data:`IDLE_S`: the
  CPU time of the dealer, the wallet and nats-server per second (its slope: µs per open table
  per second), and the dealer's RSS.

The sizes are the quick ones by default (``make bench`` stays within a few minutes more);
``BENCH_GROWTH_SCALE=10`` (or ``python -m bench growth --large``) multiplies the larger size of
each (the smaller one stays: the slope then spans 100x). ``BENCH_GROWTH_ONLY=tables,hands,
rebuild,idle`` runs only the parts named.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

import grpc
import nats
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from bench import services, wallet
from bench.harness import Result
from poker.dealer.metrics import DealerMetrics
from poker.dealer.wallet_client import GrpcWallet
from poker.engine.table import CloseTable
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.servicekit import flags
from poker.servicekit.nats_permissions import DEALER_USER, WALLET_USER
from poker.servicekit.provisioning import Room
from poker.servicekit.tokens import Role
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_event_store
from poker.testing.service_process import (
    ServiceProcess,
    cpu_seconds,
    harness_deck_key_file,
    harness_log_keys_file,
)
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

ROOT: Final = Path(__file__).resolve().parents[1]
SEED: Final = 20_260_426
#: The quick sizes (the larger one times :func:`scale`).
TABLES: Final = (50, 500)
HANDS: Final = (50, 500)
EVENTS: Final = (10_000, 100_000)
IDLE_TABLES: Final = (30, 300)
#: Open tables among the tables ever opened (the rest are closed).
OPEN_TABLES: Final = 5
HISTORY_TABLES: Final = 10
IDLE_S: Final = 10.0
REPEATS: Final = 3
#: Tables created over gRPC at once.
CREATE_CONCURRENCY: Final = 20
#: Holds outlive any lag of the wallet's consumer at the larger sizes.
HOLD_TTL_S: Final = 600.0
#: The bounds of every wait (a dealer start over 10,000 tables took 250 s before #26).
START_CAP_S: Final = 900.0
DRAIN_CAP_S: Final = 900.0
TOOL_CAP_S: Final = 900.0
_SERVING: Final = re.compile(r"dealer serving grpc=(\S+)")
_LISTENING: Final = re.compile(r"wallet listening grpc=(\S+)")


# --- the fit --------------------------------------------------------------------------------------


def fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The least-squares line through ``points`` (x, y): its slope and intercept. Needs two
    distinct x at least (a slope over one size means nothing)."""
    if len({x for x, _ in points}) < 2:
        raise ValueError("a slope needs at least two distinct sizes")
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in points)
    variance = sum((x - mean_x) ** 2 for x, _ in points)
    slope = covariance / variance
    return slope, mean_y - slope * mean_x


def curve(
    name: str, unit: str, points: dict[int, float], *, what: str, per: float, per_unit: str
) -> list[Result]:
    """One Result per size (``<name>.<size>_<what>``) and the fitted slope (``<name>.slope``,
    in ``unit`` per ``per`` of what grows, named ``per_unit``)."""
    results = [Result(f"{name}.{size}_{what}", value, unit) for size, value in points.items()]
    slope, _ = fit([(float(size), value) for size, value in points.items()])
    results.append(Result(f"{name}.slope", slope * per, f"{unit} per {per_unit}"))
    return results


def scale() -> int:
    """``BENCH_GROWTH_SCALE`` (default 1): the factor of the larger size of each curve."""
    value = int(os.environ.get("BENCH_GROWTH_SCALE", "1"))
    if value < 1:
        raise ValueError("BENCH_GROWTH_SCALE must be >= 1")
    return value


def sizes(quick: tuple[int, int]) -> tuple[int, int]:
    """The two sizes of a curve: the quick ones, the larger one scaled."""
    return quick[0], quick[1] * scale()


# --- processes ------------------------------------------------------------------------------------


@contextlib.contextmanager
def nats_room(work: Path) -> Iterator[NatsServer]:
    """A nats-server with the default room provisioned, stopped on the way out."""
    server = NatsServer(work / f"nats-{uuid.uuid4().hex[:6]}")
    server.start()
    try:
        server.provision(Room())
        yield server
    finally:
        server.stop()


def dealer_process(server: NatsServer, secret: bytes, work: Path) -> ServiceProcess:
    """``python -m poker.dealer`` with the default names, as the ``dealer`` NATS user, its own
    owner id (a restarted dealer is a new process)."""
    args = [
        sys.executable,
        *("-m", "poker.dealer", *server.service_flags(DEALER_USER)),
        *("--grpc-port", "0", "--metrics-port", "0", "--token-secret", secret.hex()),
        *("--owner-id", f"growth-{uuid.uuid4().hex[:8]}", "--drain-timeout", "0"),
        *("--log-keys", str(harness_log_keys_file(work, "dealer"))),
        *("--deck-key", str(harness_deck_key_file(work))),
    ]
    return ServiceProcess(
        args,
        work / "dealer.log",
        ready=_SERVING,
        name="the dealer",
        stop_timeout_s=60,
        start_timeout_s=START_CAP_S,
    )


def wallet_process(server: NatsServer, secret: bytes, work: Path) -> ServiceProcess:
    """``python -m poker.wallet`` with the default names, as the ``wallet`` NATS user (no dealer
    holds the tables' leases here: the reaper is told to wait an hour)."""
    flags = {
        "grpc-host": "127.0.0.1",
        "grpc-port": "0",
        "metrics-port": "0",
        "token-secret": secret.hex(),
        "hold-ttl": str(HOLD_TTL_S),
        "abandon-after": "3600",
        "log-level": "warning",
        "log-keys": str(harness_log_keys_file(work, "wallet")),
    }
    args = [sys.executable, "-m", "poker.wallet", *server.service_flags(WALLET_USER)]
    args += [f"--{name}={value}" for name, value in flags.items()]
    return ServiceProcess(
        args,
        work / "wallet.log",
        ready=_LISTENING,
        name="the wallet",
        stop_timeout_s=60,
        start_timeout_s=START_CAP_S,
    )


@contextlib.contextmanager
def running(process: ServiceProcess) -> Iterator[ServiceProcess]:
    """The process, started, stopped (by its pid) on the way out whatever happens."""
    try:
        process.start()
        yield process
    finally:
        process.stop()


async def serving(address: str, cap_s: float = START_CAP_S) -> None:
    """Returns once the server at ``address`` reports health SERVING (watched, not polled)."""
    async with grpc.aio.insecure_channel(address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)  # untyped stubs
        watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=cap_s)
        async for reply in watch:
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                watch.cancel()
                return
    raise RuntimeError(f"{address} never reported SERVING")


def rss_mb(pid: int) -> float:
    """The resident set of process ``pid`` now, MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def pid_of(process: ServiceProcess) -> int:
    """The pid of a started process."""
    assert process.process is not None
    return process.process.pid


async def bounded(jobs: Sequence[Callable[[], Awaitable[object]]], limit: int) -> None:
    """Run ``jobs``, ``limit`` at a time."""
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[object]]) -> None:
        async with gate:
            await job()

    await asyncio.gather(*(one(job) for job in jobs))


async def create_tables(address: str, secret: bytes, table_ids: Sequence[str]) -> None:
    """Create ``table_ids`` (empty no-limit Hold'em 1/2 tables) over gRPC as an operator."""
    async with grpc.aio.insecure_channel(address) as channel:
        operator = Client(channel, secret, "growth-operator", Role.OPERATOR)

        async def create(table_id: str) -> None:
            await operator.call(
                "CreateTable",
                dpb.CreateTableRequest(
                    command_id=f"create-{table_id}",
                    table_id=table_id,
                    game="holdem",
                    structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                    stakes=pb.Stakes(small_blind=1, big_blind=2),
                ),
            )

        await bounded([partial(create, table_id) for table_id in table_ids], CREATE_CONCURRENCY)


@contextlib.asynccontextmanager
async def admin(server: NatsServer) -> AsyncIterator[JetStreamContext]:
    """The TABLES account's admin connection (the bench writes the table log as a dealer)."""
    connection = await nats.connect(server.url, name="bench-growth")
    try:
        yield connection.jetstream(publish_async_max_pending=2_000)
    finally:
        await connection.close()


def table_store(js: JetStreamContext) -> JetStreamEventStore:
    """The default room's table log."""
    return JetStreamEventStore(
        js, StreamSettings(stream=wallet.TABLE_STREAM, subject_prefix=wallet.TABLE_PREFIX)
    )


# --- tables ever opened ---------------------------------------------------------------------------


def closed_table(table_id: str, rng: random.Random) -> list[tuple[str, bytes]]:
    """A table's log: created, two players seated, one hand played, closed (the engine)."""
    table = services.engine_table(table_id, 2)
    services.play_hands(table, 1, rng)
    table.run(partial(CloseTable, reason="growth bench"))
    return table.records


async def tables_point(count: int, secret: bytes, work: Path) -> dict[str, float]:
    """The dealer's start and ListTables with ``count`` tables ever opened (see the module)."""
    rng = random.Random(SEED + count)
    with nats_room(work) as server:
        async with admin(server) as js:
            store = table_store(js)
            for index in range(count - OPEN_TABLES):
                table_id = f"closed{index:06d}"
                await services.publish_all(js, store, table_id, closed_table(table_id, rng))
        with running(dealer_process(server, secret, work)) as first:
            opened = [f"open{index:03d}" for index in range(OPEN_TABLES)]
            await create_tables(first.address, secret, opened)
        dealer = dealer_process(server, secret, work)
        started = time.perf_counter()
        with running(dealer):
            start_s = time.perf_counter() - started
            start_cpu_s = dealer.cpu_seconds()
            async with grpc.aio.insecure_channel(dealer.address) as channel:
                operator = Client(channel, secret, "growth-operator", Role.OPERATOR)
                times = []
                listed = 0
                for _ in range(1 + REPEATS):
                    began = time.perf_counter()
                    reply = await operator.call("ListTables", dpb.ListTablesRequest())
                    times.append(time.perf_counter() - began)
                    listed = len(reply.tables)
    print(
        f"  {count} tables ever opened: dealer start {start_s:.2f} s ({start_cpu_s:.2f} s CPU),"
        f" ListTables {times[0] * 1000:.0f} ms first, {min(times[1:]) * 1000:.0f} ms then"
        f" ({listed} tables listed)",
        flush=True,
    )
    return {
        "start": start_s * 1000,
        "start_cpu": start_cpu_s * 1000,
        "list_first": times[0] * 1000,
        "list": min(times[1:]) * 1000,
    }


async def tables_curves(secret: bytes, work: Path) -> list[Result]:
    points = {count: await tables_point(count, secret, work) for count in sizes(TABLES)}
    results: list[Result] = []
    for name, key in (
        ("growth.dealer_start.wall", "start"),
        ("growth.dealer_start.cpu", "start_cpu"),
        ("growth.list_tables.first_call", "list_first"),
        ("growth.list_tables.call", "list"),
    ):
        values = {n: p[key] for n, p in points.items()}
        results += curve(
            name, "ms", values, what="tables", per=1000.0, per_unit="1,000 tables ever opened"
        )
    return results


# --- hands of history -----------------------------------------------------------------------------


def history(hands: int, rng: random.Random) -> list[wallet.EngineTable]:
    """:data:`HISTORY_TABLES` tables playing ``hands`` hands in all."""
    tables = []
    for index in range(HISTORY_TABLES):
        table = wallet.engine_table(f"h{hands}t{index:02d}")
        share = hands // HISTORY_TABLES + (1 if index < hands % HISTORY_TABLES else 0)
        for _ in range(share):
            wallet.play_hand(table, rng)
        tables.append(table)
    return tables


async def write_history(
    tables: list[wallet.EngineTable], server: NatsServer, address: str, secret: bytes
) -> None:
    """Cash for every player, then every table's batches appended as the dealer does (holds
    first), the tables side by side; returns once the wallet has consumed them all."""
    async with admin(server) as js, grpc.aio.insecure_channel(address) as channel:
        operator = WalletClient(channel, secret, "growth-operator", Role.OPERATOR)
        holds = GrpcWallet([address], secret, timeout_s=30.0)
        try:
            store = table_store(js)
            deposits = [
                partial(
                    operator.deposit,
                    wallet.player(t.table_id, seat),
                    wallet.CASH,
                    f"d{seat}{t.table_id}",
                )
                for t in tables
                for seat in range(1, wallet.PLAYERS + 1)
            ]
            await bounded(deposits, CREATE_CONCURRENCY)
            positions: dict[str, int] = {}

            async def append_all(table: wallet.EngineTable) -> None:
                for append in table.appends:
                    # The hold placed here with a TTL past the consumer's lag, then the append.
                    if append.hold is not None:
                        who, amount = append.hold
                        await holds.place_hold(
                            who,
                            amount,
                            hold_id=append.command_id,
                            ttl_s=HOLD_TTL_S,
                            table_id=table.table_id,
                        )
                    bare = wallet.Append(append.command_id, append.data, None, 0)
                    await wallet.do_append(table.table_id, bare, holds, store, positions)

            await asyncio.gather(*(append_all(table) for table in tables))
            waited = await wallet.wait_caught_up(js, DRAIN_CAP_S)
            if waited >= DRAIN_CAP_S:
                raise RuntimeError("the wallet did not consume the history in time")
        finally:
            await holds.close()


def nats_url_flag() -> str:
    """pokerctl's NATS URL flag: ``--nats-url`` (the flag of every program since the flags were
    unified), ``--nats`` before (the curves of an older checkout, for comparison)."""
    try:
        flags = importlib.import_module("poker.servicekit.flags")
    except ImportError:
        return "--nats"
    return "--nats-url" if hasattr(flags, "NATS_URL") else "--nats"


async def run_tool(*args: str, work: Path) -> tuple[float, float]:
    """``pokerctl ARGS`` as a child process (must succeed): its wall time (s) and peak RSS (MB,
    from ``wait4``, the child's own)."""
    command = [sys.executable, "-m", "poker.tools.pokerctl", *args]
    with (work / "pokerctl.out").open("w") as out, (work / "pokerctl.err").open("w") as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err)

        def reap() -> tuple[int, int]:
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            return child.returncode, usage.ru_maxrss

        try:
            code, max_rss_kb = await asyncio.wait_for(asyncio.to_thread(reap), TOOL_CAP_S)
        except TimeoutError:
            child.kill()
            child.wait()
            raise
        elapsed = time.perf_counter() - started
    if code != 0:
        tail = (work / "pokerctl.err").read_text()[-2000:]
        raise RuntimeError(f"pokerctl {args[0]} exited {code}: {tail}")
    return elapsed, max_rss_kb / 1024


async def hands_point(hands: int, secret: bytes, work: Path) -> dict[str, float]:
    """Audit, the wallet's restart, verify and export with ``hands`` hands of history."""
    tables = history(hands, random.Random(SEED + hands))
    with nats_room(work) as server:
        process = wallet_process(server, secret, work)
        with running(process):
            await serving(process.address)
            await write_history(tables, server, process.address, secret)
            async with grpc.aio.insecure_channel(process.address) as channel:
                operator = WalletClient(channel, secret, "growth-operator", Role.OPERATOR)
                began = time.perf_counter()
                audit = await operator.audit()
                audit_s = time.perf_counter() - began
            if not audit.clean:
                raise RuntimeError(f"the audit of the bench's history is not clean: {audit}")
            process.stop()
            began = time.perf_counter()
            process.start()
            await serving(process.address)
            restart_s = time.perf_counter() - began
        log = [nats_url_flag(), server.url, "--deck-key", str(harness_deck_key_file(work))]
        verify = ("verify", *log, "--no-live", "--json")
        verify_s = min([(await run_tool(*verify, work=work))[0] for _ in range(2)])
        who = wallet.player(tables[0].table_id, 1)
        target = work / "export.phhs"
        _, export_mb = await run_tool(
            "export", "--player", who, *log, "-o", str(target), "--json", work=work
        )
    print(
        f"  {hands} hands of history: Audit {audit_s * 1000:.0f} ms"
        f" ({audit.tables_checked} tables checked), wallet restart {restart_s:.2f} s,"
        f" verify {verify_s:.2f} s, export --player peak RSS {export_mb:.0f} MB",
        flush=True,
    )
    return {
        "audit": audit_s * 1000,
        "restart": restart_s * 1000,
        "verify": verify_s * 1000,
        "export_rss": export_mb,
    }


async def hands_curves(secret: bytes, work: Path) -> list[Result]:
    points = {count: await hands_point(count, secret, work) for count in sizes(HANDS)}
    results: list[Result] = []
    for name, key, unit, per, per_unit in (
        ("growth.wallet_audit", "audit", "ms", 1000.0, "1,000 hands"),
        ("growth.wallet_restart", "restart", "ms", 1000.0, "1,000 hands"),
        ("growth.verify_room", "verify", "ms", 1000.0, "1,000 hands"),
        ("growth.export_player_rss", "export_rss", "MB", 1000.0, "1,000 hands"),
    ):
        values = {n: p[key] for n, p in points.items()}
        results += curve(name, unit, values, what="hands", per=per, per_unit=per_unit)
    return results


# --- a table's rebuild ----------------------------------------------------------------------------


async def rebuild_curves(work: Path) -> list[Result]:
    """A table's rebuild from snapshot + tail at each size of :data:`EVENTS`."""
    points: dict[int, float] = {}
    with nats_room(work) as server:
        async with admin(server) as js:
            # The first rebuild in this process pays for what a running dealer has warm.
            for warm_up, events in ((True, EVENTS[0]), *((False, n) for n in sizes(EVENTS))):
                stream = f"GROWTH{uuid.uuid4().hex[:8]}".upper()
                settings = StreamSettings(stream=stream, subject_prefix=stream.lower())
                store = await provisioned_event_store(js, settings)
                metrics = DealerMetrics(CollectorRegistry())
                # bench.services builds the table of RECOVERY_EVENTS events: this size's instead.
                saved = services.RECOVERY_EVENTS
                setattr(services, "RECOVERY_EVENTS", events)  # noqa: B010 - a Final, on purpose
                try:
                    seconds, tail = await services.recovery_time(js, store, metrics)
                finally:
                    setattr(services, "RECOVERY_EVENTS", saved)  # noqa: B010
                    await js.delete_stream(stream)
                if warm_up:
                    continue
                points[events] = seconds * 1000
                print(
                    f"  rebuild of a table of {events:,} events: {seconds * 1000:.1f} ms"
                    f" (snapshot + {tail} events)",
                    flush=True,
                )
    return curve("growth.table_rebuild", "ms", points, what="events", per=1e6, per_unit="1M events")


# --- idle open tables -----------------------------------------------------------------------------


async def index_written(js: JetStreamContext, count: int) -> None:
    """Until the dealer has written every created table's listing to the index of open tables
    (two writes per table: the ``creating`` reservation, then the listing, which goes out in
    the background after the creation's append and lags the creations). That tail is the
    creation's work, not idle: measured from the first idle second, not with it."""
    stream = f"KV_{flags.TABLE_INDEX_BUCKET.default}"
    started = time.perf_counter()
    while (await js.stream_info(stream)).state.last_seq < 2 * count:
        if time.perf_counter() - started >= DRAIN_CAP_S:
            raise RuntimeError("the dealer did not write the tables' listings to the index")
        await asyncio.sleep(0.05)


async def idle_point(count: int, secret: bytes, work: Path) -> dict[str, float]:
    """CPU per second of each process and the dealer's RSS with ``count`` idle open tables."""
    with nats_room(work) as server:
        assert server.process is not None
        wallet_proc = wallet_process(server, secret, work)
        with running(wallet_proc), running(dealer_process(server, secret, work)) as dealer:
            await serving(wallet_proc.address)
            await create_tables(dealer.address, secret, [f"idle{i:05d}" for i in range(count)])
            async with admin(server) as js:
                if await wallet.wait_caught_up(js, DRAIN_CAP_S) >= DRAIN_CAP_S:
                    raise RuntimeError("the wallet did not consume the tables' creation")
                await index_written(js, count)
            pids = {
                "dealer": pid_of(dealer),
                "wallet": pid_of(wallet_proc),
                "nats": server.process.pid,
            }
            before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            began = time.perf_counter()
            await asyncio.sleep(IDLE_S)  # the measured window: nothing happens
            window = time.perf_counter() - began
            after = {name: cpu_seconds(pid) for name, pid in pids.items()}
            rss = rss_mb(pids["dealer"])
    per_s = {name: (after[name] - before[name]) / window * 1000 for name in pids}
    print(
        f"  {count} idle open tables: CPU ms/s dealer {per_s['dealer']:.1f},"
        f" wallet {per_s['wallet']:.1f}, nats-server {per_s['nats']:.1f};"
        f" dealer RSS {rss:.0f} MB",
        flush=True,
    )
    return {**per_s, "rss": rss}


async def idle_curves(secret: bytes, work: Path) -> list[Result]:
    points = {count: await idle_point(count, secret, work) for count in sizes(IDLE_TABLES)}
    results: list[Result] = []
    for name, key in (
        ("growth.idle_cpu.dealer", "dealer"),
        ("growth.idle_cpu.wallet", "wallet"),
        ("growth.idle_cpu.nats_server", "nats"),
    ):
        values = {n: p[key] * 1000 for n, p in points.items()}  # µs of CPU per second
        results += curve(name, "µs/s", values, what="open_tables", per=1.0, per_unit="open table")
    rss = {n: p["rss"] for n, p in points.items()}
    results += curve(
        "growth.dealer_rss", "MB", rss, what="open_tables", per=1000.0, per_unit="1,000 open tables"
    )
    return results


# --- the module's entry point ---------------------------------------------------------------------

PARTS: Final = ("tables", "hands", "rebuild", "idle")


async def _run_all() -> list[Result]:
    only = [p for p in os.environ.get("BENCH_GROWTH_ONLY", ",".join(PARTS)).split(",") if p]
    unknown = set(only) - set(PARTS)
    if unknown:
        raise ValueError(f"BENCH_GROWTH_ONLY: no part named {', '.join(sorted(unknown))}")
    secret = secrets.token_bytes(32)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-growth-") as folder:
        work = Path(folder)
        if "tables" in only:
            results += await tables_curves(secret, work)
        if "hands" in only:
            results += await hands_curves(secret, work)
        if "rebuild" in only:
            results += await rebuild_curves(work)
        if "idle" in only:
            results += await idle_curves(secret, work)
    return results


def run() -> list[Result]:
    """The growth curves (see the module docstring); a few minutes at the quick sizes."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return asyncio.run(_run_all())
