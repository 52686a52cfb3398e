"""Keys per writer for the table log (issue #24, point 6): Ed25519 seals and keyrings
(poker/eventstore/sealing.py), ``hmac_below``, and the table log's head-only verification
(poker/tablelog/seals.py: a run's head vouches for the records its chain covers; when it fails,
each record is verified and the first bad one named)."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from poker.eventstore.api import Record
from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    KeyringError,
    Refusal,
    SealedSnapshotStore,
    SealRefused,
    SigningKey,
    SnapshotRefused,
    Writer,
    WriterKey,
    keyring_document,
    load_keyring,
    new_keyring,
    new_service_keyrings,
    new_signing_key,
    open_batch,
    open_snapshot,
    parse_keyring,
    seal_batch,
    seal_snapshot,
    service_keyrings,
    write_service_keyrings,
)
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.chain import genesis, record_hash
from poker.tablelog.seals import RecordRefused, SealRun, TableSeals
from poker.v1 import events_pb2 as pb

ROOM = new_service_keyrings("unit")
DEALER_KEY = ROOM.dealer.signer(Writer.DEALER)
WALLET_KEY = ROOM.wallet.signer(Writer.WALLET)


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


def refusal(ring: Keyring, seal: str | None, **overrides: Any) -> Refusal:
    with pytest.raises(SealRefused) as refused:
        opened(ring, seal, **overrides)
    return refused.value.reason


# --- seals ---------------------------------------------------------------------------------


def test_a_signed_seal_verifies_with_the_public_key_alone() -> None:
    seal = seal_batch(DEALER_KEY, "t1", 4, "cmd", b"batch")
    key_id, previous, proof = seal.split(":")
    assert (key_id, previous, len(proof)) == (DEALER_KEY.id, "4", 86)
    for ring in (ROOM.dealer, ROOM.wallet, ROOM.public):
        assert opened(ring, seal) is Writer.DEALER


def test_a_signed_seal_binds_the_log_the_place_the_id_and_the_bytes() -> None:
    seal = seal_batch(DEALER_KEY, "t1", 4, "cmd", b"batch")
    assert refusal(ROOM.public, seal, previous_position=7) is Refusal.MISPLACED
    for change in ({"log_key": "t2"}, {"msg_id": "cmd2"}, {"data": b"batcH"}):
        assert refusal(ROOM.public, seal, **change) is Refusal.BAD_MAC
    head, proof = seal.rsplit(":", 1)
    flipped = ("A" if proof[0] != "A" else "B") + proof[1:]
    assert refusal(ROOM.public, f"{head}:{flipped}") is Refusal.BAD_MAC


def test_only_the_exact_signature_text_passes() -> None:
    """64 bytes in 86 characters: the last one's 4 spare bits, set, name the same signature in
    another text; only the writer's exact text is taken."""
    seal = seal_batch(DEALER_KEY, "t1", 4, "cmd", b"batch")
    head, proof = seal.rsplit(":", 1)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    spare = alphabet[alphabet.index(proof[-1]) ^ 1]
    assert refusal(ROOM.public, f"{head}:{proof[:-1]}{spare}") is Refusal.BAD_MAC
    assert refusal(ROOM.public, f"{head}:{proof}==") is Refusal.MALFORMED


def test_a_key_pair_of_the_same_id_or_the_wrong_kind_of_proof_fails() -> None:
    impostor = new_signing_key(DEALER_KEY.id, Writer.DEALER)
    assert refusal(ROOM.public, seal_batch(impostor, "t1", 4, "cmd", b"batch")) is Refusal.BAD_MAC
    # A MAC under the dealer's key id (say, keyed with its public key: all the wallet has).
    assert isinstance(DEALER_KEY, SigningKey)
    fake = WriterKey(DEALER_KEY.id, Writer.DEALER, DEALER_KEY.public)
    assert refusal(ROOM.public, seal_batch(fake, "t1", 4, "cmd", b"batch")) is Refusal.MALFORMED
    # The wallet's signature under the dealer's key id.
    forged = seal_batch(WALLET_KEY, "t1", 4, "cmd", b"batch").replace(WALLET_KEY.id, DEALER_KEY.id)
    assert refusal(ROOM.public, forged) is Refusal.BAD_MAC


def test_the_wallet_holds_no_key_that_signs_as_the_dealer() -> None:
    for ring in (ROOM.wallet, ROOM.public):
        with pytest.raises(KeyringError):
            ring.signer(Writer.DEALER)
        dealer = ring.keys[DEALER_KEY.id]
        assert isinstance(dealer, SigningKey) and not dealer.can_sign
        with pytest.raises(KeyringError, match="only the public half"):
            dealer.sign(b"anything")
    # Its one HMAC key is its journal's ledger key, which never seals a table batch.
    hmac_keys = [key for key in ROOM.wallet.keys.values() if isinstance(key, WriterKey)]
    assert [key.writer for key in hmac_keys] == [Writer.LEDGER]
    seal = seal_batch(hmac_keys[0], "t1", 4, "cmd", b"batch")
    assert refusal(ROOM.wallet, seal) is Refusal.WRONG_WRITER


# Known answers (the Ed25519 of RFC 8032 is deterministic): every log and snapshot signed from
# now on is signed this way, so a change of the framing, the domain or the encoding that signs
# and checks alike would pass every other test and refuse them all.
_VECTOR_SEED = bytes(range(32))
_VECTOR_PUBLIC = bytes.fromhex("03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
_VECTOR_KEY = SigningKey("dealer-2027-01", Writer.DEALER, _VECTOR_PUBLIC, _VECTOR_SEED)


def _framed(*parts: bytes) -> bytes:
    return b"".join(struct.pack(">Q", len(part)) + part for part in parts)


def test_a_signed_batch_seal_is_the_one_every_log_is_signed_with() -> None:
    seal = seal_batch(_VECTOR_KEY, "t-1", 41, "cmd-7", b"\x0a\x05cmd-7batch")
    assert seal == (
        "dealer-2027-01:41:ei0mgVe1moWFpEP0kqQ4UFdFBmE1_czCoKGhlHyCom7CbB04qFDoNvPdceCU8TBSZfrdS0"
        "bg0qd8fR7t0aWKBA"
    )
    # What is signed, spelt out: the MAC's framing under the signature's own domain tag.
    message = _framed(
        b"poker/log-record/ed25519/v1",
        b"dealer-2027-01",
        b"t-1",
        struct.pack(">Q", 41),
        b"cmd-7",
        b"\x0a\x05cmd-7batch",
    )
    signature = base64.urlsafe_b64decode(seal.rsplit(":", 1)[1] + "==")
    Ed25519PublicKey.from_public_bytes(_VECTOR_PUBLIC).verify(signature, message)


def test_a_signed_snapshot_seal_is_the_one_every_snapshot_is_signed_with() -> None:
    sealed = seal_snapshot(_VECTOR_KEY, "POKER_SNAPSHOTS", "t-1", 42, b"snapshot bytes")
    assert sealed[:16] == b"\x02\x0edealer-2027-01"
    signature, payload = sealed[16:80], sealed[80:]
    assert payload == b"snapshot bytes"
    assert signature.hex() == (
        "7fda6748834860534c1089b60335fe8955a6da808cdc61e87f64e64553c6a04d"
        "5e7f648791911a131dbbecc44d7811364dba5e66a6a17b96adbae9c22c77de0c"
    )
    message = _framed(
        b"poker/snapshot/ed25519/v1",
        b"dealer-2027-01",
        b"POKER_SNAPSHOTS",
        b"t-1",
        struct.pack(">Q", 42),
        b"snapshot bytes",
    )
    Ed25519PublicKey.from_public_bytes(_VECTOR_PUBLIC).verify(signature, message)


def test_a_signed_snapshot_binds_its_place_and_its_writer() -> None:
    sealed = seal_snapshot(DEALER_KEY, "B", "t1", 7, b"state")
    where: dict[str, Any] = {
        "bucket": "B",
        "log_key": "t1",
        "position": 7,
        "writers": [Writer.DEALER],
    }
    assert open_snapshot(ROOM.public, sealed, **where) == b"state"
    changes: list[tuple[dict[str, Any], Refusal]] = [
        ({"bucket": "C"}, Refusal.BAD_MAC),
        ({"log_key": "t2"}, Refusal.BAD_MAC),
        ({"position": 8}, Refusal.BAD_MAC),
        ({"writers": [Writer.WALLET]}, Refusal.WRONG_WRITER),
    ]
    for change, reason in changes:
        with pytest.raises(SealRefused) as refused:
            open_snapshot(ROOM.public, sealed, **{**where, **change})
        assert refused.value.reason is reason
    wallet_made = seal_snapshot(WALLET_KEY, "B", "t1", 7, b"state")
    with pytest.raises(SealRefused) as refused:
        open_snapshot(ROOM.public, wallet_made, **where)
    assert refused.value.reason is Refusal.WRONG_WRITER


async def test_a_table_snapshot_store_past_hmac_takes_signatures_only() -> None:
    old = new_keyring("old")
    ring = Keyring({**old.keys, **ROOM.dealer.keys}, ROOM.dealer.sign_with, hmac_below=10)
    inner = InMemorySnapshotStore()
    heard: list[Refusal] = []
    hmac_made = SealedSnapshotStore(inner, old, bucket="B", writer=Writer.DEALER)
    assert await hmac_made.save("t1", 5, b"state")
    store = SealedSnapshotStore(
        inner, ring, bucket="B", writer=Writer.DEALER, on_refused=heard.append, hmac_accepted=False
    )
    with pytest.raises(SnapshotRefused):
        await store.load("t1")
    assert heard == [Refusal.RETIRED_HMAC]
    assert await store.save("t1", 6, b"signed")
    loaded = await store.load("t1")
    assert loaded is not None and loaded.data == b"signed"


# --- keyring files -------------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"public": _b64(b"x" * 31)}, "32 bytes"),
        ({"public": "***"}, "not base64"),
        ({"public": _b64(_VECTOR_PUBLIC), "private": _b64(b"\x01" * 32)}, "not the public key's"),
        ({"public": _b64(_VECTOR_PUBLIC), "secret": _b64(b"k" * 32)}, "either secret"),
    ],
)
def test_a_bad_signing_key_entry_is_refused_with_a_sentence(
    entry: dict[str, str], problem: str
) -> None:
    document = {"keys": [{"id": "d1", "writer": "dealer", **entry}]}
    with pytest.raises(KeyringError, match=problem):
        parse_keyring(json.dumps(document), "keys.json")


def test_sign_with_must_name_a_key_whose_private_half_is_here() -> None:
    document = keyring_document(ROOM.public)
    document["sign_with"] = {"dealer": DEALER_KEY.id}
    with pytest.raises(KeyringError, match="private key is not here"):
        parse_keyring(json.dumps(document), "keys.json")


@pytest.mark.parametrize("value", [-1, 2**64, "7", True])
def test_hmac_below_must_be_a_stream_position(value: object) -> None:
    document = {**keyring_document(ROOM.public), "hmac_below": value}
    with pytest.raises(KeyringError, match="hmac_below"):
        parse_keyring(json.dumps(document), "keys.json")


def test_a_rooms_keyrings_are_written_private_and_read_back(tmp_path: Path) -> None:
    paths = write_service_keyrings(tmp_path, ROOM)
    modes = {part: path.stat().st_mode & 0o777 for part, path in paths.items()}
    assert modes == {"dealer": 0o600, "wallet": 0o600, "public": 0o644}
    assert [load_keyring(paths[part]) for part in ("dealer", "wallet", "public")] == list(ROOM)
    public = json.loads(paths["public"].read_text(encoding="utf-8"))
    assert "private" not in json.dumps(public) and public["sign_with"] == {}
    assert public["hmac_below"] == 0  # a new room takes signatures only


def test_service_keyrings_hold_each_writer_its_own_private_key_only() -> None:
    dealer = new_signing_key("d", Writer.DEALER)
    wallet = new_signing_key("w", Writer.WALLET)
    rings = service_keyrings(dealer, wallet)
    assert rings.dealer.keys == {"d": dealer, "w": wallet.public_only()}
    assert rings.wallet.keys == {"d": dealer.public_only(), "w": wallet}
    assert rings.public.keys == {"d": dealer.public_only(), "w": wallet.public_only()}
    assert "private" not in repr(rings)


# --- the table log: hmac_below, the writer rule, head-only verification --------------------


def _dealer_batch(table_id: str, version: int, previous: bytes) -> bytes:
    events = [pb.TableEvent(table_id=table_id, version=version, occurred_at=1_000 + version)]
    return pb.TableEventBatch(
        command_id=f"c{version}", events=events, previous_batch_hash=previous
    ).SerializeToString()


def _log(
    length: int, *, forged_from: int | None = None, key: SigningKey | None = None
) -> list[Record]:
    """A linked log of ``length`` dealer records at positions 2, 4, 6... (not dense, as in a
    shared stream); from index ``forged_from`` on, sealed with ``key`` (an impostor's)."""
    records: list[Record] = []
    link = genesis("t1")
    previous = 0
    for index in range(length):
        data = _dealer_batch("t1", index + 1, link)
        position = 2 * (index + 1)
        signer = DEALER_KEY if forged_from is None or index < forged_from else key
        assert signer is not None
        seal = seal_batch(signer, "t1", previous, f"c{index + 1}", data)
        records.append(Record("t1", position, f"c{index + 1}", data, {SEAL_HEADER: seal}))
        link, previous = record_hash(data), position
    return records


def _run(seals: TableSeals, records: list[Record]) -> SealRun:
    run = SealRun(seals, "t1")
    previous = 0
    for record in records:
        seals.screen_record(record, previous)
        run.add(seals.deferred(record), linked=True)
        previous = record.position
    return run


def test_hmac_seals_count_only_below_hmac_below() -> None:
    old = new_keyring("old")
    ring = Keyring({**old.keys, **ROOM.public.keys}, {}, hmac_below=10)
    seals = TableSeals(ring, Writer.DEALER)
    data = b"batch"
    for position, previous in ((9, 7), (10, 9)):
        seal = seal_batch(old.signer(Writer.DEALER), "t1", previous, "m", data)
        check: dict[str, Any] = {
            "previous_position": previous,
            "msg_id": "m",
            "data": data,
            "headers": {SEAL_HEADER: seal},
        }
        if position < 10:
            assert seals.check("t1", position, **check) is Writer.DEALER
        else:
            with pytest.raises(SealRefused) as refused:
                seals.check("t1", position, **check)
            assert refused.value.reason is Refusal.RETIRED_HMAC
    # No hmac_below: HMAC everywhere, as before.
    assert TableSeals(old, Writer.DEALER).check(
        "t1",
        10**9,
        previous_position=9,
        msg_id="m",
        data=data,
        headers={SEAL_HEADER: seal_batch(old.signer(Writer.DEALER), "t1", 9, "m", data)},
    )


def test_screening_defers_only_the_dealers_signatures() -> None:
    seals = TableSeals(ROOM.public, Writer.DEALER)
    record = _log(1)[0]
    writer, deferred = seals.screen_record(record, 0)
    assert writer is Writer.DEALER and deferred is not None and deferred.position == 2
    # A seal claiming another place is judged at once, its reason exact.
    with pytest.raises(SealRefused) as refused:
        seals.screen_record(record, 1)
    assert refused.value.reason is Refusal.MISPLACED


def test_the_heads_signature_vouches_for_the_run_in_one_verification(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seals = TableSeals(ROOM.public, Writer.DEALER)
    verified: list[int] = []
    real = TableSeals._verify

    def counting(deferred: Any) -> None:
        verified.append(deferred.position)
        real(deferred)

    monkeypatch.setattr(TableSeals, "_verify", staticmethod(counting))
    run = _run(seals, _log(50))
    assert verified == []  # screening verified nothing
    run.settle()
    assert verified == [100] and run.pending == []


@pytest.mark.parametrize("forged_from", [0, 1, 17, 48, 49])
def test_a_forged_tail_is_found_and_its_first_record_named(forged_from: int) -> None:
    impostor = new_signing_key(DEALER_KEY.id, Writer.DEALER)
    records = _log(50, forged_from=forged_from, key=impostor)
    run = _run(TableSeals(ROOM.public, Writer.DEALER), records)
    with pytest.raises(RecordRefused) as refused:
        run.settle()
    assert refused.value.position == records[forged_from].position
    assert refused.value.reason is Refusal.BAD_MAC


def test_an_unlinked_record_is_verified_on_its_own() -> None:
    impostor = new_signing_key(DEALER_KEY.id, Writer.DEALER)
    record = _log(1, forged_from=0, key=impostor)[0]
    seals = TableSeals(ROOM.public, Writer.DEALER)
    run = SealRun(seals, "t1")
    seals.screen_record(record, 0)
    with pytest.raises(RecordRefused):
        run.add(seals.deferred(record), linked=False)


def test_the_wallets_signature_is_verified_at_once_and_defers_nothing() -> None:
    close = pb.TableEventBatch(
        command_id="wallet-close-v3-idle1000",
        events=[pb.TableEvent(version=4, table_closed=pb.TableClosed())],
        previous_batch_hash=b"x" * 32,
    ).SerializeToString()
    seals = TableSeals(ROOM.dealer, Writer.DEALER)
    good = seal_batch(WALLET_KEY, "t1", 3, "m", close)
    assert seals.screen(
        "t1", 5, previous_position=3, msg_id="m", data=close, headers={SEAL_HEADER: good}
    ) == (Writer.WALLET, None)
    bad = seal_batch(new_signing_key(WALLET_KEY.id, Writer.WALLET), "t1", 3, "m", close)
    with pytest.raises(SealRefused) as refused:
        seals.screen(
            "t1", 5, previous_position=3, msg_id="m", data=close, headers={SEAL_HEADER: bad}
        )
    assert refused.value.reason is Refusal.BAD_MAC
    hand = _dealer_batch("t1", 4, b"x" * 32)
    with pytest.raises(SealRefused) as refused:
        seals.screen(
            "t1",
            5,
            previous_position=3,
            msg_id="m",
            data=hand,
            headers={SEAL_HEADER: seal_batch(WALLET_KEY, "t1", 3, "m", hand)},
        )
    assert refused.value.reason is Refusal.WRONG_WRITER
