"""``pokerctl log archive`` against a real nats-server, dealer and wallet: a table closed past
the retention whose records the wallet has acknowledged leaves the hot table stream for the
archive stream, and ``verify``/``export --archive`` read it there with the hot log's verdict;
an open table, one within the retention and one the wallet has not acknowledged stay; a run
cut short between the copy and the delete (or in the delete) is completed by the next."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from nats.js import JetStreamContext

from poker.eventstore.jetstream import JetStreamEventStore
from poker.eventstore.sealing import write_keyring
from poker.testing.dealer import TEST_KEYRINGS
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import harness_deck_key_file
from poker.tools.logtools import archive
from tests.integration.test_pokerctl import Room, new_table, pokerctl, room

__all__ = ["room"]  # the fixture, shared


@pytest.fixture
async def js(nats_server: NatsServer) -> AsyncIterator[JetStreamContext]:
    """The operator's JetStream (the fixture's URL carries the admin user)."""
    client = await nats.connect(nats_server.url)
    try:
        yield client.jetstream()
    finally:
        await client.close()


async def _closed_table(room: Room) -> str:
    """A table where bots played a hand, then closed by the operator."""
    table_id = await new_table(room)
    await pokerctl(room, "bots", table_id, "--count", "2", "--hands", "1", "--think-ms", "0")
    await pokerctl(room, "close", table_id)
    return table_id


async def _wallet_caught_up(js: JetStreamContext, room: Room) -> None:
    """Until the wallet's consumer has acknowledged every table record (bounded)."""
    settings = room.wallet.settings
    deadline = time.monotonic() + 15
    while True:
        info = await js.consumer_info(settings.table_stream, settings.consumer_name)
        if not info.num_pending and not info.num_ack_pending:
            return
        assert time.monotonic() < deadline, "the wallet's consumer never caught up"
        await asyncio.sleep(0.02)


async def _held(js: JetStreamContext, stream: str) -> tuple[int, int, int]:
    """A stream's subjects, messages and bytes."""
    state = (await js.stream_info(stream, subjects_filter=">")).state
    return len(state.subjects or {}), state.messages, state.bytes


def _log_flags(room: Room, nats_server: NatsServer, public: Path) -> list[str]:
    settings = room.dealer.settings
    return [
        "--nats-url",
        nats_server.url,
        "--table-stream",
        settings.table_stream,
        "--table-subject-prefix",
        settings.table_subject_prefix,
        "--log-keys",
        str(public),
    ]


async def test_archive_moves_closed_tables_past_retention_and_they_still_verify_and_export(
    room: Room, nats_server: NatsServer, js: JetStreamContext, tmp_path: Path
) -> None:
    public = write_keyring(TEST_KEYRINGS.public, tmp_path / "log-keys-public.json", mode=0o644)
    log = _log_flags(room, nats_server, public)
    consumer = ["--wallet-consumer", room.wallet.settings.consumer_name]
    settings = room.dealer.settings
    hot = JetStreamEventStore(js, settings.table_log.stream_settings)
    archived = archive.ArchivedLog(js, hot.settings)
    closed = [await _closed_table(room) for _ in range(3)]
    still_open = await new_table(room)
    await _wallet_caught_up(js, room)
    hot_logs = {t: [r async for r in hot.read(t)] for t in closed}
    deck = ["--deck-key", str(harness_deck_key_file(tmp_path))]
    hot_verdict = json.loads(
        await pokerctl(room, "verify", closed[0], *log, *deck, "--no-checkpoints", "--json")
    )
    assert hot_verdict["ok"], hot_verdict

    # Within the retention: nothing moves.
    kept = json.loads(
        await pokerctl(room, "log", "archive", "--retention", "1h", *consumer, *log, "--json")
    )
    assert kept["archived"] == 0
    whys = {t["table_id"]: t["why"] for t in kept["tables"]}
    assert whys[closed[0]] == "it closed within the retention"
    assert whys[still_open].startswith("it is open")

    # A run cut short after copying the first table and before deleting it: both copies stand.
    last = max(r.position for r in hot_logs[closed[0]])
    cut = await archive.archive_table(
        js, hot, archived, closed[0], keyring=TEST_KEYRINGS.public, now_ms=2**62,
        retention_ms=0, ack_floor=last - 1,
    )  # fmt: skip
    assert cut.action == "kept" and "not acknowledged" in cut.why  # the wallet's floor gates
    await archive._copy(archived, closed[0], hot_logs[closed[0]], 0)
    # ...and one cut short in the middle of deleting the second table's hot records.
    await archive._copy(archived, closed[1], hot_logs[closed[1]], 0)
    half = [r.position for r in hot_logs[closed[1]]][: len(hot_logs[closed[1]]) // 2]
    await archive._delete(js, settings.table_stream, half)

    before = await _held(js, settings.table_stream)
    done = json.loads(
        await pokerctl(room, "log", "archive", "--retention", "0s", *consumer, *log, "--json")
    )
    after = await _held(js, settings.table_stream)
    outcomes = {t["table_id"]: t["action"] for t in done["tables"]}
    assert {t: outcomes[t] for t in closed} == dict.fromkeys(closed, "archived")
    assert outcomes[still_open] == "kept"
    print(f"\ntable stream before/after archiving {len(closed)} closed tables: {before} -> {after}")
    assert after[0] == 1  # only the open table's subject is left
    assert after[2] < before[2]
    for table_id in closed:
        assert await hot.last_position(table_id) == 0  # its hot subject is gone
        copies = [r async for r in archived.read(table_id)]
        assert copies == hot_logs[table_id]  # byte-identical, headers, positions, times; once

    again = json.loads(
        await pokerctl(room, "log", "archive", "--retention", "0s", *consumer, *log, "--json")
    )
    assert again["archived"] == 0  # idempotent: nothing left to move

    verified = json.loads(
        await pokerctl(
            room, "verify", *closed, "--archive", *log, *deck, "--no-live", "--no-checkpoints",
            "--json",
        )
    )  # fmt: skip
    assert verified["ok"], verified
    report = next(t for t in verified["tables"] if t["table_id"] == closed[0])
    assert report["version"] == hot_verdict["tables"][0]["version"]
    assert report["hands"] == hot_verdict["tables"][0]["hands"] >= 1
    target = tmp_path / "archived.phhs"
    exported = json.loads(
        await pokerctl(
            room, "export", "--table", closed[0], "--archive", *log[:-2], *deck, "-o", str(target),
            "--json",
        )
    )  # fmt: skip
    assert exported["hands"] >= 1
