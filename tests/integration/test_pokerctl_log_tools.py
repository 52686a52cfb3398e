"""``pokerctl replay``, ``verify`` and ``export`` as an operator runs them (real child
processes) against a real nats-server, dealer and wallet: they read the table log from NATS
with the operator's credentials; bots play two hands first. A batch appended past the dealer
then makes ``verify`` name the table's broken chain and exit non-zero."""

from __future__ import annotations

import json
from pathlib import Path

import nats

from poker.engine.phh import parse_phh_all, replay_phh
from poker.eventstore.jetstream import JetStreamEventStore
from poker.eventstore.sealing import SEAL_HEADER, Writer, seal_batch, write_keyring
from poker.tablelog.chain import record_hash
from poker.testing.dealer import TEST_KEYRINGS
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import harness_deck_key_file
from poker.v1 import events_pb2 as pb
from tests.integration.test_pokerctl import Room, new_table, pokerctl, pokerctl_result, room

__all__ = ["room"]  # the fixture, shared


def kept(tmp_path: Path) -> list[str]:
    """Where a test's verifies keep their checkpoints (not the checkout's var/)."""
    return ["--checkpoint-dir", str(tmp_path / "pokerctl")]


async def test_replay_verify_and_export_read_the_log_from_nats(
    room: Room, nats_server: NatsServer, tmp_path: Path
) -> None:
    settings = room.dealer.settings
    log = ["--nats-url", nats_server.url, "--table-stream", settings.table_stream]
    log += ["--table-subject-prefix", settings.table_subject_prefix]
    table_id = await new_table(room)
    await pokerctl(room, "bots", table_id, "--count", "2", "--hands", "2", "--think-ms", "0")

    # Without the dealers' deck key: the money and the chain, but no deck or card.
    blind = json.loads(await pokerctl(room, "replay", table_id, *log, "--json"))
    assert blind["chain_breaks"] == [] and blind["hands"] == 0
    assert blind["encrypted_hands"] >= 2 and blind["seats"] == []
    blind_check = json.loads(
        await pokerctl(room, "verify", table_id, *log, *kept(tmp_path), "--json")
    )
    assert blind_check["ok"] and blind_check["tables"][0]["encrypted_hands"] >= 2
    log += ["--deck-key", str(harness_deck_key_file(tmp_path))]

    replayed = json.loads(await pokerctl(room, "replay", table_id, *log, "--json"))
    assert replayed["chain_breaks"] == [] and replayed["hands_started"] >= 2
    assert replayed["seats"] == []  # the bots left
    first = parse_phh_all(replayed["phhs"])
    assert len(first) == replayed["hands"] >= 2 and replayed["encrypted_hands"] == 0
    early = json.loads(
        await pokerctl(room, "replay", table_id, *log, "--to-version", "3", "--json")
    )
    assert early["version"] == 3 and early["hands_started"] == 0
    bot = early["seats"][0]["player_id"]  # seated by then

    verified = json.loads(await pokerctl(room, "verify", table_id, *log, *kept(tmp_path), "--json"))
    assert verified["ok"], verified

    target = tmp_path / "bot.phhs"
    exported = json.loads(
        await pokerctl(room, "export", "--player", bot, *log, "-o", str(target), "--json")
    )
    histories = parse_phh_all(target.read_text())
    assert len(histories) == exported["hands"] >= 2
    assert all(replay_phh(h).finishing_stacks == h.finishing_stacks for h in histories)

    # Someone with NATS access appends a batch past the dealer: verify names it.
    client = await nats.connect(nats_server.url)
    try:
        store = JetStreamEventStore(client.jetstream(), settings.table_log.stream_settings)
        position = await store.last_position(table_id)
        batch = pb.TableEventBatch(
            command_id="past-the-dealer",
            events=[pb.TableEvent(version=replayed["version"] + 1, table_closed=pb.TableClosed())],
        )
        await store.append(
            table_id, batch.SerializeToString(), expected_position=position, msg_id="past"
        )
    finally:
        await client.close()
    code, out, _ = await pokerctl_result(
        *room.flags(), "verify", table_id, *log, *kept(tmp_path), "--no-live"
    )
    assert code == 1
    assert f"table {table_id}: the batch of version {replayed['version'] + 1}" in out
    assert "has no link to the batch before it" in out


async def test_a_refused_nats_login_is_one_line_without_the_password(
    room: Room, nats_server: NatsServer
) -> None:
    """A wrong password in --nats-url: one line naming the server, the password masked, no
    traceback (nats-py's own error printer is off)."""
    wrong = nats_server.url.replace("//admin:", "//admin:x", 1)
    assert wrong != nats_server.url  # the fixture's URL carries the admin's password
    password = wrong.split("//admin:", 1)[1].split("@", 1)[0]
    code, out, err = await pokerctl_result(*room.flags(), "replay", "t-any", "--nats-url", wrong)
    assert code != 0 and not out
    assert err.strip().count("\n") == 0, err
    assert "Authorization Violation" in err and "admin:***@" in err
    assert password not in err and "Traceback" not in err


async def test_verify_with_the_public_keys_names_a_record_no_trusted_writer_signed(
    room: Room, nats_server: NatsServer, tmp_path: Path
) -> None:
    """With the room's public keyring (no private key, nothing that signs), ``verify`` checks
    every seal as the services do: a batch linked into the chain (so the chain alone cannot
    tell) but signed with the wallet's key under the dealer's key id is named."""
    settings = room.dealer.settings
    log = ["--nats-url", nats_server.url, "--table-stream", settings.table_stream]
    log += ["--table-subject-prefix", settings.table_subject_prefix]
    public = write_keyring(TEST_KEYRINGS.public, tmp_path / "log-keys-public.json", mode=0o644)
    keys = ["--log-keys", str(public)]
    table_id = await new_table(room)
    await pokerctl(room, "bots", table_id, "--count", "2", "--hands", "1", "--think-ms", "0")
    verified = json.loads(
        await pokerctl(room, "verify", table_id, *log, *kept(tmp_path), *keys, "--json")
    )
    assert verified["ok"], verified

    client = await nats.connect(nats_server.url)
    try:
        store = JetStreamEventStore(client.jetstream(), settings.table_log.stream_settings)
        last = [record async for record in store.read(table_id)][-1]
        version = pb.TableEventBatch.FromString(last.data).events[-1].version
        data = pb.TableEventBatch(
            command_id="forged",
            events=[pb.TableEvent(version=version + 1, table_closed=pb.TableClosed())],
            previous_batch_hash=record_hash(last.data),
        ).SerializeToString()
        wallet = TEST_KEYRINGS.wallet.signer(Writer.WALLET)
        dealer_id = TEST_KEYRINGS.dealer.signer(Writer.DEALER).id
        seal = seal_batch(wallet, table_id, last.position, "forged", data)
        forged = await store.append(
            table_id,
            data,
            expected_position=last.position,
            msg_id="forged",
            headers={SEAL_HEADER: seal.replace(wallet.id, dealer_id, 1)},
        )
    finally:
        await client.close()
    code, out, _ = await pokerctl_result(
        *room.flags(), "verify", table_id, *log, *kept(tmp_path), *keys, "--no-live"
    )
    assert code == 1
    assert f"the record at position {forged} was not written by a trusted writer (bad_mac)" in out
    assert "has no link" not in out  # the chain holds: only the seal tells


def _verdict(report: dict[str, object]) -> dict[str, object]:
    """A verify's JSON report less how much it read (all that resuming changes)."""
    tables = report["tables"]
    assert isinstance(tables, list)
    return {
        "ok": report["ok"],
        "tables": [{k: v for k, v in t.items() if k != "records_read"} for t in tables],
    }


async def test_verify_resumes_from_its_checkpoint_with_the_verdict_of_a_verify_from_scratch(
    room: Room, nats_server: NatsServer, tmp_path: Path
) -> None:
    """A second verify reads only the records appended since the first (its checkpoint in the
    home) and says what a verify from scratch says; a checkpoint file changed by a byte is
    refused (the table read whole again); a record removed before the checkpoint is found by
    the resumed verify as by one from scratch."""
    settings = room.dealer.settings
    log = ["--nats-url", nats_server.url, "--table-stream", settings.table_stream]
    log += ["--table-subject-prefix", settings.table_subject_prefix]
    log += ["--deck-key", str(harness_deck_key_file(tmp_path)), *kept(tmp_path), "--json"]
    tables = [await new_table(room), await new_table(room)]
    for table_id in tables:
        await pokerctl(room, "bots", table_id, "--count", "2", "--hands", "2", "--think-ms", "0")
    first = json.loads(await pokerctl(room, "verify", *tables, *log))
    assert first["ok"], first
    read_first = {t["table_id"]: t["records_read"] for t in first["tables"]}
    await pokerctl(room, "bots", tables[0], "--count", "2", "--hands", "2", "--think-ms", "0")

    resumed = json.loads(await pokerctl(room, "verify", *tables, *log))
    scratch = json.loads(await pokerctl(room, "verify", *tables, *log, "--from-scratch"))
    assert _verdict(resumed) == _verdict(scratch) and resumed["ok"], (resumed, scratch)
    read_resumed = {t["table_id"]: t["records_read"] for t in resumed["tables"]}
    read_scratch = {t["table_id"]: t["records_read"] for t in scratch["tables"]}
    assert read_resumed[tables[1]] == 0  # nothing new there
    assert 0 < read_resumed[tables[0]] == read_scratch[tables[0]] - read_first[tables[0]]
    assert scratch["tables"][0]["hands"] >= 4

    # A checkpoint changed by one byte is not this operator's: refused, the table read whole.
    files = sorted((tmp_path / "pokerctl" / "checkpoints").rglob("*.ckpt"))
    assert len(files) == 2
    for path in files:
        data = bytearray(path.read_bytes())
        data[-1] ^= 1
        path.write_bytes(bytes(data))
    refused = json.loads(await pokerctl(room, "verify", *tables, *log))
    assert _verdict(refused) == _verdict(scratch)
    assert [t["records_read"] for t in refused["tables"]] == list(read_scratch.values())

    # Someone with NATS access removes an early record of a table: both verifies find it.
    client = await nats.connect(nats_server.url)
    try:
        js = client.jetstream()
        store = JetStreamEventStore(js, settings.table_log.stream_settings)
        second_record = [record async for record in store.read(tables[0])][1]
        await js.delete_msg(settings.table_stream, second_record.position)
    finally:
        await client.close()
    problems = {}
    for extra in ((), ("--from-scratch",)):
        code, out, err = await pokerctl_result(*room.flags(), "verify", *tables, *log, *extra)
        assert out, err
        report = json.loads(out)
        assert code == 1 and not report["ok"], report
        by_table = {t["table_id"]: t for t in report["tables"]}
        assert by_table[tables[1]]["ok"] and not by_table[tables[0]]["ok"]
        problems[extra] = " ".join(by_table[tables[0]]["problems"])
    assert "records were removed" in problems[()], problems
    assert "were removed before position" in problems[("--from-scratch",)], problems
