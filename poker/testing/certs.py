"""Throw-away certificate authorities for TLS tests, made with ``cryptography`` in the fixture.

A :class:`TestCA` writes its own certificate and issues leaf certificates (EC P-256, a day
long) as PEM files in a directory: server certificates carry the loopback names as SANs
(``127.0.0.1``, ``::1``, ``localhost``), client certificates the client-auth usage. Nothing is
ever reused across test sessions.

    ca = TestCA(tmp_path / "ca", "poker test CA")
    server = ca.issue("dealer", server=True)      # server.cert, server.key (Paths)
    client = ca.issue("pokerctl")                 # a client certificate
    ca.cert                                        # the CA certificate to trust
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: The names a loopback test server answers to.
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
_VALIDITY = datetime.timedelta(days=1)


@dataclass(frozen=True, slots=True)
class CertFiles:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _san(hosts: Sequence[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


class TestCA:
    """A self-signed CA in ``directory`` (``ca.pem``) that issues leaf certificates there."""

    __test__ = False  # not a pytest test class

    def __init__(self, directory: Path, common_name: str = "poker test CA") -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self._certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        self.cert = directory / "ca.pem"
        self.cert.write_bytes(self._certificate.public_bytes(serialization.Encoding.PEM))

    def issue(
        self,
        name: str,
        *,
        server: bool = False,
        hosts: Sequence[str] = LOOPBACK_HOSTS,
    ) -> CertFiles:
        """A leaf certificate for ``name`` (its file stem and common name): a server
        certificate for ``hosts`` with ``server``, else a client certificate."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(self._certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            builder = builder.add_extension(_san(hosts), critical=False)
        certificate = builder.sign(self._key, hashes.SHA256())
        files = CertFiles(self.directory / f"{name}.pem", self.directory / f"{name}-key.pem")
        files.cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        _write_key(key, files.key)
        return files


@dataclass(frozen=True, slots=True)
class TestPki:
    """One test's certificates: a CA, a server certificate for loopback, a client certificate
    of the same CA, and a client certificate of another CA (which servers must refuse)."""

    __test__ = False

    ca: TestCA
    server: CertFiles
    client: CertFiles
    stranger_ca: TestCA
    stranger: CertFiles


def make_pki(directory: Path) -> TestPki:
    """A fresh :class:`TestPki` under ``directory``."""
    ca = TestCA(directory / "ca", "poker test CA")
    stranger_ca = TestCA(directory / "stranger", "someone else's CA")
    return TestPki(
        ca=ca,
        server=ca.issue("server", server=True),
        client=ca.issue("client"),
        stranger_ca=stranger_ca,
        stranger=stranger_ca.issue("stranger"),
    )
