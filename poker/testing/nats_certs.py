"""The certificates of a TLS nats-server and its clients, from :mod:`poker.testing.certs`: one
throw-away CA, a server certificate for the loopback addresses and a client certificate, as PEM
files in one folder (the layout :class:`poker.testing.nats_server.NatsServer` configures).

>>> import dataclasses, tempfile
>>> with tempfile.TemporaryDirectory() as work:
...     files = make_certificates(Path(work))
...     sorted(path.name for path in dataclasses.astuple(files))
['ca.pem', 'client-key.pem', 'client.pem', 'server-key.pem', 'server.pem']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from poker.testing.certs import TestCA


@dataclass(frozen=True, slots=True)
class CertificateFiles:
    """The PEM files of one test PKI."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def make_certificates(directory: Path) -> CertificateFiles:
    """A fresh CA and, signed by it, a server certificate for ``127.0.0.1``/``::1``/``localhost``
    and a client certificate, as PEM files in ``directory`` (keys 0600)."""
    ca = TestCA(directory, "poker test CA")
    server = ca.issue("server", server=True)
    client = ca.issue("client")
    return CertificateFiles(
        ca=ca.cert,
        server_cert=server.cert,
        server_key=server.key,
        client_cert=client.cert,
        client_key=client.key,
    )
