"""The TLS settings of both services and their clients: flags, environment, usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from poker.dealer.config import load_settings as dealer_settings
from poker.servicekit.tls import ClientTls, ServerTls
from poker.testing.certs import make_pki
from poker.wallet.config import load_settings as wallet_settings

SECRET = ["--token-secret", "ab" * 32]


def test_the_servers_read_their_tls_files_from_flags_and_environment(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    cert, key, ca = str(pki.server.cert), str(pki.server.key), str(pki.ca.cert)
    dealer = dealer_settings(
        [*SECRET, "--tls-cert", cert, "--tls-key", key],
        environ={"DEALER_TLS_CLIENT_CA": ca, "DEALER_WALLET_TLS_CA": ca},
    )
    assert (dealer.tls_cert, dealer.tls_key, dealer.tls_client_ca) == (cert, key, ca)
    assert dealer.wallet_tls_ca == ca
    wallet = wallet_settings(SECRET, environ={"WALLET_TLS_CERT": cert, "WALLET_TLS_KEY": key})
    assert (wallet.tls_cert, wallet.tls_key, wallet.tls_client_ca) == (cert, key, "")
    tls = ServerTls.from_paths(wallet.tls_cert, wallet.tls_key, "")
    assert tls == ServerTls(cert, key) and not tls.mutual


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


def test_an_unreadable_certificate_stops_the_start_with_its_name() -> None:
    missing = ["--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"]
    with pytest.raises(SystemExit, match=r"TLS certificate \(--tls-cert\) '/nonexistent/c.pem'"):
        dealer_settings([*SECRET, *missing], environ={})
    with pytest.raises(SystemExit, match=r"cannot read the CA certificate '/nonexistent/ca\.pem'"):
        dealer_settings([*SECRET, "--wallet-tls-ca", "/nonexistent/ca.pem"], environ={})
