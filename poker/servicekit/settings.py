"""What every service's settings share: their fields, the parser built from
:mod:`poker.servicekit.flags` (every setting defined once there), the process's owner id and
the token keys (``--token-keys``, or one ``--token-secret``).

Every flag also reads ``<PREFIX><FLAG>`` from the environment (``--nats-url`` reads
``DEALER_NATS_URL`` in the dealer):

>>> env_name("WALLET_", "nats-url")
'WALLET_NATS_URL'
>>> load_token_secret("ab" * 32, "") == bytes.fromhex("ab" * 32)
True
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import secrets
import socket
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from poker.eventstore.sealing import Keyring, KeyringError, Writer, load_keyring
from poker.servicekit import flags
from poker.servicekit.flagspec import ENV_PREFIX, Program, add_flags, check_flags, env_name
from poker.servicekit.tls import ClientTls, ServerTls
from poker.servicekit.tokens import ISSUER_OF, Role, TokenKeyring

__all__ = ["env_name"]

DEFAULT_NATS_URL: Final[str] = flags.NATS_URL.default
#: JetStream keeps at most 5 copies of a stream (an odd number: a quorum is a majority).
MAX_REPLICAS: Final = flags.MAX_REPLICAS
DEFAULT_GRPC_HOST: Final[str] = flags.GRPC_HOST.default
DEFAULT_GRACE_S: Final[float] = flags.GRACE.default
DEFAULT_LOG_LEVEL: Final[str] = flags.LOG_LEVEL.default
#: Seconds between polls of the JetStream API: a fraction of the alerts' windows (minutes).
DEFAULT_JETSTREAM_POLL_S: Final[float] = flags.JETSTREAM_POLL_INTERVAL.default


@dataclasses.dataclass(frozen=True, slots=True)
class ServiceSettings:
    """The settings every service has (the common, NATS and gRPC groups of
    :mod:`poker.servicekit.flags`, whose defaults these are, and the keys); each service's
    settings class extends it with its own fields and its own ports."""

    # The token keys: a keyring (--token-keys), else the one secret of --token-secret; and the
    # ring of this service's own private key (--token-signing-key: the dealer's, for its
    # dealer-role token to the wallet).
    token_secret: bytes = b""
    token_keys: TokenKeyring | None = None
    token_signing_keys: TokenKeyring | None = None
    # The writer keys sealing the table log and the snapshots (--log-keys); required to serve.
    log_keys: Keyring | None = None
    nats_url: str = DEFAULT_NATS_URL
    # This service's NATS user (a JSON credentials file) and NATS TLS files; "" = unset.
    nats_credentials: str = flags.NATS_CREDENTIALS.default
    nats_tls_ca: str = flags.NATS_TLS_CA.default
    nats_tls_cert: str = flags.NATS_TLS_CERT.default
    nats_tls_key: str = flags.NATS_TLS_KEY.default
    grpc_host: str = DEFAULT_GRPC_HOST
    grpc_port: int = 0
    metrics_port: int = 0
    # gRPC TLS of this server (poker.servicekit.tls; all empty: plaintext). With a client CA, every
    # caller must present a certificate it signed: mutual TLS.
    tls_cert: str = flags.TLS_CERT.default
    tls_key: str = flags.TLS_KEY.default
    tls_client_ca: str = flags.TLS_CLIENT_CA.default
    grace_s: float = DEFAULT_GRACE_S
    # Seconds between polls of the JetStream API for the jetstream_* gauges (0: off).
    jetstream_poll_s: float = DEFAULT_JETSTREAM_POLL_S
    log_level: str = DEFAULT_LOG_LEVEL

    @property
    def token_keyring(self) -> TokenKeyring:
        """The keys the service verifies tokens with and signs its own with (the verify ring,
        with the service's own signing key merged in)."""
        ring = self.token_keys or TokenKeyring.single(self.token_secret)
        return ring if self.token_signing_keys is None else ring.merged(self.token_signing_keys)


def default_owner_id(prefix: str = "") -> str:
    """An id unique to this process (lease values name it; a holder knows its lease by it)."""
    return f"{prefix}{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def service_parser(
    program: Program, description: str, env: Mapping[str, str]
) -> argparse.ArgumentParser:
    """``python -m poker.<program>``'s parser: every setting of :mod:`poker.servicekit.flags`
    the program reads, each defaulting to its variable in ``env``, else its default."""
    parser = argparse.ArgumentParser(
        prog=f"python -m poker.{program.value}",
        description=f"{description} Every flag also reads {ENV_PREFIX[program]}<FLAG> from the "
        "environment; docs/configuration.md lists them all.",
    )
    add_flags(parser, program, env, flags.SETTINGS)
    return parser


def parse_service_flags(
    program: Program, description: str, argv: Sequence[str] | None, env: Mapping[str, str]
) -> argparse.Namespace:
    """The flags of ``argv`` over ``env``, each checked against its bounds (exit with the
    sentence of the first refused)."""
    args = service_parser(program, description, env).parse_args(argv)
    check_flags(args, program, flags.SETTINGS)
    return args


def load_token_secret(text: str, path: str) -> bytes:
    """The secret from hex ``text``, else from the file at ``path``; exits unless >= 32 bytes."""
    if not text and path:
        with open(path, encoding="ascii") as handle:
            text = handle.read().strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError as error:
        raise SystemExit("the token secret must be hex") from error
    if len(secret) < 32:
        raise SystemExit("a token secret of at least 32 bytes (64 hex digits) is required")
    return secret


def load_token_keys(path: str) -> TokenKeyring:
    """The keyring in the file at ``path``; exits with the reason if it is not a valid one."""
    try:
        return TokenKeyring.load(path)
    except OSError as error:
        raise SystemExit(f"cannot read the token keyring {path}: {error.strerror}") from error
    except ValueError as error:
        raise SystemExit(f"the token keyring {path} is not valid: {error}") from error


def token_signing_keys(args: argparse.Namespace, role: Role) -> TokenKeyring | None:
    """The keyring of ``--token-signing-key`` (None when not given); exits unless it can sign
    ``role`` tokens and no other role's."""
    path: str = getattr(args, "token_signing_key", "")
    if not path:
        return None
    if not getattr(args, "token_keys", ""):
        raise SystemExit("--token-signing-key goes with --token-keys (the ring it verifies with)")
    ring = load_token_keys(path)
    if ring.signing_roles() != {role}:
        roles = ", ".join(sorted(r.value for r in ring.signing_roles())) or "no role"
        raise SystemExit(
            f"the token signing key {path} must sign {role} tokens only, not {roles}: "
            f"give this service its own {role} key"
        )
    return ring


def check_token_keys(ring: TokenKeyring, service: str, prefix: str, signs: set[Role]) -> None:
    """Exit if ``ring`` holds a private key of a role this service does not issue (it signs
    ``signs`` only: the wallet none, a dealer ``dealer``): such a key on a service host lets
    whoever takes the host mint that role's tokens. A legacy shared HS256 key cannot be split
    and is allowed (the mode to migrate from, docs/security/tokens.md)."""
    for kid, key in ring.keys.items():
        roles = key.roles or frozenset()
        if key.private is not None and not roles <= signs:
            others = ", ".join(sorted(role.value for role in roles - signs))
            issuers = ", ".join(sorted({ISSUER_OF[role] for role in roles - signs}))
            raise SystemExit(
                f"the {service}'s token keyring ({prefix}TOKEN_KEYS) holds the private key "
                f"{kid!r}, which may sign {others} tokens: that key is the {issuers}'s; give "
                "the service the public ring (python -m poker.servicekit.tokens public ...)"
            )


def token_secret(args: argparse.Namespace) -> bytes:
    """:func:`load_token_secret` of the flags added by :func:`add_token_secret_flags`; empty
    when ``--token-keys`` is given instead."""
    if getattr(args, "token_keys", ""):
        if args.token_secret or args.token_secret_file:
            raise SystemExit("give --token-keys or --token-secret, not both")
        return b""
    return load_token_secret(args.token_secret, args.token_secret_file)


def token_keys(args: argparse.Namespace) -> TokenKeyring | None:
    """The keyring of ``--token-keys``, or None when the service runs on ``--token-secret``."""
    path: str = getattr(args, "token_keys", "")
    return load_token_keys(path) if path else None


def log_keyring(args: argparse.Namespace) -> Keyring | None:
    """The keyring of ``--log-keys`` (None when not given); exits with the keyring's error."""
    if not args.log_keys:
        return None
    try:
        return load_keyring(args.log_keys)
    except KeyringError as error:
        raise SystemExit(str(error)) from error


def require_log_keys(
    keyring: Keyring | None, service: str, prefix: str, signs_as: Iterable[Writer] = ()
) -> Keyring:
    """``keyring``, or exit with a sentence: a service never writes or reads unsealed logs, and
    the dealer and the wallet each sign as their own writer, so each keyring must hold that
    writer's signing key (its private half: ``log-keys-dealer.json`` for the dealer,
    ``log-keys-wallet.json`` for the wallet; the public file is for tools only); nor does it
    start without a key for each other writer it ``signs_as`` (the wallet: its journal's ledger
    key, which only the wallet's keyring holds)."""
    if keyring is None:
        raise SystemExit(
            f"the {service} needs its log keyring: --log-keys PATH (or {prefix}LOG_KEYS); "
            "see docs/security/table-log.md"
        )
    own = Writer(service)
    for writer in signs_as:
        if writer is not own and not keyring.has_signer(writer):
            raise SystemExit(
                f"the {service}'s log keyring (--log-keys, {prefix}LOG_KEYS) has no {writer.value} "
                f"key in 'sign_with': the {service} signs as {writer.value}; give it its own "
                f"keyring with that key (log-keys-{service}.json; docs/security/journal.md)"
            )
    try:
        keyring.signer(own)
    except KeyringError as error:
        raise SystemExit(
            f"the {service}'s log keyring cannot sign as the {service} ({error}): give it the "
            f"{service}'s own keyring file (log-keys-{service}.json); see "
            "docs/security/table-log.md"
        ) from None
    return keyring


def check_replicas(replicas: int, flag: str = "--replicas") -> int:
    """``replicas`` if JetStream can keep that many copies (1 to :data:`MAX_REPLICAS`); else
    exit with a sentence (3 on a 3-node cluster, 1 on one node)."""
    if not 1 <= replicas <= MAX_REPLICAS:
        raise SystemExit(
            f"{flag} must be 1 to {MAX_REPLICAS} (1 on one nats-server, 3 on a 3-node cluster)"
        )
    return replicas


def server_tls(cert: str, key: str, client_ca: str) -> ServerTls | None:
    """:meth:`ServerTls.from_paths` of the ``--tls-*`` flags, its files read once to check
    them; half a setting or an unreadable file exits with a sentence."""
    try:
        tls = ServerTls.from_paths(cert, key, client_ca)
        if tls is not None:
            tls.credentials()
    except ValueError as error:
        raise SystemExit(str(error)) from None
    return tls


def client_tls(ca: str, cert: str, key: str, *, flag: str) -> ClientTls | None:
    """:meth:`ClientTls.from_paths` of the ``<flag>-ca/-cert/-key`` flags, its files read once
    to check them; half a setting or an unreadable file exits with a sentence."""
    try:
        tls = ClientTls.from_paths(ca, cert, key, flag=flag)
        if tls is not None:
            tls.credentials()
    except ValueError as error:
        raise SystemExit(str(error)) from None
    return tls
