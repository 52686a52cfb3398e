"""The wallet journal's seals (poker/wallet/journal.py, issue #24): every record sealed with the
ledger key; a record that fails is skipped (never folded), noted in the state and reported; the
wallet appends after it, and every reader (a rebuild from scratch, or from a snapshot taken before
or after the foreign record) agrees; the migration mark admits exactly the unsealed records
below it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from poker.eventstore.api import Record
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    KeyringError,
    LogKey,
    Refusal,
    SealRefused,
    Writer,
    WriterKey,
    keyring_document,
    load_keyring,
    new_keyring,
    open_batch,
    parse_keyring,
    seal_batch,
    split_keyring_files,
    write_keyring,
)
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.settings import require_log_keys
from poker.tablelog.seals import TableSeals
from poker.testing.dealer import TEST_DEALER_LOG_KEYS, TEST_WALLET_LOG_KEYS, harness_keyring
from poker.v1 import ledger_pb2 as lpb
from poker.wallet import ledger
from poker.wallet.book import LedgerBook
from poker.wallet.journal import (
    LEDGER_KEY,
    REFUSED_KEPT,
    Journal,
    LedgerCodec,
    encode_record,
    record_id,
    with_refused,
)
from poker.wallet.ledger import Deposit
from poker.wallet.metrics import WalletMetrics
from poker.wallet.queries import REFUSED_JOURNAL_RECORD, journal_breaches

LEDGER = TEST_WALLET_LOG_KEYS.signer(Writer.LEDGER)


def sealed(previous: int, data: bytes, key: LogKey = LEDGER) -> dict[str, str]:
    return {SEAL_HEADER: seal_batch(key, LEDGER_KEY, previous, record_id(data), data)}


def deposit_record(state: ledger.LedgerState, player: str, amount: int, key: str) -> bytes:
    """What the wallet would append for a deposit decided on ``state`` (limits aside)."""
    events = list(ledger.decide(state, Deposit(player, amount, key, now=0), ledger.DEFAULT_LIMITS))
    return encode_record(events)


class Setup:
    """A journal in memory, its snapshots, and books over them."""

    def __init__(self, *, every: int = 1000, unsealed_before: int = 0) -> None:
        self.store = InMemoryEventStore()
        self.snapshots = InMemorySnapshotStore()
        self.every = every
        self.unsealed_before = unsealed_before
        self.refused: list[tuple[int, Refusal]] = []

    def book(self, snapshots: InMemorySnapshotStore | None = None) -> LedgerBook:
        journal = Journal(
            self.store,
            self.snapshots if snapshots is None else snapshots,
            keyring=TEST_WALLET_LOG_KEYS,
            snapshot_every=self.every,
            unsealed_before=self.unsealed_before,
            on_record_refused=lambda position, reason: self.refused.append((position, reason)),
        )
        return LedgerBook(journal, WalletMetrics(CollectorRegistry()), max_attempts=3)

    async def foreign(self, data: bytes, headers: dict[str, str] | None = None) -> int:
        """Append ``data`` behind the wallet's back, right after the journal's last record."""
        last = await self.store.last_position(LEDGER_KEY)
        return await self.store.append(
            LEDGER_KEY, data, expected_position=last, msg_id=record_id(data), headers=headers
        )


async def test_a_foreign_record_is_skipped_and_the_wallet_appends_after_it() -> None:
    setup = Setup(every=2)
    book = setup.book()
    await book.open()
    await book.execute([Deposit("ann", 10, "d1", now=0)])
    await book.execute([Deposit("ann", 10, "d2", now=0)])  # a snapshot at position 2
    await book.flush_snapshots()
    early = InMemorySnapshotStore()  # a copy of the bucket as it was then (sealed bytes)
    copied = await setup.snapshots.load(LEDGER_KEY)
    assert copied is not None and copied.position == 2
    await early.save(LEDGER_KEY, copied.position, copied.data)

    fortune = deposit_record(book.state, "mallory", 10**9, "evil")
    assert await setup.foreign(fortune) == 3  # no seal
    await book.execute([Deposit("bob", 5, "d3", now=0)])  # a conflict: caught up, skipped
    assert book.position == 4  # a snapshot at 4, after the foreign record
    await book.flush_snapshots()
    await book.execute([Deposit("bob", 5, "d4", now=0)])
    state = book.state
    assert ledger.player_balance(state, "mallory").cash == 0
    assert ledger.player_balance(state, "bob").cash == 10
    assert (state.refused_records, state.refused_recent) == (1, ((3, "missing"),))
    assert setup.refused == [(3, Refusal.MISSING)]
    late = await setup.snapshots.load(LEDGER_KEY)
    assert late is not None and late.position == 4

    # Every reader agrees: from the snapshot after it, from scratch, from the snapshot before.
    for snapshots in (setup.snapshots, InMemorySnapshotStore(), early):
        again = setup.book(snapshots)
        await again.open()
        assert again.state == state and again.position == 5
    # The snapshot after it carried the refusal: only the two rebuilds that read record 3 saw it.
    assert setup.refused == [(3, Refusal.MISSING)] * 3


def record(position: int, data: bytes, headers: dict[str, str] | None = None) -> Record:
    return Record(LEDGER_KEY, position, record_id(data), data, headers or {})


def refusal(codec: LedgerCodec, rec: Record, previous: int) -> Refusal | None:
    try:
        codec.verify(rec, previous)
    except SealRefused as refused:
        return refused.reason
    return None


DATA = deposit_record(ledger.LedgerState(), "ann", 10, "d1")


def test_the_wallets_own_record_passes_where_it_was_sealed() -> None:
    codec = LedgerCodec(TEST_WALLET_LOG_KEYS)
    assert refusal(codec, record(8, DATA, sealed(7, DATA)), 7) is None


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, Refusal.MISSING),
        ({SEAL_HEADER: "not a seal"}, Refusal.MALFORMED),
        ({SEAL_HEADER: f"stranger:7:{'A' * 43}"}, Refusal.UNKNOWN_KEY),
        ({SEAL_HEADER: f"{LEDGER.id}:7:{'A' * 43}"}, Refusal.BAD_MAC),
        (sealed(6, DATA), Refusal.MISPLACED),  # a valid record replayed one position later
        (sealed(7, DATA, TEST_DEALER_LOG_KEYS.signer(Writer.DEALER)), Refusal.WRONG_WRITER),
        (sealed(7, DATA, TEST_WALLET_LOG_KEYS.signer(Writer.WALLET)), Refusal.WRONG_WRITER),
        # The ledger key of another keyring under the same id: the MAC fails.
        (sealed(7, DATA, new_keyring("test").signer(Writer.LEDGER)), Refusal.BAD_MAC),
    ],
    ids=["missing", "malformed", "unknown", "made-up-mac", "replayed", "dealer", "wallet", "other"],
)
def test_a_record_the_wallet_did_not_seal_there_is_refused(
    headers: dict[str, str], reason: Refusal
) -> None:
    codec = LedgerCodec(TEST_WALLET_LOG_KEYS)
    assert refusal(codec, record(8, DATA, headers), 7) is reason


@given(
    sealed_after=st.integers(min_value=0, max_value=2**40),
    previous=st.integers(min_value=0, max_value=2**40),
    writer=st.sampled_from([Writer.LEDGER, Writer.DEALER, Writer.WALLET]),
    data=st.binary(max_size=200),
)
def test_only_a_ledger_seal_for_the_previous_position_passes(
    sealed_after: int, previous: int, writer: Writer, data: bytes
) -> None:
    codec = LedgerCodec(TEST_WALLET_LOG_KEYS)
    headers = sealed(sealed_after, data, harness_keyring(writer).signer(writer))
    found = refusal(codec, record(previous + 1, data, headers), previous)
    if writer is not Writer.LEDGER:
        assert found is Refusal.WRONG_WRITER
    elif sealed_after != previous:
        assert found is Refusal.MISPLACED
    else:
        assert found is None


def _framed(*parts: bytes) -> bytes:
    return b"".join(struct.pack(">Q", len(part)) + part for part in parts)


def test_the_journal_seal_is_the_batch_seal_under_the_ledger_key() -> None:
    key = WriterKey("ledger-2026-12", Writer.LEDGER, bytes(range(32)))
    data = bytes.fromhex("0a0a08011001")
    seal = seal_batch(key, LEDGER_KEY, 41, record_id(data), data)
    # Recomputed here from the documented framing (docs/security/journal.md), not by the code.
    message = _framed(
        b"poker/log-record/v1",
        b"ledger-2026-12",
        b"ledger",
        struct.pack(">Q", 41),
        record_id(data).encode(),
        data,
    )
    mac = base64.urlsafe_b64encode(hmac.digest(bytes(range(32)), message, hashlib.sha256))
    assert seal == f"ledger-2026-12:41:{mac.rstrip(b'=').decode()}"
    assert seal == "ledger-2026-12:41:TJOOafRJFIbw2gFmPgQh3tTb0_l5FctDNqV0CLZVgRk"


async def test_the_migration_mark_admits_exactly_the_unsealed_records_below_it() -> None:
    setup = Setup(unsealed_before=3)
    state = ledger.LedgerState()
    for position, player in ((1, "ann"), (2, "bob"), (3, "cat")):
        data = deposit_record(state, player, 10, f"old-{position}")
        assert await setup.foreign(data) == position  # written before seals: none
        if position < 3:
            for event in lpb.LedgerEventBatch.FromString(data).events:
                state = ledger.evolve(state, event)
    book = setup.book()
    await book.open()
    cash = {p: ledger.player_balance(book.state, p).cash for p in ("ann", "bob", "cat")}
    assert cash == {"ann": 10, "bob": 10, "cat": 0}
    assert book.state.refused_recent == ((3, "missing"),)
    # Below the mark a record that does carry a seal is still checked.
    codec = LedgerCodec(TEST_WALLET_LOG_KEYS, unsealed_before=3)
    bad = {SEAL_HEADER: f"{LEDGER.id}:0:{'A' * 43}"}
    assert refusal(codec, record(1, DATA, bad), 0) is Refusal.BAD_MAC
    assert refusal(codec, record(2, DATA), 1) is None
    assert refusal(codec, record(3, DATA), 2) is Refusal.MISSING
    # The table log's own mark says nothing about the journal.
    other = Keyring(TEST_WALLET_LOG_KEYS.keys, TEST_WALLET_LOG_KEYS.sign_with, unsealed_before=100)
    assert refusal(LedgerCodec(other), record(2, DATA), 1) is Refusal.MISSING


def test_a_record_folded_without_its_check_is_a_bug_not_money() -> None:
    codec = LedgerCodec(TEST_WALLET_LOG_KEYS)
    with pytest.raises(RuntimeError, match="before it was checked"):
        codec.fold(ledger.LedgerState(), [record(1, DATA, sealed(0, DATA))], private=False)
    codec.check(record(1, DATA), 0)  # refused: no seal
    state = codec.fold(ledger.LedgerState(), [record(1, DATA)], private=False)
    assert state.sequence == 0 and state.refused_records == 1


def test_the_state_names_the_latest_refusals_and_counts_them_all() -> None:
    state = ledger.LedgerState()
    for position in range(1, REFUSED_KEPT + 11):
        state = with_refused(state, position, Refusal.MISSING)
    assert state.refused_records == REFUSED_KEPT + 10
    assert state.refused_recent[0] == (11, "missing")
    breaches = journal_breaches(state)
    assert len(breaches) == REFUSED_KEPT + 1
    assert {b.kind for b in breaches} == {REFUSED_JOURNAL_RECORD}
    assert breaches[0].message.startswith("10 more refused journal records before position 11")
    assert breaches[-1].subject == f"journal:{REFUSED_KEPT + 10}"
    assert journal_breaches(ledger.LedgerState()) == []


def test_only_the_wallets_keyring_holds_the_ledger_key() -> None:
    assert TEST_WALLET_LOG_KEYS.has_signer(Writer.LEDGER)
    assert not TEST_DEALER_LOG_KEYS.has_signer(Writer.LEDGER)
    assert {k.writer for k in TEST_DEALER_LOG_KEYS.keys.values()} == {Writer.DEALER, Writer.WALLET}
    again = parse_keyring(json.dumps(keyring_document(TEST_WALLET_LOG_KEYS)))
    assert again == TEST_WALLET_LOG_KEYS
    with pytest.raises(KeyringError, match="no ledger key"):
        LedgerCodec(TEST_DEALER_LOG_KEYS)
    with pytest.raises(SystemExit, match="has no ledger key in 'sign_with'"):
        require_log_keys(TEST_DEALER_LOG_KEYS, "wallet", "WALLET_", signs_as=(Writer.LEDGER,))
    assert require_log_keys(TEST_DEALER_LOG_KEYS, "dealer", "DEALER_") is TEST_DEALER_LOG_KEYS


def test_a_ledger_key_never_seals_a_table_batch() -> None:
    seals = TableSeals(TEST_WALLET_LOG_KEYS, Writer.DEALER)
    headers = {SEAL_HEADER: seal_batch(LEDGER, "t1", 4, "cmd", b"batch")}
    with pytest.raises(SealRefused) as refused:
        seals.check("t1", 5, previous_position=4, msg_id="cmd", data=b"batch", headers=headers)
    assert refused.value.reason is Refusal.WRONG_WRITER
    with pytest.raises(SealRefused):
        open_batch(
            TEST_WALLET_LOG_KEYS,
            headers[SEAL_HEADER],
            log_key="t1",
            position=5,
            previous_position=4,
            msg_id="cmd",
            data=b"batch",
        )


def test_the_split_key_files_keep_the_ledger_key_out_of_the_dealers(tmp_path: Path) -> None:
    dealer, wallet = split_keyring_files(tmp_path / "log.json", tmp_path / "wallet.json", "t")
    wallet_keys, dealer_keys = load_keyring(wallet), load_keyring(dealer)
    assert wallet_keys.has_signer(Writer.LEDGER) and not dealer_keys.has_signer(Writer.LEDGER)
    assert dealer_keys == wallet_keys.without(Writer.LEDGER)
    assert split_keyring_files(dealer, wallet, "t") == (dealer, wallet)  # kept as they are
    assert load_keyring(wallet) == wallet_keys and load_keyring(dealer) == dealer_keys
    # An older start's single keyring: kept for the dealer, plus a ledger key for the wallet.
    old = tmp_path / "old"
    old.mkdir()
    write_keyring(TEST_DEALER_LOG_KEYS, old / "log.json")
    split_keyring_files(old / "log.json", old / "wallet.json", "t")
    assert load_keyring(old / "log.json") == TEST_DEALER_LOG_KEYS
    upgraded = load_keyring(old / "wallet.json")
    assert upgraded.without(Writer.LEDGER) == TEST_DEALER_LOG_KEYS
    assert upgraded.signer(Writer.LEDGER).id == "ledger-t-1"
