"""``python -m poker.tools.logkeys`` (the operators' key files) and the services' start-up check
of a keyring: each service signs as itself only."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from poker.eventstore.sealing import (
    SEAL_HEADER,
    SERVICE_KEYRING_FILES,
    KeyringError,
    Refusal,
    SealRefused,
    Writer,
    WriterKey,
    load_keyring,
    new_keyring,
    new_service_keyrings,
    room_keyring_files,
    seal_batch,
    write_keyring,
    write_service_keyrings,
)
from poker.servicekit.settings import require_log_keys
from poker.tablelog.seals import TableSeals
from poker.tools import logkeys


def test_new_room_writes_three_files_and_never_overwrites(tmp_path: Path) -> None:
    logkeys.main(["new-room", str(tmp_path), "--suffix", "2027-01"])
    dealer = load_keyring(tmp_path / "log-keys-dealer.json")
    wallet = load_keyring(tmp_path / "log-keys-wallet.json")
    public = load_keyring(tmp_path / "log-keys-public.json")
    assert dealer.signer(Writer.DEALER).id == "dealer-2027-01"
    assert wallet.signer(Writer.WALLET).id == "wallet-2027-01"
    assert dealer.public() == wallet.public() == public
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {
        "log-keys-dealer.json": 0o600,
        "log-keys-wallet.json": 0o600,
        "log-keys-public.json": 0o644,
    }
    with pytest.raises(SystemExit, match="exists"):
        logkeys.main(["new-room", str(tmp_path)])


def test_keypair_prints_an_entry_and_public_derives_the_public_keyring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logkeys.main(["keypair", "dealer", "dealer-2027-06"])
    entry = json.loads(capsys.readouterr().out)
    assert set(entry) == {"id", "writer", "public", "private"}
    assert (entry["id"], entry["writer"]) == ("dealer-2027-06", "dealer")
    rooms = new_service_keyrings("x")
    path = write_keyring(rooms.wallet, tmp_path / "wallet.json")
    logkeys.main(["public", str(path), "-o", str(tmp_path / "public.json")])
    assert load_keyring(tmp_path / "public.json") == rooms.public
    with pytest.raises(SystemExit, match="no Ed25519 key"):
        logkeys.main(["public", str(write_keyring(new_keyring("h"), tmp_path / "h.json"))])


def test_split_keeps_the_old_hmac_keys_below_hmac_below_only(tmp_path: Path) -> None:
    old = new_keyring("old")
    old_path = write_keyring(old, tmp_path / "log-keys.json")
    logkeys.main(["split", str(old_path), str(tmp_path / "room"), "--hmac-below", "100"])
    wallet = load_keyring(tmp_path / "room" / "log-keys-wallet.json")
    public = load_keyring(tmp_path / "room" / "log-keys-public.json")
    assert wallet.hmac_below == public.hmac_below == 100
    assert not any(isinstance(key, WriterKey) for key in public.keys.values())
    seals = TableSeals(wallet, Writer.WALLET)
    old_dealer = old.signer(Writer.DEALER)
    for position, accepted in ((99, True), (100, False)):
        seal = seal_batch(old_dealer, "t1", position - 1, "m", b"x")
        check: dict[str, Any] = {"previous_position": position - 1, "msg_id": "m", "data": b"x"}
        if accepted:
            assert seals.check("t1", position, headers={SEAL_HEADER: seal}, **check)
        else:
            with pytest.raises(SealRefused) as refused:
                seals.check("t1", position, headers={SEAL_HEADER: seal}, **check)
            assert refused.value.reason is Refusal.RETIRED_HMAC
    # The old ledger key (the journal's records are sealed with it) moves to the wallet's only.
    dealer = load_keyring(tmp_path / "room" / "log-keys-dealer.json")
    assert wallet.signer(Writer.LEDGER) == old.signer(Writer.LEDGER)
    assert Writer.LEDGER not in {key.writer for key in dealer.keys.values()}


def test_a_new_room_gives_the_ledger_key_to_the_wallet_alone(tmp_path: Path) -> None:
    logkeys.main(["new-room", str(tmp_path), "--suffix", "r"])
    wallet = load_keyring(tmp_path / "log-keys-wallet.json")
    assert wallet.signer(Writer.LEDGER).id == "ledger-r"
    for name in ("log-keys-dealer.json", "log-keys-public.json"):
        keys = load_keyring(tmp_path / name).keys.values()
        assert Writer.LEDGER not in {key.writer for key in keys}


def test_a_service_refuses_a_keyring_that_cannot_sign_as_itself() -> None:
    rooms = new_service_keyrings("y")
    assert require_log_keys(rooms.dealer, "dealer", "DEALER_") is rooms.dealer
    assert require_log_keys(rooms.wallet, "wallet", "WALLET_") is rooms.wallet
    for keyring, service in ((rooms.wallet, "dealer"), (rooms.dealer, "wallet")):
        with pytest.raises(SystemExit, match=f"cannot sign as the {service}"):
            require_log_keys(keyring, service, "X_")
    with pytest.raises(SystemExit, match="cannot sign"):
        require_log_keys(rooms.public, "dealer", "DEALER_")
    with pytest.raises(KeyringError):
        rooms.public.signer(Writer.DEALER)


def test_a_home_gets_one_scheme_of_keyring_files(tmp_path: Path) -> None:
    """make run's and the dev cluster's homes (room_keyring_files): a new one gets the three
    files, the ledger key in the wallet's alone; one of before the journal was sealed gets a
    ledger key in the wallet's file; one of a shared HMAC keyring keeps it, split."""
    fresh = room_keyring_files(tmp_path / "new", "local")
    assert sorted(path.name for path in fresh.values()) == sorted(SERVICE_KEYRING_FILES.values())
    wallet = load_keyring(fresh["wallet"])
    assert wallet.has_signer(Writer.LEDGER) and wallet.has_signer(Writer.WALLET)
    assert not load_keyring(fresh["dealer"]).has_signer(Writer.LEDGER)
    assert room_keyring_files(tmp_path / "new", "local") == fresh
    assert load_keyring(fresh["wallet"]) == wallet  # kept, not made again

    rooms = new_service_keyrings("k")
    before = tmp_path / "keys-era"
    write_service_keyrings(before, rooms._replace(wallet=rooms.wallet.without(Writer.LEDGER)))
    paths = room_keyring_files(before, "local")
    upgraded = load_keyring(paths["wallet"])
    assert upgraded.has_signer(Writer.LEDGER)
    assert upgraded.without(Writer.LEDGER) == rooms.wallet.without(Writer.LEDGER)

    shared = tmp_path / "shared"
    write_keyring(new_keyring("s"), shared / "log-keys.json")
    paths = room_keyring_files(shared, "local")
    assert (paths["dealer"].name, paths["wallet"].name) == ("log-keys.json", "wallet-keys.json")
    assert not load_keyring(paths["dealer"]).has_signer(Writer.LEDGER)
    assert load_keyring(paths["wallet"]).has_signer(Writer.LEDGER)
