"""One forged record costs one table, never the room: ten tables play on a real dealer process;
with the dealer killed (-9), a record is forged into the stream as the dealer's own NATS user (a
bad seal on a table's subject, a message on a subject that is no table's, or bytes that are no
table batch under a valid seal: a leaked key); the dealer starts again and the nine other tables
play on while the tenth is named (metric, ListTables, its commands refused with a sentence).
The operator's ``pokerctl log remove-record`` refuses to delete a good record, removes the forged
one, and the tenth plays again."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import grpc
import nats
import nats.js.errors
import pytest

from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import Writer, load_keyring
from poker.servicekit.nats_connect import NatsSettings
from poker.servicekit.nats_permissions import DEALER_USER
from poker.servicekit.tokens import Role
from poker.tablelog.seals import TableSeals
from poker.testing.nats_server import NatsServer, free_port
from poker.testing.service_process import ServiceProcess, harness_log_keys_file
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from tests.dealer_support import open_holdem, seat_players, view_until
from tests.faults.dealer_process import SECRET, DealerProcess, table_names

TABLES = 10
ROOT = Path(__file__).resolve().parents[2]


def _dealer(nats_server: NatsServer, namespace: str, log: Path, metrics_port: int) -> DealerProcess:
    return DealerProcess(
        nats_server,
        namespace,
        log,
        flags=["--crash-rule", "void", "--metrics-port", str(metrics_port)],
    )


async def _play_a_hand(client: Client, channel: grpc.aio.Channel, table_id: str) -> None:
    """The seat to act folds the hand in progress; the next hand is dealt (the hand completed)."""
    view = await view_until(client, table_id, lambda v: bool(v.hand.seat_to_act), timeout_s=20)
    to_act = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    player = Client(channel, SECRET, to_act, Role.PLAYER)
    await player.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_FOLD, 0)
    await view_until(
        client,
        table_id,
        lambda v: v.hands_started > view.hands_started and bool(v.hand.seat_to_act),
        timeout_s=20,
    )


def _metric(port: int, name: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith(f"{name} "):
                return float(line.split()[1])
    return None


async def _metric_until(port: int, name: str, value: float) -> None:
    """Read the metric every 50 ms until it is ``value`` (at most 20 s)."""
    seen = None
    for _ in range(400):
        seen = await asyncio.to_thread(_metric, port, name)
        if seen == value:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} stayed {seen}, not {value}")


async def _forge(
    nats_server: NatsServer, namespace: str, table_id: str, variant: str, keys: Path
) -> int:
    """Publish the forged message as the dealer's own NATS user (a foreign subject through the
    server's reply); its stream position."""
    names = table_names(namespace)
    settings = NatsSettings(
        servers=(nats_server.service_url,), credentials=str(nats_server.credentials(DEALER_USER))
    )
    client = await nats.connect(
        servers=list(settings.servers), allow_reconnect=False, **settings.connect_options()
    )
    try:
        js = client.jetstream()
        store = JetStreamEventStore(
            js, StreamSettings(stream=names.stream, subject_prefix=names.subject_prefix)
        )
        last = await store._last_message(table_id)
        assert last is not None
        seals = TableSeals(load_keyring(keys), Writer.DEALER)
        subject = f"{names.subject_prefix}.{table_id}"
        if variant == "bad_seal":  # a real batch's bytes, under a seal of other bytes
            headers = seals.headers(table_id, last.position, "forged", b"other bytes")
            data = last.data
        elif variant == "foreign_subject":
            # The dealer's user may publish only on a table's own subject (one token), but the
            # server sends a JetStream answer wherever the caller's reply subject says: the
            # stream's info (JSON) lands below the table's subject: within its own account the
            # server still answers there (docs/security/nats.md, "Server answers steered by the
            # requester": the accounts keep it out of the other service's). (A direct get's copy
            # of a record would carry the record's Nats-Msg-Id, and the stream drops it as a
            # duplicate within its window.)
            foreign = f"{names.subject_prefix}.0.{table_id}"
            await client.publish(f"$JS.API.STREAM.INFO.{names.stream}", b"", reply=foreign)
            await client.flush()
            return await _landed(nats_server, names.stream, foreign)
        else:  # undecodable bytes, sealed with a (leaked) dealer key
            data = b"\xff\xff\xff\xff not a batch"
            headers = seals.headers(table_id, last.position, "forged", data)
        ack = await js.publish(
            subject, data, headers={**headers, "Nats-Msg-Id": f"{table_id}:forged"}
        )
        return int(ack.seq)
    finally:
        await client.close()


async def _landed(nats_server: NatsServer, stream: str, subject: str) -> int:
    """The stream position of the message on ``subject``, as the admin sees it once it lands."""
    admin = await nats.connect(nats_server.url)
    try:
        for _ in range(400):
            try:
                landed = (await admin.jetstream().get_last_msg(stream, subject)).seq
                assert landed is not None
                return landed
            except nats.js.errors.NotFoundError:
                await asyncio.sleep(0.025)
        info = await admin.jetstream().stream_info(stream, subjects_filter=">")
        raise AssertionError(f"nothing landed on {subject}: {info.state.subjects}")
    finally:
        await admin.close()


def _pokerctl(
    nats_server: NatsServer, namespace: str, home: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """``pokerctl log remove-record ARGS`` as the operator (the admin NATS user)."""
    names = table_names(namespace)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "poker.tools.pokerctl",
            "--home",
            str(home),
            "log",
            "remove-record",
            *args,
            "--nats-url",
            nats_server.url,  # the operator (admin) user
            "--table-stream",
            names.stream,
            "--table-subject-prefix",
            names.subject_prefix,
            "--log-keys",
            str(harness_log_keys_file(home)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


async def _list(operator: Client) -> dict[str, dpb.TableSummary]:
    reply = await operator.call("ListTables", dpb.ListTablesRequest())
    return {summary.table_id: summary for summary in reply.tables}


@pytest.mark.parametrize("variant", ["bad_seal", "foreign_subject", "undecodable"])
async def test_a_forged_record_costs_its_table_alone_until_the_operator_removes_it(
    nats_server: NatsServer, processes: list[ServiceProcess], tmp_path: Path, variant: str
) -> None:
    namespace = uuid.uuid4().hex[:8]
    metrics_port = free_port()
    first = _dealer(nats_server, namespace, tmp_path / "dealer.log", metrics_port)
    processes.append(first)
    first.start()
    async with grpc.aio.insecure_channel(first.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        tables = []
        for number in range(TABLES):
            table_id = await open_holdem(operator, pause_ms=100, timer_ms=60_000)
            await seat_players(channel, SECRET, table_id, (f"a{number}", f"b{number}"), 100)
            tables.append(table_id)
        for table_id in tables:
            await _play_a_hand(operator, channel, table_id)
    first.kill()

    victim, others = tables[-1], tables[:-1]
    keys = harness_log_keys_file(tmp_path)  # the dealers' own log keys (a leaked one)
    position = await _forge(nats_server, namespace, victim, variant, keys)

    second = _dealer(nats_server, namespace, tmp_path / "dealer.log", metrics_port)
    processes.append(second)
    second.start()  # serving: one table's record never stops the start
    async with grpc.aio.insecure_channel(second.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        # Every lease taken over once the dead dealer's expired (the quarantined table's too:
        # it is held, not served, so that nobody else reloads it or closes it).
        await _metric_until(metrics_port, "poker_dealer_tables_owned", float(TABLES))
        for table_id in others:
            await _play_a_hand(operator, channel, table_id)
        listed = await _list(operator)
        assert set(listed) == set(tables)  # the foreign subject is no table
        assert not any(listed[t].quarantined for t in others)
        if variant == "foreign_subject":
            await _metric_until(metrics_port, "poker_dealer_table_log_foreign_subjects", 1.0)
            await _play_a_hand(operator, channel, victim)  # its table is not even touched
        else:
            await _metric_until(metrics_port, "poker_dealer_tables_quarantined", 1.0)
            assert listed[victim].quarantined
            assert f"position {position}" in listed[victim].quarantine_reason
            view = await operator.table(tables[0])
            assert view.table_id == tables[0]
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await operator.table(victim)
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "suspended" in str(refused.value.details())

        # The operator cannot delete real history with the command ...
        good = await _last_good_position(nats_server, namespace, others[0])
        kept = _pokerctl(
            nats_server, namespace, tmp_path, "--table", others[0], "--position", str(good)
        )
        assert kept.returncode == 1, kept.stdout + kept.stderr
        assert "passes every check" in kept.stderr
        # ... nor the forged record under another table's name.
        wrong = _pokerctl(
            nats_server, namespace, tmp_path, "--table", others[0], "--position", str(position)
        )
        assert wrong.returncode == 1 and "Not removed" in wrong.stderr
        # The forged one goes.
        tail = f"0.{victim}" if variant == "foreign_subject" else victim
        removed = _pokerctl(
            nats_server, namespace, tmp_path, "--table", tail, "--position", str(position)
        )
        assert removed.returncode == 0, removed.stdout + removed.stderr
        assert f"removed the record at position {position}" in removed.stdout

        # The tenth plays again (the next scan re-adopts it), the others go on.
        await _metric_until(metrics_port, "poker_dealer_tables_quarantined", 0.0)
        await _metric_until(metrics_port, "poker_dealer_table_log_foreign_subjects", 0.0)
        await _play_a_hand(operator, channel, victim)
        await _play_a_hand(operator, channel, others[0])
        assert not (await _list(operator))[victim].quarantined
    second.stop()


async def _last_good_position(nats_server: NatsServer, namespace: str, table_id: str) -> int:
    client = await nats.connect(nats_server.url)
    try:
        names = table_names(namespace)
        store = JetStreamEventStore(
            client.jetstream(),
            StreamSettings(stream=names.stream, subject_prefix=names.subject_prefix),
        )
        return await store.last_position(table_id)
    finally:
        await client.close()
