"""Connect to NATS with reconnect settings fit for a long-running service; drain on shutdown.

Once connected, the client reconnects forever (a service with no NATS is useless, and it must come
back by itself when NATS does) and logs every disconnect and reconnect. The first connect is
bounded by ``connect_budget_s`` so a misconfigured service fails loudly at start instead of
hanging; within it, unreachable servers are retried every ``reconnect_wait_s``.

A service connects as its own NATS user (``credentials``: a JSON file
``{"user": "...", "password": "..."}``, see :func:`load_credentials`), with replies on its own
inbox prefix ``_INBOX.<user>`` (the only subjects its user may subscribe to), and over TLS when
``tls_ca`` (and for mutual TLS ``tls_cert``/``tls_key``) are set: then the TLS handshake comes
first, before the server's INFO, so a server without TLS fails the connect instead of receiving
the password in plaintext (the server's ``tls`` block needs ``handshake_first: true``).

>>> import json, tempfile, os
>>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
...     _ = handle.write(json.dumps({"user": "dealer", "password": "s3cret-enough"}))
>>> load_credentials(handle.name)
NatsCredentials(user='dealer', password=<hidden>)
>>> os.unlink(handle.name)
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import nats
import nats.errors
import structlog
from nats.aio.client import Client

from poker.servicekit.nats_permissions import inbox_prefix

_log = structlog.get_logger(__name__)

#: A NATS user name: one subject token (it names the user's inbox prefix).
_USER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Shorter passwords are refused: the files are generated, so there is no reason for them.
MIN_PASSWORD_LENGTH = 12


class NatsUnavailable(ConnectionError):
    """No NATS server answered within the connect budget."""


class NatsConfigError(ValueError):
    """A NATS credentials or TLS file is missing or not in the expected form."""


@dataclass(frozen=True, slots=True)
class NatsCredentials:
    """A NATS user and its password (the password stays out of ``repr`` and logs)."""

    user: str
    password: str = field(repr=False)

    def __repr__(self) -> str:
        return f"NatsCredentials(user={self.user!r}, password=<hidden>)"


def load_credentials(path: str) -> NatsCredentials:
    """The credentials in the JSON file at ``path``: ``{"user": NAME, "password": TEXT}``.

    Raises :class:`NatsConfigError` with a sentence naming the file and what is wrong: missing
    or unreadable, not JSON, not an object of exactly those two strings, a user name that is not
    one subject token, a password shorter than :data:`MIN_PASSWORD_LENGTH`.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise NatsConfigError(f"NATS credentials file {path!r} cannot be read: {error}") from None
    try:
        data: Any = json.loads(text)
    except ValueError:
        raise NatsConfigError(
            f'NATS credentials file {path!r} is not JSON: expected {{"user": ..., "password": ...}}'
        ) from None
    if not isinstance(data, dict) or set(data) != {"user", "password"}:
        raise NatsConfigError(
            f'NATS credentials file {path!r} must be a JSON object with exactly "user" and '
            '"password"'
        )
    user, password = data["user"], data["password"]
    if not isinstance(user, str) or not _USER_NAME.fullmatch(user):
        raise NatsConfigError(
            f"NATS credentials file {path!r}: the user must be 1-64 letters, digits, _ or -"
        )
    if not isinstance(password, str) or len(password) < MIN_PASSWORD_LENGTH:
        raise NatsConfigError(
            f"NATS credentials file {path!r}: the password must be a string of at least "
            f"{MIN_PASSWORD_LENGTH} characters"
        )
    return NatsCredentials(user, password)


class CredentialsFile:
    """The credentials file, read again at every (re)connect: a password is rotated by writing
    the file, then restarting nats-server with the new password; the service reconnects with
    it, no restart of the service (docs/security/nats.md)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.current = load_credentials(path)  # unusable at start: the service does not start

    def user(self) -> str:
        """nats-py's user callback (called first for each CONNECT): re-reads the file; keeps
        the last good credentials if it is unusable now (logged)."""
        try:
            fresh = load_credentials(self.path)
        except NatsConfigError as error:
            _log.warning("nats_credentials_unreadable", error=str(error))
            return self.current.user
        if fresh.user != self.current.user:
            # The inbox prefix (and so the permissions) belongs to the user the process began
            # with; another user's file needs a restart.
            _log.warning("nats_credentials_user_changed", user=fresh.user, kept=self.current.user)
            return self.current.user
        self.current = fresh
        return fresh.user

    def password(self) -> str:
        """nats-py's password callback: the password read with :meth:`user`."""
        return self.current.password


def tls_context(ca: str, cert: str = "", key: str = "") -> ssl.SSLContext:
    """A client TLS context trusting the CA file ``ca`` (verifying the server's certificate and
    host name), presenting ``cert``/``key`` if given (mutual TLS); :class:`NatsConfigError` on a
    missing or unreadable file or a certificate without its key."""
    if not ca:
        raise NatsConfigError("NATS TLS needs --nats-tls-ca (the CA of the server's certificate)")
    if bool(cert) != bool(key):
        raise NatsConfigError("--nats-tls-cert and --nats-tls-key go together")
    try:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
        if cert:
            context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as error:
        raise NatsConfigError(f"NATS TLS files unusable: {error}") from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


@dataclass(frozen=True, slots=True)
class NatsSettings:
    """Where NATS is and how patiently to talk to it."""

    servers: tuple[str, ...] = ("nats://127.0.0.1:4222",)
    name: str = "poker"
    connect_budget_s: float = 30.0
    connect_timeout_s: int = 2
    reconnect_wait_s: float = 0.5
    #: A dead connection is noticed after ping_interval_s * max_outstanding_pings.
    ping_interval_s: int = 10
    max_outstanding_pings: int = 3
    drain_timeout_s: int = 10
    #: Path of the JSON credentials file of this service's NATS user ("": connect anonymously,
    #: which an authorizing server refuses).
    credentials: str = ""
    #: TLS: the CA file (set: TLS is required), and this client's certificate and key files.
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""

    def connect_options(self) -> dict[str, Any]:
        """The nats-py ``connect`` options of the credentials and TLS settings (files read and
        checked now: :class:`NatsConfigError` if they are unusable)."""
        options: dict[str, Any] = {}
        if self.credentials:
            source = CredentialsFile(self.credentials)
            options.update(
                user=source.user,
                password=source.password,
                inbox_prefix=inbox_prefix(source.current.user),
            )
        if self.tls_ca or self.tls_cert or self.tls_key:
            options.update(
                tls=tls_context(self.tls_ca, self.tls_cert, self.tls_key),
                tls_handshake_first=True,
            )
        return options


class ServiceNatsFields(Protocol):
    """The NATS fields every service's settings have (see
    poker.servicekit.settings.COMMON_FLAGS)."""

    @property
    def nats_url(self) -> str: ...
    @property
    def nats_credentials(self) -> str: ...
    @property
    def nats_tls_ca(self) -> str: ...
    @property
    def nats_tls_cert(self) -> str: ...
    @property
    def nats_tls_key(self) -> str: ...


def server_urls(nats_url: str) -> tuple[str, ...]:
    """The servers of a ``--nats-url``: one URL, or several separated by commas (the nodes of a
    cluster, so that the first connect does not depend on one node being up).

    >>> server_urls("nats://a:4222, nats://b:4222")
    ('nats://a:4222', 'nats://b:4222')
    """
    return tuple(url.strip() for url in nats_url.split(",") if url.strip())


def service_nats_settings(service: ServiceNatsFields, name: str) -> NatsSettings:
    """The :class:`NatsSettings` of a service's settings, the client named ``name``."""
    return NatsSettings(
        servers=server_urls(service.nats_url),
        name=name,
        credentials=service.nats_credentials,
        tls_ca=service.nats_tls_ca,
        tls_cert=service.nats_tls_cert,
        tls_key=service.nats_tls_key,
    )


async def _log_error(error: Exception) -> None:
    _log.warning("nats_error", error=repr(error))


async def _log_disconnected() -> None:
    _log.warning("nats_disconnected")


async def _log_closed() -> None:
    _log.info("nats_closed")


def redact_url(url: str) -> str:
    """``url`` without a password embedded in it, for messages and logs.

    >>> redact_url("nats://admin:s3cret@127.0.0.1:4222,nats://127.0.0.1:4223")
    'nats://admin:***@127.0.0.1:4222,nats://127.0.0.1:4223'
    """
    return re.sub(r"//([^:/@,]+):[^@/,]*@", r"//\1:***@", url)


def url_has_user(url: str) -> bool:
    """Whether a (comma-separated) NATS URL names a user itself (``nats://user:pw@host``).

    >>> url_has_user("nats://admin:pw@127.0.0.1:4222"), url_has_user("nats://127.0.0.1:4222")
    (True, False)
    """
    return re.search(r"//[^/@,]+@", url) is not None


def _redacted(servers: tuple[str, ...]) -> list[str]:
    """The server URLs without any password embedded in them (``nats://user:pw@host``)."""
    return [redact_url(server) for server in servers]


def _server_of(client: Client) -> str:
    url = client.connected_url
    # host:port only: the netloc would carry a password embedded in the URL into the logs.
    return "" if url is None else f"{url.hostname}:{url.port}"


async def connect_nats(settings: NatsSettings) -> Client:
    """A connected client; raises :class:`NatsUnavailable` once the connect budget is spent,
    :class:`NatsConfigError` at once if the credentials or TLS files are unusable."""
    options = settings.connect_options()
    client = Client()
    errors: list[Exception] = []

    async def log_reconnected() -> None:
        _log.info("nats_reconnected", server=_server_of(client))

    async def log_error(error: Exception) -> None:
        # The last one explains a failed first connect; but a server's refusal ("Authorization
        # Violation") says more than the reset of the socket that may follow it, so it stays.
        refused = bool(errors) and isinstance(errors[-1], nats.errors.Error)
        if isinstance(error, nats.errors.Error) or not refused:
            errors[:] = [error]
        await _log_error(error)

    try:
        await asyncio.wait_for(
            client.connect(
                servers=list(settings.servers),
                name=settings.name,
                allow_reconnect=True,
                max_reconnect_attempts=-1,  # forever, also for the first connect (bounded here)
                # nats-py annotates these as int but sleeps on them; sub-second waits work.
                reconnect_time_wait=settings.reconnect_wait_s,  # type: ignore[arg-type]
                connect_timeout=settings.connect_timeout_s,
                ping_interval=settings.ping_interval_s,
                max_outstanding_pings=settings.max_outstanding_pings,
                drain_timeout=settings.drain_timeout_s,
                error_cb=log_error,
                disconnected_cb=_log_disconnected,
                reconnected_cb=log_reconnected,
                closed_cb=_log_closed,
                **options,
            ),
            timeout=settings.connect_budget_s,
        )
    except (TimeoutError, OSError, nats.errors.Error) as error:
        await client.close()
        last = f" (last error: {errors[-1]})" if errors else ""
        raise NatsUnavailable(
            f"no NATS server of {_redacted(settings.servers)} accepted a connection in "
            f"{settings.connect_budget_s} s{last}"
        ) from error
    _log.info("nats_connected", server=_server_of(client))
    return client


async def drain_nats(client: Client, timeout_s: float = 10.0) -> None:
    """Drain ``client`` (finish in-flight messages, flush publishes, close), bounded by
    ``timeout_s``; falls back to a plain close. Safe on a closed client."""
    if client.is_closed:
        return
    try:
        await asyncio.wait_for(client.drain(), timeout=timeout_s)
    except (TimeoutError, nats.errors.Error) as error:
        _log.warning("nats_drain_failed", error=repr(error))
        await client.close()
