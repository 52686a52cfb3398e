"""What every service's settings share: the common flags, their ``<PREFIX>_<FLAG>`` environment
defaults, the process's owner id and the token keys (``--token-keys``, or one ``--token-secret``).

A service lists its flags as ``{flag: (settings field, type)}`` and adds them with
:func:`add_env_flags`; every flag also reads ``<prefix><FLAG>`` from the environment
(``--nats-url`` reads ``DEALER_NATS_URL`` with the prefix ``DEALER_``):

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
from collections.abc import Iterable, Mapping
from typing import Any, Final

from poker.eventstore.sealing import Keyring, KeyringError, Writer, load_keyring
from poker.servicekit.tls import ClientTls, ServerTls
from poker.servicekit.tokens import ISSUER_OF, Role, TokenKeyring

#: ``{flag: (settings field, type)}``: the flags every service has, under the same field names.
COMMON_FLAGS: Final[Mapping[str, tuple[str, type]]] = {
    "nats-url": ("nats_url", str),
    # The JSON credentials file of this service's NATS user, and the NATS TLS files (the CA of
    # the server's certificate; this client's certificate and key for mutual TLS). "": unset.
    "nats-credentials": ("nats_credentials", str),
    "nats-tls-ca": ("nats_tls_ca", str),
    "nats-tls-cert": ("nats_tls_cert", str),
    "nats-tls-key": ("nats_tls_key", str),
    "grpc-host": ("grpc_host", str),
    "grpc-port": ("grpc_port", int),
    "metrics-port": ("metrics_port", int),
    "grace": ("grace_s", float),
    "log-level": ("log_level", str),
    "owner-id": ("owner_id", str),
    # gRPC TLS (poker.servicekit.tls): the server's certificate chain and key, and the CA whose
    # client certificates it requires (set: mutual TLS). All empty: plaintext.
    "tls-cert": ("tls_cert", str),
    "tls-key": ("tls_key", str),
    "tls-client-ca": ("tls_client_ca", str),
    # Seconds between two polls of the JetStream API for the jetstream_* gauges
    # (poker.servicekit.jetstream_monitor); 0 turns the polling off.
    "jetstream-poll-interval": ("jetstream_poll_s", float),
}

DEFAULT_NATS_URL: Final = "nats://127.0.0.1:4222"
#: JetStream keeps at most 5 copies of a stream (an odd number: a quorum is a majority).
MAX_REPLICAS: Final = 5
DEFAULT_GRPC_HOST: Final = "127.0.0.1"
DEFAULT_GRACE_S: Final = 5.0
DEFAULT_LOG_LEVEL: Final = "info"
#: Seconds between polls of the JetStream API: a fraction of the alerts' windows (minutes).
DEFAULT_JETSTREAM_POLL_S: Final = 15.0


@dataclasses.dataclass(frozen=True, slots=True)
class ServiceSettings:
    """The settings every service has (the fields of :data:`COMMON_FLAGS` and the keys); each
    service's settings class extends it with its own fields and its own ports."""

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
    nats_credentials: str = ""
    nats_tls_ca: str = ""
    nats_tls_cert: str = ""
    nats_tls_key: str = ""
    grpc_host: str = DEFAULT_GRPC_HOST
    grpc_port: int = 0
    metrics_port: int = 0
    # gRPC TLS of this server (poker.servicekit.tls; all empty: plaintext). With a client CA, every
    # caller must present a certificate it signed: mutual TLS.
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
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


def env_name(prefix: str, flag: str) -> str:
    """The environment variable of ``--flag``: ``prefix`` + the flag in upper snake case."""
    return prefix + flag.upper().replace("-", "_")


def default_owner_id(prefix: str = "") -> str:
    """An id unique to this process (lease values name it; a holder knows its lease by it)."""
    return f"{prefix}{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def field_defaults(settings_class: type) -> dict[str, Any]:
    """``{field: default}`` of a settings dataclass (fields without a plain default left out)."""
    return {
        item.name: item.default
        for item in dataclasses.fields(settings_class)
        if item.default is not dataclasses.MISSING
    }


def add_env_flags(
    parser: argparse.ArgumentParser,
    flags: Mapping[str, tuple[str, type]],
    env: Mapping[str, str],
    prefix: str,
    defaults: Mapping[str, Any] | None = None,
) -> None:
    """Add ``--<flag>`` (stored as its settings field) for each of ``flags``.

    Without ``defaults``, a flag's default is its environment variable as given (``None`` when
    unset; argparse converts it, so a bad value is a usage error), and the caller leaves unset
    and empty values to the settings' own defaults. With ``defaults`` (``{field: value}``), it is
    ``type(environment variable, else str(defaults[field]))``, converted here.
    """
    for flag, (dest, kind) in flags.items():
        name = env_name(prefix, flag)
        if defaults is None:
            default: Any = env.get(name)
        else:
            default = kind(env.get(name, str(defaults[dest])))
        parser.add_argument(f"--{flag}", dest=dest, type=kind, default=default)


def add_token_secret_flags(
    parser: argparse.ArgumentParser, env: Mapping[str, str], prefix: str
) -> None:
    """``--token-keys`` (a keyring file), ``--token-secret`` (hex) and ``--token-secret-file``,
    defaulting to their variables (``<PREFIX>TOKEN_KEYS``, ...)."""
    parser.add_argument(
        "--token-keys",
        default=env.get(env_name(prefix, "token-keys"), ""),
        help='JSON keyring of the token keys: {"current": <kid>, "keys": {<kid>: <base64>}}; '
        "every key verifies, the current one signs",
    )
    parser.add_argument(
        "--token-secret",
        default=env.get(env_name(prefix, "token-secret"), ""),
        help="hex HMAC secret of the bearer tokens (at least 32 bytes): a one-key ring",
    )
    parser.add_argument(
        "--token-secret-file", default=env.get(env_name(prefix, "token-secret-file"), "")
    )


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


def add_token_signing_flag(
    parser: argparse.ArgumentParser, env: Mapping[str, str], prefix: str, role: Role
) -> None:
    """``--token-signing-key PATH`` (``<PREFIX>TOKEN_SIGNING_KEY``): the keyring of this
    service's own private key, which signs ``role`` tokens only."""
    parser.add_argument(
        "--token-signing-key",
        default=env.get(env_name(prefix, "token-signing-key"), ""),
        help=f"JSON keyring of this service's own EdDSA private key (it signs {role} tokens "
        "only; python -m poker.servicekit.tokens new-key makes one)",
    )


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


def add_log_keys_flag(parser: argparse.ArgumentParser, env: Mapping[str, str], prefix: str) -> None:
    """``--log-keys PATH``: the JSON keyring sealing the table log and the snapshots (see
    :mod:`poker.eventstore.sealing`), defaulting to ``<prefix>LOG_KEYS``."""
    parser.add_argument(
        "--log-keys",
        default=env.get(env_name(prefix, "log-keys"), ""),
        help="JSON keyring of the writer keys that seal table-log batches and snapshots",
    )


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
