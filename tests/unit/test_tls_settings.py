"""The TLS settings of both services and their clients: flags, environment, usage errors."""

from __future__ import annotations

import pytest

from dealer_service.config import load_settings as dealer_settings
from servicekit.tls import ClientTls, ServerTls
from wallet_service.config import load_settings as wallet_settings

SECRET = ["--token-secret", "ab" * 32]


def test_the_servers_read_their_tls_files_from_flags_and_environment() -> None:
    dealer = dealer_settings(
        [*SECRET, "--tls-cert", "d.pem", "--tls-key", "d-key.pem"],
        environ={"DEALER_TLS_CLIENT_CA": "ca.pem", "DEALER_WALLET_TLS_CA": "wca.pem"},
    )
    assert (dealer.tls_cert, dealer.tls_key, dealer.tls_client_ca) == (
        "d.pem",
        "d-key.pem",
        "ca.pem",
    )
    assert dealer.wallet_tls_ca == "wca.pem"
    wallet = wallet_settings(
        SECRET, environ={"WALLET_TLS_CERT": "w.pem", "WALLET_TLS_KEY": "w-key.pem"}
    )
    assert (wallet.tls_cert, wallet.tls_key, wallet.tls_client_ca) == ("w.pem", "w-key.pem", "")
    assert ServerTls.from_paths(wallet.tls_cert, wallet.tls_key, "") == ServerTls(
        "w.pem", "w-key.pem"
    )


def test_plaintext_is_the_default() -> None:
    dealer = dealer_settings(SECRET, environ={})
    assert ServerTls.from_paths(dealer.tls_cert, dealer.tls_key, dealer.tls_client_ca) is None
    assert ClientTls.from_paths(dealer.wallet_tls_ca, "", "") is None
    assert (dealer.max_streams_per_caller, dealer.watch_backlog) == (8, 256)


@pytest.mark.parametrize(
    ("argv", "sentence"),
    [
        (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
        (["--wallet-tls-key", "k.pem"], "--wallet-tls-cert and --wallet-tls-key go together"),
        (["--max-streams-per-caller", "0"], "must be positive"),
    ],
)
def test_half_a_tls_setting_is_a_usage_error(argv: list[str], sentence: str) -> None:
    with pytest.raises(SystemExit, match=sentence):
        dealer_settings([*SECRET, *argv], environ={})


def test_an_unreadable_certificate_names_its_setting() -> None:
    with pytest.raises(ValueError, match=r"TLS certificate \(--tls-cert\) '/nonexistent/c.pem'"):
        ServerTls("/nonexistent/c.pem", "/nonexistent/k.pem").credentials()
