"""The table log's secrets (poker/tablelog/secrets.py) through the dealer's own path (in-memory
stores): the stored batches and snapshots hold no deck, seed or down card; a dealer's rebuild
gets them back; a reader without the deck key folds the table without them; secrets edited,
moved to another table or command, or encrypted to an unknown key are refused like a bad seal;
logs written before the encryption still load; and the framing is pinned by a known answer."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from poker.dealer.app import require_deck_keys
from poker.dealer.config import load_settings
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.chain import genesis, record_hash
from poker.tablelog.codec import UntrustedRecord
from poker.tablelog.repository import TableRepository
from poker.tablelog.secrets import (
    SNAPSHOT_MAGIC,
    DeckKeyError,
    DeckKeys,
    SecretsRefusal,
    SecretsRefused,
    load_deck_keys,
    parse_deck_keys,
    strip_batch,
    take_secrets,
    write_deck_keys,
)
from poker.tablelog.secrets import main as secrets_main
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.v1 import events_pb2 as pb
from tests.unit.test_dealer_service import Parts, deal, seated

# --- the framing ---------------------------------------------------------------------------------

KAT_KEY = bytes(range(32))
KAT_NONCE = bytes(range(100, 112))


def kat_batch() -> pb.TableEventBatch:
    return pb.TableEventBatch(
        command_id="c7",
        events=[
            pb.TableEvent(table_id="t1", version=5, player_seated=pb.PlayerSeated(seat=1)),
            pb.TableEvent(
                table_id="t1",
                version=6,
                hand_started=pb.HandStarted(
                    deck="AsKd", server_seed=b"\x01" * 4, next_server_seed=b"\x02" * 4
                ),
            ),
            pb.TableEvent(
                table_id="t1",
                version=7,
                hole_cards_dealt=pb.HoleCardsDealt(
                    hands=[
                        pb.SeatCards(seat=1, down="AsKd"),
                        pb.SeatCards(seat=2, down="", up="Qh"),
                    ]
                ),
            ),
        ],
    )


def test_a_known_answer_pins_the_framing() -> None:
    keys = DeckKeys({"k1": KAT_KEY}, "k1")
    batch = kat_batch()
    keys.seal_batch("t1", batch, nonce=KAT_NONCE)
    sealed = batch.sealed_secrets
    # version 1, the key id, the nonce, then AES-256-GCM of the BatchSecrets
    assert sealed[:4] == b"\x01\x02k1" and sealed[4:16] == KAT_NONCE
    assert sealed.hex() == KAT_SEALED
    # the stored events keep what is public (the upcard), lose the secrets
    assert batch.events[1].hand_started == pb.HandStarted()
    assert [(h.down, h.up) for h in batch.events[2].hole_cards_dealt.hands] == [
        ("", ""),
        ("", "Qh"),
    ]
    assert keys.open_batch("t1", batch) == kat_batch()


KAT_SEALED = (
    "01026b31"  # version 1, the key id "k1"
    "6465666768696a6b6c6d6e6f"  # the nonce
    "420fd6676bed17ed75064decdb646bfc50c60408896ef978afd3be4cbad0ee2c86e929cb74c93030ed80"
    "fe9347eb98050a31"  # AES-256-GCM ciphertext and tag
)


def test_the_known_answer_is_plain_aes_gcm_over_the_documented_parts() -> None:
    """The framing as docs/security/table-log.md writes it, built here from its parts with
    nothing of the module but the messages: an operator's tool in another language can."""
    plain = pb.BatchSecrets(
        events=[
            pb.EventSecrets(index=1, values=[b"AsKd", b"\x01" * 4, b"\x02" * 4]),
            pb.EventSecrets(index=2, values=[b"AsKd", b""]),
        ]
    ).SerializeToString()
    header = b"\x01\x02k1"
    aad = (
        b"poker.v1.batch-secrets\x00"
        + header
        + (2).to_bytes(4, "big")
        + b"t1"
        + (2).to_bytes(4, "big")
        + b"c7"
        + (5).to_bytes(8, "big")
    )
    expected = header + KAT_NONCE + AESGCM(KAT_KEY).encrypt(KAT_NONCE, plain, aad)
    assert expected.hex() == KAT_SEALED


def sealed_kat() -> pb.TableEventBatch:
    batch = kat_batch()
    DeckKeys({"k1": KAT_KEY}, "k1").seal_batch("t1", batch)
    return batch


@pytest.mark.parametrize(
    "move",
    [
        pytest.param(lambda b: ("t2", b), id="another table"),
        pytest.param(lambda b: ("t1", _with(b, command_id="c8")), id="another command"),
        pytest.param(lambda b: ("t1", _versions(b, 1)), id="another place in the log"),
        pytest.param(lambda b: ("t1", _flip(b, -1)), id="a flipped bit"),
        pytest.param(lambda b: ("t1", _flip(b, 3)), id="another key id"),
        pytest.param(lambda b: ("t1", _with(b, sealed_secrets=b"\x02")), id="unknown framing"),
        pytest.param(lambda b: ("t1", _with(b, sealed_secrets=b"\x01\x02k1")), id="truncated"),
    ],
)
def test_secrets_moved_or_edited_do_not_open(move: object) -> None:
    table_id, batch = move(sealed_kat())  # type: ignore[operator]
    with pytest.raises(SecretsRefused) as refused:
        DeckKeys({"k1": KAT_KEY}, "k1").open_batch(table_id, batch)
    assert refused.value.reason in (SecretsRefusal.BAD_SECRETS, SecretsRefusal.UNKNOWN_DECK_KEY)


def test_secrets_for_another_event_do_not_fit() -> None:
    batch = sealed_kat()
    batch.events[2].ClearField("hole_cards_dealt")
    batch.events[2].board_dealt.cards = "2c"  # the secrets' third entry now names a board
    keys = DeckKeys({"k1": KAT_KEY}, "k1")
    with pytest.raises(SecretsRefused):  # the associated data does not cover the bodies...
        keys.open_batch("t1", batch)  # ...but the fit of every value is checked


def test_a_key_the_reader_lacks_is_named() -> None:
    with pytest.raises(SecretsRefused) as refused:
        DeckKeys.generate("other").open_batch("t1", sealed_kat())
    assert refused.value.reason is SecretsRefusal.UNKNOWN_DECK_KEY


def test_a_rotated_ring_still_opens_the_old_key() -> None:
    ring = DeckKeys({"k2": bytes(32), "k1": KAT_KEY}, "k2")
    assert ring.open_batch("t1", sealed_kat()) == kat_batch()
    again = kat_batch()
    ring.seal_batch("t1", again)
    assert again.sealed_secrets[:4] == b"\x01\x02k2"


def test_a_snapshot_opens_only_untouched() -> None:
    keys = DeckKeys({"k1": KAT_KEY}, "k1")
    sealed = keys.seal_snapshot(b"state")
    assert sealed.startswith(SNAPSHOT_MAGIC) and b"state" not in sealed
    assert keys.open_snapshot(sealed) == b"state"
    with pytest.raises(SecretsRefused):
        keys.open_snapshot(sealed[:-1] + bytes([sealed[-1] ^ 1]))


def test_the_key_file_round_trips_and_refuses_nonsense(tmp_path: Path) -> None:
    path = write_deck_keys(DeckKeys({"k1": KAT_KEY}, "k1"), tmp_path / "deck-key.json")
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_deck_keys(path).open_batch("t1", sealed_kat()) == kat_batch()
    short = {
        "encrypt_with": "k1",
        "keys": [{"id": "k1", "secret": base64.b64encode(b"x").decode()}],
    }
    with pytest.raises(DeckKeyError, match="32 bytes"):
        parse_deck_keys(json.dumps(short))
    with pytest.raises(DeckKeyError, match="not in the ring"):
        parse_deck_keys(json.dumps({**short, "encrypt_with": "k9"}))
    with pytest.raises(DeckKeyError, match="cannot be read"):
        load_deck_keys(tmp_path / "missing.json")


def test_a_new_ring_is_written_once(tmp_path: Path) -> None:
    path = tmp_path / "deck-key.json"
    assert secrets_main(["new", str(path)]) == 0
    assert load_deck_keys(path).current.startswith("deck-")
    before = path.read_bytes()
    assert secrets_main(["new", str(path)]) == 1 and path.read_bytes() == before  # kept
    assert secrets_main(["old"]) == 2


def test_the_dealer_refuses_to_start_without_its_deck_key(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--deck-key PATH"):
        require_deck_keys(load_settings(["--token-secret", "ab" * 32], environ={}).deck_keys)
    path = write_deck_keys(TEST_DECK_KEYS, tmp_path / "deck.json")
    settings = load_settings(
        [], environ={"DEALER_DECK_KEY": str(path), "DEALER_TOKEN_SECRET": "ab" * 32}
    )
    assert require_deck_keys(settings.deck_keys).current == TEST_DECK_KEYS.current
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SystemExit, match="--deck-key"):
        load_settings(
            ["--deck-key", str(tmp_path / "bad.json"), "--token-secret", "ab" * 32], environ={}
        )


def _with(batch: pb.TableEventBatch, **changes: object) -> pb.TableEventBatch:
    copy = pb.TableEventBatch()
    copy.CopyFrom(batch)
    for name, value in changes.items():
        setattr(copy, name, value)
    return copy


def _versions(batch: pb.TableEventBatch, shift: int) -> pb.TableEventBatch:
    copy = _with(batch)
    for event in copy.events:
        event.version += shift
    return copy


def _flip(batch: pb.TableEventBatch, index: int) -> pb.TableEventBatch:
    sealed = bytearray(batch.sealed_secrets)
    sealed[index] ^= 1
    return _with(batch, sealed_secrets=bytes(sealed))


# --- through the dealer's path -------------------------------------------------------------------


async def played() -> Parts:
    """Hand t1.1 dealt (a snapshot every 5 events: one holds the running hand)."""
    parts = Parts()
    service = await seated(parts)
    await deal(service, parts)
    await parts.repository.flush_snapshots()
    return parts


def secret_values(parts_events: list[pb.TableEvent]) -> list[bytes]:
    taken = take_secrets(pb.TableEventBatch(events=parts_events))
    return [value for entry in taken.events for value in entry.values if len(value) >= 4]


async def test_the_stored_log_and_snapshot_hold_no_secret_and_a_dealer_reads_them_back() -> None:
    parts = await played()
    records = [record async for record in parts.store.read("t1")]
    stored = [pb.TableEventBatch.FromString(record.data) for record in records]
    assert any(batch.sealed_secrets for batch in stored)
    assert all(not take_secrets(batch).events for batch in stored)  # nothing in clear
    opened = [parts.repository.open_batch(record) for record in records]
    dealt = [e for batch in opened for e in batch.events if e.HasField("hole_cards_dealt")]
    assert dealt and all(hand.down for hand in dealt[0].hole_cards_dealt.hands)
    everything = b"".join(record.data for record in records)
    snapshot = await parts.repository.snapshot("t1")
    assert snapshot is not None and snapshot.data.startswith(SNAPSHOT_MAGIC)
    deck = next(e for b in opened for e in b.events if e.HasField("hand_started")).hand_started.deck
    for secret in [deck.encode(), *secret_values([e for b in opened for e in b.events])]:
        assert secret not in everything and secret not in snapshot.data
    # a dealer's rebuild, from the snapshot and from the log alone, is the live table
    live = await parts.service().table("t1")
    assert (await parts.repository.load("t1")).state.table == live
    bare = TableRepository(
        parts.store,
        InMemorySnapshotStore(),
        parts.metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    assert (await bare.load("t1")).state.table == live


async def test_a_reader_without_the_key_folds_the_money_and_ignores_the_snapshot() -> None:
    parts = await played()
    live = (await parts.repository.load("t1")).state.table
    assert live is not None and live.hand is not None
    wallet = TableRepository(
        parts.store,
        parts.snapshots,  # the dealer's: encrypted, so ignored (the log is replayed)
        parts.metrics.table_log,
        seals=harness_seals(),
        deck_keys=None,
        save_snapshots=False,
    )
    loaded = await wallet.load("t1")
    table = loaded.state.table
    assert loaded.snapshot_mark == 0  # replayed from the first record
    assert table is not None and table.hand is not None
    assert table.hand.stacks == live.hand.stacks and table.hand.bets == live.hand.bets
    assert [s and s.stack for s in table.seats] == [s and s.stack for s in live.seats]
    assert table.hand.setup.deck == "" and table.hand.setup.server_seed == b""
    assert table.next_seed == b"" and all(not cards for cards in table.hand.hole)


async def test_tampered_secrets_are_refused_like_a_bad_seal() -> None:
    parts = await played()
    records = [record async for record in parts.store.read("t1")]
    store = InMemoryEventStore()
    position, link = 0, genesis("t1")
    for record in records:
        batch = pb.TableEventBatch.FromString(record.data)
        if batch.sealed_secrets:
            batch.sealed_secrets = batch.sealed_secrets[:-1] + bytes([batch.sealed_secrets[-1] ^ 1])
        # Sealed and chained again: a dealer key holder's tampering (the seals and the chain
        # pass; the secrets are opened once they did, and do not).
        batch.previous_batch_hash = link
        data = batch.SerializeToString()
        link = record_hash(data)
        headers = harness_seals().headers("t1", position, batch.command_id, data)
        position = await store.append(
            "t1", data, expected_position=position, msg_id=batch.command_id, headers=headers
        )
    repository = TableRepository(
        store,
        InMemorySnapshotStore(),
        parts.metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    with pytest.raises(UntrustedRecord) as refused:
        await repository.load("t1")
    assert refused.value.reason is SecretsRefusal.BAD_SECRETS
    assert refused.value.REASON == "UNTRUSTED_RECORD"
    counted = parts.registry.get_sample_value(
        "poker_dealer_log_records_refused_total", {"reason": "bad_secrets"}
    )
    assert counted == 1.0


async def test_a_log_written_before_the_encryption_loads_with_and_without_the_key() -> None:
    parts = await played()
    live = (await parts.repository.load("t1")).state.table
    store = InMemoryEventStore()
    position, link = 0, genesis("t1")
    async for record in parts.store.read("t1"):
        batch = TEST_DECK_KEYS.open_batch("t1", pb.TableEventBatch.FromString(record.data))
        batch.previous_batch_hash = link
        data = batch.SerializeToString()  # the secrets in clear, as logs were written before
        link = record_hash(data)
        headers = harness_seals().headers("t1", position, batch.command_id, data)
        position = await store.append(
            "t1", data, expected_position=position, msg_id=batch.command_id, headers=headers
        )

    def repository(keys: DeckKeys | None) -> TableRepository:
        return TableRepository(
            store,
            InMemorySnapshotStore(),
            parts.metrics.table_log,
            seals=harness_seals(),
            deck_keys=keys,
        )

    assert (await repository(TEST_DECK_KEYS).load("t1")).state.table == live
    stripped = (await repository(None).load("t1")).state.table
    assert stripped is not None and stripped.hand is not None
    assert live is not None and live.hand is not None
    assert stripped.hand.setup.deck == "" and stripped.hand.stacks == live.hand.stacks
    assert strip_batch(pb.TableEventBatch()) == pb.TableEventBatch()
