"""poker.servicekit.settings: the flags, environment defaults and token secret both services share,
and that each service still reads them as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from poker.dealer.config import load_settings as dealer_settings
from poker.servicekit.settings import default_owner_id, env_name, load_token_secret
from poker.servicekit.tokens import TokenKeyring
from poker.wallet.config import load_settings as wallet_settings

SECRET = "ab" * 32


def test_env_name() -> None:
    assert env_name("DEALER_", "metrics-port") == "DEALER_METRICS_PORT"


def test_default_owner_id_is_unique_and_prefixed() -> None:
    first, second = default_owner_id("wallet-"), default_owner_id("wallet-")
    assert first.startswith("wallet-") and first != second


def test_token_secret_from_text_or_file(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET + "\n", encoding="ascii")
    assert load_token_secret("", str(path)) == bytes.fromhex(SECRET)
    assert load_token_secret(SECRET, "/nonexistent") == bytes.fromhex(SECRET)
    with pytest.raises(SystemExit, match="must be hex"):
        load_token_secret("zz", "")
    with pytest.raises(SystemExit, match="at least 32 bytes"):
        load_token_secret("ab" * 31, "")


@pytest.mark.parametrize(
    ("load", "prefix"), [(dealer_settings, "DEALER_"), (wallet_settings, "WALLET_")]
)
def test_both_services_read_the_common_flags(load: object, prefix: str) -> None:
    env = {
        f"{prefix}NATS_URL": "nats://n:1",
        f"{prefix}GRPC_HOST": "0.0.0.0",
        f"{prefix}GRACE": "2.5",
        f"{prefix}LOG_LEVEL": "debug",
        f"{prefix}TOKEN_SECRET": SECRET,
    }
    settings = load(["--grpc-port", "5", "--metrics-port", "6", "--owner-id", "me"], environ=env)  # type: ignore[operator]
    assert (settings.nats_url, settings.grpc_host, settings.grpc_port) == (
        "nats://n:1",
        "0.0.0.0",
        5,
    )
    assert (settings.metrics_port, settings.grace_s, settings.log_level) == (6, 2.5, "debug")
    assert (settings.owner_id, settings.token_secret) == ("me", bytes.fromhex(SECRET))


def test_defaults_stay_the_services_own() -> None:
    dealer = dealer_settings(["--token-secret", SECRET], environ={})
    wallet = wallet_settings(["--token-secret", SECRET], environ={})
    assert (dealer.grpc_port, dealer.metrics_port, dealer.lease_ttl_s) == (50051, 9464, 10.0)
    assert (wallet.grpc_port, wallet.metrics_port, wallet.snapshot_every) == (50061, 9465, 1000)
    assert wallet.owner_id.startswith("wallet-") and not dealer.owner_id.startswith("wallet-")
    assert dealer.nats_url == wallet.nats_url == "nats://127.0.0.1:4222"


@pytest.mark.parametrize(
    ("load", "prefix"), [(dealer_settings, "DEALER_"), (wallet_settings, "WALLET_")]
)
def test_both_services_take_a_token_keyring_file(load: object, prefix: str, tmp_path: Path) -> None:
    ring = TokenKeyring("new", {"old": b"o" * 32, "new": b"n" * 32})
    path = tmp_path / "token-keys.json"
    path.write_text(ring.to_json())
    from_flag = load(["--token-keys", str(path)], environ={})  # type: ignore[operator]
    from_env = load([], environ={f"{prefix}TOKEN_KEYS": str(path)})  # type: ignore[operator]
    assert from_flag.token_keyring == from_env.token_keyring == ring
    one = load(["--token-secret", SECRET], environ={})  # type: ignore[operator]
    assert one.token_keyring == TokenKeyring.single(bytes.fromhex(SECRET))
    with pytest.raises(SystemExit, match="not both"):
        load(["--token-keys", str(path), "--token-secret", SECRET], environ={})  # type: ignore[operator]
    path.write_text('{"current": "x", "keys": {}}')
    with pytest.raises(SystemExit, match="is not valid"):
        load(["--token-keys", str(path)], environ={})  # type: ignore[operator]
    with pytest.raises(SystemExit, match="cannot read"):
        load(["--token-keys", str(tmp_path / "missing.json")], environ={})  # type: ignore[operator]


def test_the_wallet_validates_its_money_limits_at_start_up() -> None:
    settings = wallet_settings(
        ["--token-secret", SECRET, "--max-transaction", "5", "--max-account-balance", "50"],
        environ={"WALLET_MAX_LEDGER_TOTAL": "500"},
    )
    assert (settings.limits.max_transaction, settings.limits.max_ledger_total) == (5, 500)
    assert wallet_settings(["--token-secret", SECRET], environ={}).limits.max_transaction == 10**10
    with pytest.raises(SystemExit, match="--max-transaction must be positive"):
        wallet_settings(["--token-secret", SECRET, "--max-transaction", "0"], environ={})
    with pytest.raises(SystemExit, match="must satisfy"):
        wallet_settings(["--token-secret", SECRET, "--max-ledger-total", str(2**62 + 1)], {})


@pytest.mark.parametrize(
    ("load", "prefix"), [(dealer_settings, "DEALER_"), (wallet_settings, "WALLET_")]
)
def test_both_services_poll_jetstream_every_15_s_unless_told(load: object, prefix: str) -> None:
    secret = ["--token-secret", SECRET]
    assert load(secret, environ={}).jetstream_poll_s == 15.0  # type: ignore[operator]
    told = {f"{prefix}JETSTREAM_POLL_INTERVAL": "0"}
    assert load(secret, environ=told).jetstream_poll_s == 0.0  # type: ignore[operator]
    flagged = [*secret, "--jetstream-poll-interval", "2.5"]
    assert load(flagged, environ={}).jetstream_poll_s == 2.5  # type: ignore[operator]
