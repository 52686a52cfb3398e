"""The writer keyring and the seals of log records and snapshots (poker/eventstore/sealing.py and
the table log's policy in poker/tablelog/seals.py)."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    KeyringError,
    Refusal,
    SealedSnapshotStore,
    SealRefused,
    SnapshotRefused,
    Writer,
    WriterKey,
    keyring_document,
    load_keyring,
    new_keyring,
    open_batch,
    open_snapshot,
    parse_keyring,
    seal_batch,
    seal_snapshot,
    write_keyring,
)
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.seals import TableSeals, is_wallet_close
from poker.v1 import events_pb2 as pb

SECRET = base64.b64encode(b"k" * 32).decode()


def doc(**overrides: Any) -> str:
    document: dict[str, Any] = {
        "sign_with": "d1",
        "keys": [{"id": "d1", "writer": "dealer", "secret": SECRET}],
    }
    document.update(overrides)
    return json.dumps(document)


def opened(ring: Keyring, seal: str | None, **overrides: Any) -> Writer:
    where: dict[str, Any] = {
        "log_key": "t1",
        "position": 9,
        "previous_position": 4,
        "msg_id": "cmd",
        "data": b"batch",
    }
    where.update(overrides)
    return open_batch(ring, seal, **where)


def test_a_keyring_file_loads_with_its_keys_and_signers(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(doc(), encoding="utf-8")
    ring = load_keyring(path)
    assert ring.signer(Writer.DEALER) == WriterKey("d1", Writer.DEALER, b"k" * 32)
    with pytest.raises(KeyringError, match="names no wallet key"):
        ring.signer(Writer.WALLET)
    assert "k" * 8 not in repr(ring)  # secrets stay out of logs


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "not JSON"),
        ("[]", "must be a JSON object"),
        (doc(keys=[]), "keys must be a non-empty list"),
        (doc(extra=1), "unknown fields"),
        (doc(sign_with="nope"), "sign_with names 'nope'"),
        (doc(sign_with={"wallet": "d1"}), "a dealer key"),
        (doc(keys=[{"id": "d1", "writer": "dealer"}]), "id, writer and either secret"),
        (doc(keys=[{"id": "d 1", "writer": "dealer", "secret": SECRET}]), "keys\\[0\\].id"),
        (doc(keys=[{"id": "d1", "writer": "boss", "secret": SECRET}]), "writer must be"),
        (doc(keys=[{"id": "d1", "writer": "dealer", "secret": "***"}]), "not base64"),
        (
            doc(keys=[{"id": "d1", "writer": "dealer", "secret": base64.b64encode(b"x").decode()}]),
            "at least 32",
        ),
        (
            doc(keys=[{"id": "d1", "writer": "dealer", "secret": SECRET}] * 2),
            "appears twice",
        ),
        (doc(unsealed_before=-1), "unsealed_before"),
    ],
)
def test_a_bad_keyring_is_refused_with_a_sentence(text: str, problem: str) -> None:
    with pytest.raises(KeyringError, match=problem):
        parse_keyring(text, "keys.json")


def test_a_missing_keyring_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(KeyringError, match=r"absent\.json: cannot be read"):
        load_keyring(tmp_path / "absent.json")


def test_a_written_keyring_is_private_and_reads_back(tmp_path: Path) -> None:
    ring = new_keyring()
    path = write_keyring(ring, tmp_path / "var" / "log-keys.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_keyring(path) == ring
    assert parse_keyring(json.dumps(keyring_document(ring))) == ring


def test_a_batch_seal_verifies_only_where_it_was_made() -> None:
    ring = new_keyring()
    seal = seal_batch(ring.signer(Writer.DEALER), "t1", 4, "cmd", b"batch")
    assert opened(ring, seal) is Writer.DEALER
    with pytest.raises(SealRefused) as copied:
        opened(ring, seal, previous_position=7)
    assert copied.value.reason is Refusal.MISPLACED
    for change in ({"log_key": "t2"}, {"msg_id": "cmd2"}, {"data": b"batcH"}):
        with pytest.raises(SealRefused) as refused:
            opened(ring, seal, **change)
        assert refused.value.reason is Refusal.BAD_MAC


def test_only_the_writers_exact_mac_text_passes() -> None:
    """The same MAC in another text (the last character's spare bits set, base64 padding, the
    standard alphabet) is refused: a seal is compared as the text the writer makes."""
    ring = new_keyring()
    seal = seal_batch(ring.signer(Writer.DEALER), "t1", 4, "cmd", b"batch")
    head, mac_text = seal.rsplit(":", 1)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    # 32 bytes in 43 characters: the last one carries 4 bits, its 2 lowest are spare.
    last = alphabet.index(mac_text[-1])
    spare = alphabet[last ^ 1]
    assert base64.urlsafe_b64decode(mac_text[:-1] + spare + "=") == base64.urlsafe_b64decode(
        mac_text + "="
    )
    for text, reason in (
        (mac_text[:-1] + spare, Refusal.BAD_MAC),
        (mac_text + "=", Refusal.MALFORMED),
        (mac_text[:-1] + "+", Refusal.MALFORMED),  # the standard alphabet's character
    ):
        with pytest.raises(SealRefused) as refused:
            opened(ring, f"{head}:{text}")
        assert refused.value.reason is reason
    assert opened(ring, seal) is Writer.DEALER


@pytest.mark.parametrize(
    ("seal", "reason"),
    [
        (None, Refusal.MISSING),
        ("", Refusal.MISSING),
        ("garbage", Refusal.MALFORMED),
        ("d:4:!!", Refusal.MALFORMED),
        ("d:-4:" + "A" * 43, Refusal.MALFORMED),
        ("d:4:" + "A" * 10, Refusal.MALFORMED),
        ("stranger:4:" + "A" * 43, Refusal.UNKNOWN_KEY),
    ],
)
def test_a_missing_malformed_or_unknown_seal_is_refused(seal: str | None, reason: Refusal) -> None:
    with pytest.raises(SealRefused) as refused:
        opened(new_keyring(), seal)
    assert refused.value.reason is reason


def test_a_seal_of_another_keyring_with_the_same_key_id_fails() -> None:
    ours, theirs = new_keyring("same"), new_keyring("same")
    seal = seal_batch(theirs.signer(Writer.DEALER), "t1", 4, "cmd", b"batch")
    with pytest.raises(SealRefused) as refused:
        opened(ours, seal)
    assert refused.value.reason is Refusal.BAD_MAC


def test_rotation_old_seals_verify_while_the_new_key_signs() -> None:
    old = WriterKey("dealer-2026-01", Writer.DEALER, b"o" * 32)
    new = WriterKey("dealer-2026-02", Writer.DEALER, b"n" * 32)
    before = Keyring({old.id: old}, {Writer.DEALER: old.id})
    after = Keyring({old.id: old, new.id: new}, {Writer.DEALER: new.id})
    sealed_before = seal_batch(before.signer(Writer.DEALER), "t1", 4, "cmd", b"batch")
    sealed_after = seal_batch(after.signer(Writer.DEALER), "t1", 4, "cmd", b"batch")
    assert sealed_after.startswith("dealer-2026-02:")
    assert opened(after, sealed_before) is opened(after, sealed_after) is Writer.DEALER
    retired = Keyring({new.id: new}, {Writer.DEALER: new.id})
    with pytest.raises(SealRefused, match="unknown key 'dealer-2026-01'"):
        opened(retired, sealed_before)


def test_unsealed_records_below_the_migration_mark_are_accepted_and_none_after() -> None:
    ring = Keyring(new_keyring().keys, {}, unsealed_before=10)
    assert opened(ring, None, position=9) is Writer.DEALER
    with pytest.raises(SealRefused, match="carries no seal"):
        opened(ring, None, position=10)


def test_a_snapshot_seal_binds_bucket_key_and_position_and_writer() -> None:
    ring = new_keyring()
    sealed = seal_snapshot(ring.signer(Writer.WALLET), "B", "ledger", 7, b"state")
    where: dict[str, Any] = {
        "bucket": "B",
        "log_key": "ledger",
        "position": 7,
        "writers": [Writer.WALLET],
    }
    assert open_snapshot(ring, sealed, **where) == b"state"
    changes: list[tuple[dict[str, Any], Refusal]] = [
        ({"bucket": "C"}, Refusal.BAD_MAC),
        ({"log_key": "other"}, Refusal.BAD_MAC),
        ({"position": 8}, Refusal.BAD_MAC),
        ({"writers": [Writer.DEALER]}, Refusal.WRONG_WRITER),
    ]
    for change, reason in changes:
        with pytest.raises(SealRefused) as refused:
            open_snapshot(ring, sealed, **{**where, **change})
        assert refused.value.reason is reason
    with pytest.raises(SealRefused) as unsealed:
        open_snapshot(ring, b"\x80\x05pickle", **where)
    assert unsealed.value.reason is Refusal.MISSING


async def test_the_sealed_snapshot_store_refuses_what_it_did_not_seal() -> None:
    ring = new_keyring()
    inner = InMemorySnapshotStore()
    heard: list[Refusal] = []
    store = SealedSnapshotStore(
        inner, ring, bucket="B", writer=Writer.DEALER, on_refused=heard.append
    )
    assert await store.save("t1", 5, b"state")
    snapshot = await store.load("t1")
    assert snapshot is not None and (snapshot.position, snapshot.data) == (5, b"state")
    await inner.save("t1", 6, b"tampered")
    with pytest.raises(SnapshotRefused):
        await store.load("t1")
    assert heard == [Refusal.MISSING]


def _batch(command_id: str, *bodies: dict[str, Any]) -> bytes:
    events = [pb.TableEvent(version=n, **body) for n, body in enumerate(bodies, start=1)]
    return pb.TableEventBatch(command_id=command_id, events=events).SerializeToString()


CLOSE = _batch(
    "wallet-close-v9",
    {"hand_voided": pb.HandVoided()},
    {"player_cashed_out": pb.PlayerCashedOut(seat=1, player_id="ann", amount=5)},
    {"table_closed": pb.TableClosed(reason="abandoned")},
)
HAND = _batch(
    "wallet-close-v9",
    {"hand_started": pb.HandStarted()},
    {"hand_ended": pb.HandEnded()},
    {"table_closed": pb.TableClosed()},
)


def test_only_the_abandoned_table_close_counts_as_the_wallets() -> None:
    assert is_wallet_close(CLOSE)
    assert not is_wallet_close(HAND)
    assert not is_wallet_close(_batch("cmd-1", {"table_closed": pb.TableClosed()}))
    assert not is_wallet_close(
        _batch("wallet-close-v1", {"player_cashed_out": pb.PlayerCashedOut()})
    )
    assert not is_wallet_close(b"\xff\xff not protobuf")


def test_a_wallet_key_may_seal_its_close_and_nothing_else() -> None:
    ring = new_keyring()
    wallet, dealer = TableSeals(ring, Writer.WALLET), TableSeals(ring, Writer.DEALER)

    def check(seals: TableSeals, data: bytes) -> Writer:
        headers = seals.headers("t1", 3, "m", data)
        assert set(headers) == {SEAL_HEADER}
        return dealer.check("t1", 8, previous_position=3, msg_id="m", data=data, headers=headers)

    assert check(wallet, CLOSE) is Writer.WALLET
    assert check(dealer, HAND) is Writer.DEALER
    with pytest.raises(SealRefused) as refused:
        check(wallet, HAND)
    assert refused.value.reason is Refusal.WRONG_WRITER


# Known answers, computed by the sealing code before HmacSha256 and the shared framing
# (c762255): every stored log and snapshot was sealed this way, so a change of the framing or
# of the MAC that seals and checks alike would pass every other test and refuse them all.
_VECTOR_KEY = WriterKey("dealer-2026-12", Writer.DEALER, bytes(range(32)))


def test_a_batch_seal_is_the_one_every_stored_log_was_sealed_with() -> None:
    seal = seal_batch(_VECTOR_KEY, "t-1", 41, "cmd-7", b"\x0a\x05cmd-7batch")
    assert seal == "dealer-2026-12:41:pbgObAZrFY7w_SLcT-df7j_LDthByIlsZGLv0ITPREY"


def test_a_snapshot_seal_is_the_one_every_stored_snapshot_was_sealed_with() -> None:
    sealed = seal_snapshot(_VECTOR_KEY, "POKER_SNAPSHOTS", "t-1", 42, b"snapshot bytes")
    assert sealed == (
        b'\x01\x0edealer-2026-12\x14\xf4\xa2\xb4\\w3\x97\x0e\xe4\xc4@\xd3\x9b(\xa2=\xffP\xef"'
        b"\x12\xb6\xfc\x8b\x106Fb>\xbdMsnapshot bytes"
    )
