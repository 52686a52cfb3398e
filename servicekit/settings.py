"""What every service's settings share: the common flags, their ``<PREFIX>_<FLAG>`` environment
defaults, the process's owner id and the token secret.

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
from collections.abc import Mapping
from typing import Any, Final

from servicekit.tls import ClientTls, ServerTls

#: ``{flag: (settings field, type)}``: the flags every service has, under the same field names.
COMMON_FLAGS: Final[Mapping[str, tuple[str, type]]] = {
    "nats-url": ("nats_url", str),
    "grpc-host": ("grpc_host", str),
    "grpc-port": ("grpc_port", int),
    "metrics-port": ("metrics_port", int),
    "grace": ("grace_s", float),
    "log-level": ("log_level", str),
    "owner-id": ("owner_id", str),
    # gRPC TLS (servicekit.tls): the server's certificate chain and key, and the CA whose
    # client certificates it requires (set: mutual TLS). All empty: plaintext.
    "tls-cert": ("tls_cert", str),
    "tls-key": ("tls_key", str),
    "tls-client-ca": ("tls_client_ca", str),
}

DEFAULT_NATS_URL: Final = "nats://127.0.0.1:4222"
DEFAULT_GRPC_HOST: Final = "127.0.0.1"
DEFAULT_GRACE_S: Final = 5.0
DEFAULT_LOG_LEVEL: Final = "info"


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
    """``--token-secret`` (hex) and ``--token-secret-file``, defaulting to their variables."""
    parser.add_argument(
        "--token-secret",
        default=env.get(env_name(prefix, "token-secret"), ""),
        help="hex HMAC secret of the bearer tokens (at least 32 bytes)",
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


def token_secret(args: argparse.Namespace) -> bytes:
    """:func:`load_token_secret` of the flags added by :func:`add_token_secret_flags`."""
    return load_token_secret(args.token_secret, args.token_secret_file)


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
