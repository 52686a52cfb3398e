"""TLS for the gRPC servers and their clients: certificate files in, gRPC credentials out.

A server given a certificate and its key serves TLS only; given a client CA as well, it asks
every client for a certificate and refuses the connection unless that certificate is signed by
the CA (mutual TLS, for service-to-service calls). A server given neither stays plaintext (the
loopback ``make run``); it warns when it binds a non-loopback address that way.

Files are PEM and are read once, when the server starts or the channel is opened: replacing a
certificate takes a restart (no reload).

>>> ServerTls.from_paths("", "", "") is None
True
>>> ServerTls.from_paths("", "key.pem", "")
Traceback (most recent call last):
...
ValueError: --tls-cert and --tls-key go together: give both or neither.
>>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
(True, True, False)
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc


def _read(path: str, what: str) -> bytes:
    """The bytes of ``path``; a sentence naming the setting when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read the {what} {path!r}: {error.strerror}") from None


@dataclass(frozen=True, slots=True)
class ServerTls:
    """A server's certificate chain and key (PEM files) and, for mutual TLS, the client CA."""

    cert_path: str
    key_path: str
    client_ca_path: str = ""

    @classmethod
    def from_paths(cls, cert: str, key: str, client_ca: str) -> ServerTls | None:
        """The settings of ``--tls-cert/--tls-key/--tls-client-ca``; None when all are empty
        (plaintext). A client CA without a certificate, or half a pair, is a ValueError."""
        if not cert and not key:
            if client_ca:
                raise ValueError("--tls-client-ca needs --tls-cert and --tls-key.")
            return None
        if not cert or not key:
            raise ValueError("--tls-cert and --tls-key go together: give both or neither.")
        return cls(cert, key, client_ca)

    @property
    def mutual(self) -> bool:
        """Whether clients must present a certificate signed by the client CA."""
        return bool(self.client_ca_path)

    def credentials(self) -> grpc.ServerCredentials:
        """The gRPC server credentials (files read now)."""
        chain = _read(self.cert_path, "TLS certificate (--tls-cert)")
        key = _read(self.key_path, "TLS key (--tls-key)")
        client_ca = (
            _read(self.client_ca_path, "client CA (--tls-client-ca)") if self.mutual else None
        )
        return grpc.ssl_server_credentials(
            [(key, chain)],
            root_certificates=client_ca,
            require_client_auth=self.mutual,
        )


@dataclass(frozen=True, slots=True)
class ClientTls:
    """What a client trusts (a CA file; empty: the system's roots) and, for mutual TLS, the
    certificate and key it presents."""

    ca_path: str = ""
    cert_path: str = ""
    key_path: str = ""

    @classmethod
    def from_paths(cls, ca: str, cert: str, key: str, *, flag: str = "--tls") -> ClientTls | None:
        """The settings of ``<flag>-ca/-cert/-key``; None when all are empty (plaintext)."""
        if not (ca or cert or key):
            return None
        if bool(cert) != bool(key):
            raise ValueError(f"{flag}-cert and {flag}-key go together: give both or neither.")
        return cls(ca, cert, key)

    def credentials(self) -> grpc.ChannelCredentials:
        """The gRPC channel credentials (files read now)."""
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca_path, "CA certificate") if self.ca_path else None,
            private_key=_read(self.key_path, "client key") if self.key_path else None,
            certificate_chain=_read(self.cert_path, "client certificate")
            if self.cert_path
            else None,
        )


def aio_channel(
    address: str, tls: ClientTls | None, options: Sequence[tuple[str, Any]] = ()
) -> grpc.aio.Channel:
    """A grpc.aio channel to ``address``: TLS with ``tls``, plaintext without."""
    if tls is None:
        return grpc.aio.insecure_channel(address, options=list(options) or None)
    return grpc.aio.secure_channel(address, tls.credentials(), options=list(options) or None)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a listen address) only reaches this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere
