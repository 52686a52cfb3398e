"""``--replicas``: both services read it (flag or environment), default 1, refuse what JetStream
cannot keep, and hand it to every stream and bucket they create; ``--nats-url`` takes a cluster's
nodes separated by commas."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from poker.dealer.config import load_settings as dealer_settings
from poker.servicekit.nats_connect import service_nats_settings
from poker.tablelog.settings import TableLogSettings
from poker.wallet.config import load_settings as wallet_settings

SECRET = "ab" * 32


@pytest.mark.parametrize(
    ("load", "prefix"), [(dealer_settings, "DEALER_"), (wallet_settings, "WALLET_")]
)
def test_replicas_come_from_the_flag_or_the_environment(load: object, prefix: str) -> None:
    assert load(["--token-secret", SECRET], environ={}).replicas == 1  # type: ignore[operator]
    env = {f"{prefix}REPLICAS": "3"}
    assert load(["--token-secret", SECRET], environ=env).replicas == 3  # type: ignore[operator]
    flagged = load(["--token-secret", SECRET, "--replicas", "5"], environ=env)  # type: ignore[operator]
    assert flagged.replicas == 5


@pytest.mark.parametrize("load", [dealer_settings, wallet_settings])
@pytest.mark.parametrize("replicas", ["0", "6", "-1"])
def test_replicas_jetstream_cannot_keep_are_refused(load: object, replicas: str) -> None:
    with pytest.raises(SystemExit, match="--replicas must be 1 to 5"):
        load(["--token-secret", SECRET, "--replicas", replicas], environ={})  # type: ignore[operator]


def test_the_dealers_replicas_reach_the_table_stream() -> None:
    settings = dealer_settings(["--token-secret", SECRET, "--replicas", "3"], environ={})
    assert settings.table_log.replicas == 3
    assert settings.table_log.stream_settings.replicas == 3
    assert TableLogSettings().stream_settings.replicas == 1


def test_a_comma_separated_nats_url_is_every_node() -> None:
    fields = SimpleNamespace(
        nats_url="nats://127.0.0.1:4231, nats://127.0.0.1:4232,nats://127.0.0.1:4233",
        nats_credentials="",
        nats_tls_ca="",
        nats_tls_cert="",
        nats_tls_key="",
    )
    servers = service_nats_settings(fields, "x").servers
    assert servers == ("nats://127.0.0.1:4231", "nats://127.0.0.1:4232", "nats://127.0.0.1:4233")
