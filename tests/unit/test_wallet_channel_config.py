"""The dealer's wallet channel: one target naming every wallet, and the service config that
health-checks them and retries UNAVAILABLE."""

from __future__ import annotations

import json

import pytest

from poker.dealer.wallet_client import WALLET_SERVICE, channel_target
from poker.servicekit.channels import DEFAULT_RETRY_POLICY, service_config


def test_one_address_is_the_target_itself() -> None:
    assert channel_target(["wallet.internal:7000"]) == ("wallet.internal:7000", [])


def test_several_ip_addresses_become_one_target_listing_them() -> None:
    target, options = channel_target(["127.0.0.1:7001", "127.0.0.1:7002"])
    assert target == "ipv4:127.0.0.1:7001,127.0.0.1:7002"
    assert options == [("grpc.default_authority", "127.0.0.1:7001")]
    target, _ = channel_target(["[::1]:7001", "[::1]:7002"])
    assert target == "ipv6:[::1]:7001,[::1]:7002"


def test_names_are_resolved_and_keep_their_tls_name() -> None:
    target, options = channel_target(["localhost:7001", "localhost:7002"])
    assert target == "ipv4:127.0.0.1:7001,127.0.0.1:7002"
    assert ("grpc.ssl_target_name_override", "localhost") in options
    assert ("grpc.default_authority", "localhost:7001") in options


@pytest.mark.parametrize(
    "addresses",
    [
        ["127.0.0.1", "127.0.0.1:2"],
        ["127.0.0.1:1", "[::1]:2"],
        ["no-such-host.invalid:1", "127.0.0.1:2"],
        ["127.0.0.1:1", ":2"],
    ],
)
def test_malformed_or_mixed_addresses_are_refused(addresses: list[str]) -> None:
    with pytest.raises(ValueError):
        channel_target(addresses)


def test_the_service_config_health_checks_and_retries_unavailable_only() -> None:
    config = json.loads(service_config(WALLET_SERVICE))
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    assert config["healthCheckConfig"] == {"serviceName": WALLET_SERVICE}
    (method,) = config["methodConfig"]
    assert method["name"] == [{"service": WALLET_SERVICE}]
    assert method["retryPolicy"] == DEFAULT_RETRY_POLICY
    assert DEFAULT_RETRY_POLICY["retryableStatusCodes"] == ["UNAVAILABLE"]
