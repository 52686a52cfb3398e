"""SIGSTOP a dealer (a real ``python -m poker.dealer`` process) past its heartbeat's TTL: its
tables move to the other dealer, which serves them; SIGCONT it: it appends nothing, and its
clients are refused (UNAVAILABLE or FAILED_PRECONDITION), never answered with a success.

The fencing under test is :mod:`poker.dealer.ownership`'s: one heartbeat per dealer, which
every claim of its tables refers to; a dealer whose own heartbeat deadline passed owns nothing;
and the takeover record the new owner writes before serving a table, which fences the one
command a dealer stopped *between* its last ownership check and its append may still send
(stopped exactly there by the fault point of :mod:`poker.dealer.faultpoints`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path

import grpc
import nats
import pytest

from poker.dealer.faultpoints import SIGSTOP_BEFORE_APPEND
from poker.eventstore.heartbeats import JetStreamHeartbeatStore
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.leases import LeaseSettings
from poker.servicekit.tokens import Role
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ServiceProcess
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.dealer_support import open_holdem, seat_players, view_until
from tests.faults.dealer_process import SECRET, DealerProcess, table_names

LEASE_TTL_S = 1.5
#: Bounds of the polls below: a takeover comes a TTL plus a scan or two after the stop.
TAKEOVER_BOUND_S = 30.0
REFUSED = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION}
#: What a command fenced at its append may get (ABORTED: its retries exhausted).
FENCED = {*REFUSED, grpc.StatusCode.ABORTED}


async def _owners(nats_url: str, namespace: str, tables: list[str]) -> list[str | None]:
    """Who owns each table now (claim + live heartbeat), read as the admin."""
    client = await nats.connect(nats_url)
    try:
        names = table_names(namespace)
        store = JetStreamHeartbeatStore(
            client.jetstream(), LeaseSettings(bucket=names.lease_bucket)
        )
        assert await store.bind_bucket()
        return [await store.owner_of(table) for table in tables]
    finally:
        await client.close()


async def _owners_become(nats_url: str, namespace: str, tables: list[str], owner: str) -> None:
    """Poll (bounded) until every table is owned by ``owner``."""
    deadline = time.monotonic() + TAKEOVER_BOUND_S
    owners: list[str | None] = []
    while time.monotonic() < deadline:
        owners = await _owners(nats_url, namespace, tables)
        if owners == [owner] * len(tables):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the tables never all became {owner}'s: {owners}")


async def _records(nats_url: str, namespace: str, tables: list[str]) -> dict[str, list[bytes]]:
    """Every record of each table's log, as stored."""
    client = await nats.connect(nats_url)
    try:
        names = table_names(namespace)
        settings = StreamSettings(stream=names.stream, subject_prefix=names.subject_prefix)
        store = JetStreamEventStore(client.jetstream(), settings)
        return {table: [record.data async for record in store.read(table)] for table in tables}
    finally:
        await client.close()


def _log_says(process: ServiceProcess, needle: str) -> bool:
    return needle in process.log.read_text(errors="replace")


async def _wait_log(process: ServiceProcess, needle: str) -> None:
    """Poll (bounded) until the process's log holds ``needle``."""
    deadline = time.monotonic() + TAKEOVER_BOUND_S
    while time.monotonic() < deadline:
        if _log_says(process, needle):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{process.name} never logged {needle!r}; see {process.log}")


async def _refused(call: Awaitable[object]) -> grpc.StatusCode:
    """The status of a call that must fail; a success fails the test."""
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    return refused.value.code()


def _commands(channel: grpc.aio.Channel, tables: list[str]) -> list[Awaitable[object]]:
    """Commands that were valid at these tables as A last saw them: eve sits down at seat 5,
    cat (who left at B) stands up from seat 1."""
    calls: list[Awaitable[object]] = []
    for table in tables:
        sit = dpb.SitDownRequest(command_id=uuid.uuid4().hex, table_id=table, seat=5, buy_in=100)
        calls.append(Client(channel, SECRET, "eve", Role.PLAYER).call("SitDown", sit))
        stand = dpb.StandUpRequest(command_id=uuid.uuid4().hex, table_id=table, seat=1)
        calls.append(Client(channel, SECRET, "cat", Role.PLAYER).call("StandUp", stand))
    return calls


async def test_a_stopped_dealer_wakes_owning_nothing_and_appends_nothing(
    nats_server: NatsServer, processes: list[ServiceProcess], tmp_path: Path
) -> None:
    namespace = uuid.uuid4().hex[:8]
    a_id, b_id = f"dealer-a-{namespace}", f"dealer-b-{namespace}"
    ttl = ("--lease-ttl", str(LEASE_TTL_S))
    a = DealerProcess(nats_server, namespace, tmp_path / "a.log", [*ttl, "--owner-id", a_id])
    processes.append(a)
    a.start()
    b = DealerProcess(nats_server, namespace, tmp_path / "b.log", [*ttl, "--owner-id", b_id])
    processes.append(b)
    b.start()

    async with grpc.aio.insecure_channel(a.address) as at_a:
        operator = Client(at_a, SECRET, "op", Role.OPERATOR)
        mid_hand = await open_holdem(operator, pause_ms=60_000)
        await seat_players(at_a, SECRET, mid_hand, ("ann", "bob"), 100)
        await view_until(operator, mid_hand, lambda v: v.hand.seat_to_act)
        idle = [await open_holdem(operator, pause_ms=60_000) for _ in range(3)]
        for table in idle:
            await seat_players(at_a, SECRET, table, ("cat",), 100)
        tables = [mid_hand, *idle]
        assert await _owners(nats_server.url, namespace, tables) == [a_id] * len(tables)

        assert a.process is not None
        os.kill(a.process.pid, signal.SIGSTOP)
        try:
            # The idle tables become B's; the one with a hand running is closed by B's crash
            # rule (the default: close), which releases it.
            await _owners_become(nats_server.url, namespace, idle, b_id)
            async with grpc.aio.insecure_channel(b.address) as at_b:
                at_b_operator = Client(at_b, SECRET, "op", Role.OPERATOR)
                await view_until(at_b_operator, mid_hand, lambda v: v.closed)
                # One table B only took over (its log unchanged since A: the position A last
                # saw is still the last, only A's own deadline fences it); at the others, B
                # appended (cat left): A's expected position fails there too.
                for table in idle[1:]:
                    cat = Client(at_b, SECRET, "cat", Role.PLAYER)
                    await cat.call(
                        "StandUp", dpb.StandUpRequest(command_id="leave", table_id=table, seat=1)
                    )
                    await view_until(at_b_operator, table, lambda v: not v.seats)
            before = await _records(nats_server.url, namespace, tables)
            # Calls queued at A while it sleeps: it reads them the moment it wakes, with its
            # heartbeat's renewal overdue but not yet refused.
            queued = [asyncio.ensure_future(_refused(call)) for call in _commands(at_a, idle)]
            # Not a synchronisation (the assertions hold whenever the calls arrive): a moment
            # for them to reach A's socket, so that the wake-up race is the one usually run.
            await asyncio.sleep(0.2)
        finally:
            os.kill(a.process.pid, signal.SIGCONT)
        assert set(await asyncio.gather(*queued)) <= REFUSED
        # Once A has heard that its heartbeat is gone: refused still.
        await _wait_log(a, "leases_lost")
        assert set(await asyncio.gather(*map(_refused, _commands(at_a, idle)))) <= REFUSED

    # Nothing A might have had in flight or on a timer landed: every log is as B left it.
    assert await _records(nats_server.url, namespace, tables) == before
    assert await _owners(nats_server.url, namespace, idle) == [b_id] * len(idle)
    assert not _log_says(b, "leases_lost")
    a.stop()
    b.stop()


def _is_stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (its state in ``/proc``, Linux)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] == "T"


async def _stopped(pid: int) -> None:
    """Poll (bounded) until process ``pid`` stopped itself."""
    deadline = time.monotonic() + TAKEOVER_BOUND_S
    while time.monotonic() < deadline:
        if _is_stopped(pid):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"process {pid} never stopped")


async def _batches(nats_url: str, namespace: str, table: str) -> list[pb.TableEventBatch]:
    """The table's log, each record as its batch."""
    records = (await _records(nats_url, namespace, [table]))[table]
    return [pb.TableEventBatch.FromString(data) for data in records]


async def _taken_over_by(nats_url: str, namespace: str, table: str, owner: str) -> None:
    """Poll (bounded) until the table's last record is ``owner``'s takeover record."""
    deadline = time.monotonic() + TAKEOVER_BOUND_S
    while time.monotonic() < deadline:
        batches = await _batches(nats_url, namespace, table)
        last = batches[-1].events[-1]
        if last.WhichOneof("body") == "table_taken_over" and last.table_taken_over.owner == owner:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{owner} never wrote its takeover record at {table}")


async def test_a_dealer_stopped_between_its_check_and_its_append_lands_nothing(
    nats_server: NatsServer, processes: list[ServiceProcess], tmp_path: Path
) -> None:
    """The window the heartbeat's deadline leaves: A decides a command (its ownership checked)
    and stops before the append leaves it. B takes the table over, which no other record
    changed since A's decision, and writes its takeover record first; A wakes and sends the
    append it decided: its expected position is gone, so it fails, and A's retry finds that it
    owns nothing. The client is refused; nothing of A's lands after B's record."""
    namespace = uuid.uuid4().hex[:8]
    a_id, b_id = f"dealer-a-{namespace}", f"dealer-b-{namespace}"
    stale_id = f"stale-{namespace}"
    ttl = ("--lease-ttl", str(LEASE_TTL_S))
    a = DealerProcess(
        nats_server,
        namespace,
        tmp_path / "a.log",
        [*ttl, "--owner-id", a_id],
        env={SIGSTOP_BEFORE_APPEND: stale_id},
    )
    processes.append(a)
    a.start()
    b = DealerProcess(nats_server, namespace, tmp_path / "b.log", [*ttl, "--owner-id", b_id])
    processes.append(b)
    b.start()
    assert a.process is not None
    pid = a.process.pid

    async with grpc.aio.insecure_channel(a.address) as at_a:
        operator = Client(at_a, SECRET, "op", Role.OPERATOR)
        table = await open_holdem(operator, pause_ms=60_000)
        await seat_players(at_a, SECRET, table, ("cat",), 100)
        assert await _owners(nats_server.url, namespace, [table]) == [a_id]
        decided_on = len(await _batches(nats_server.url, namespace, table))
        cat = Client(at_a, SECRET, "cat", Role.PLAYER)
        stand = dpb.StandUpRequest(command_id=stale_id, table_id=table, seat=1)
        # A decides it (cat stands up: his chips would leave), checks that it owns the table,
        # and stops itself right there, before the append: a real SIGSTOP at that point.
        stale = asyncio.ensure_future(_refused(cat.call("StandUp", stand)))
        try:
            await _stopped(pid)
            await _owners_become(nats_server.url, namespace, [table], b_id)
            await _taken_over_by(nats_server.url, namespace, table, b_id)
            before = await _batches(nats_server.url, namespace, table)
            # B wrote its takeover record and nothing else: the position A decided on is the
            # one B's record took (without it, A's append would land as the next record).
            assert len(before) == decided_on + 1
        finally:
            os.kill(pid, signal.SIGCONT)
        assert await stale in FENCED
        await _wait_log(a, "leases_lost")

    after = await _batches(nats_server.url, namespace, table)
    assert after == before  # nothing of A's after B's takeover record
    assert stale_id not in {batch.command_id for batch in after}
    taken = after[-1].events[-1].table_taken_over
    assert (taken.owner, taken.epoch > 0) == (b_id, True)
    assert await _owners(nats_server.url, namespace, [table]) == [b_id]
    a.stop()
    b.stop()
