"""The table log on NATS as pokerctl's log commands read it: where it is and as whom
(:func:`nats_options`, :func:`with_log`: the operator's NATS credentials), and the keys that
read it (:func:`log_keyring_of`: the room's public log keys, to check seals;
:func:`deck_keys_of`: the dealers' deck keys, to read the hands' decks and cards)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import nats
import nats.errors
import nats.js.errors
from nats.js import JetStreamContext

from poker.eventstore.jetstream import JetStreamEventStore
from poker.eventstore.sealing import (
    Keyring,
    KeyringError,
    load_keyring,
)
from poker.servicekit import flags
from poker.servicekit.nats_connect import (
    NatsConfigError,
    NatsSettings,
    redact_url,
    server_urls,
    url_has_user,
)
from poker.tablelog.feed import JetStreamFeed
from poker.tablelog.secrets import DeckKeyError, DeckKeys, load_deck_keys
from poker.tablelog.settings import TableLogSettings
from poker.tools import ctlconfig
from poker.tools.ctlconfig import CtlError
from poker.tools.pokerctl.common import Ctl, F


def nats_options(function: F) -> F:
    """Where the table log is and as whom: ``--nats-url``, ``--nats-credentials``,
    ``--table-stream``, ``--table-subject-prefix`` (the services' names; the room's by
    default)."""
    options = [
        ctlconfig.option(flags.NATS_URL),
        ctlconfig.option(flags.NATS_CREDENTIALS),
        ctlconfig.option(flags.TABLE_STREAM),
        ctlconfig.option(flags.TABLE_SUBJECT_PREFIX),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def log_keyring_of(ctl: Ctl, log_keys: str) -> Keyring | None:
    """The keyring of ``--log-keys`` (default: the home's public one, else its shared one);
    None without one."""
    if not log_keys:
        home = ctl.settings.secret_path().parent
        defaults = [home / "log-keys-public.json", home / "log-keys.json"]
        log_keys = next((str(path) for path in defaults if path.exists()), "")
    if not log_keys:
        return None
    try:
        return load_keyring(log_keys)
    except KeyringError as error:
        raise CtlError(f"--log-keys: {error}") from None


def deck_key_option(function: F) -> F:
    """``--deck-key``: the dealers' deck keys, to read the hands' decks, seeds and cards."""
    return ctlconfig.option(
        flags.DECK_KEY,
        detail="None found: the money is rebuilt, but the decks are not checked and the hands"
        " not exported.",
    )(function)


def deck_keys_of(ctl: Ctl, path: str) -> DeckKeys | None:
    """The deck keys of ``--deck-key`` (or the home's var/deck-key.json); None without."""
    if not path:
        default = ctl.settings.secret_path().parent / "deck-key.json"
        path = str(default) if default.exists() else ""
    if not path:
        return None
    try:
        return load_deck_keys(path)
    except DeckKeyError as error:
        raise CtlError(f"--deck-key: {error}") from None


async def _ignore_nats_error(error: Exception) -> None:
    """nats-py's error callback: its default prints a traceback on stderr."""


async def with_log(
    ctl: Ctl,
    log: dict[str, str],
    body: Callable[[JetStreamEventStore, JetStreamFeed, JetStreamContext], Awaitable[None]],
) -> None:
    """Run ``body(store, feed, js)`` with the table log's store and feed, connected with the
    operator's credentials (``log``: the options of :func:`nats_options`)."""
    credentials = log["nats_credentials"]
    if not credentials and not url_has_user(log["nats_url"]):  # a user in the URL is explicit
        default = ctl.settings.secret_path().parent / "nats-credentials" / "admin.json"
        credentials = str(default) if default.exists() else ""
    settings = NatsSettings(
        servers=server_urls(log["nats_url"]), name="pokerctl", credentials=credentials
    )
    try:
        # nats-py directly, not the services' connect (its log lines would mix with --json).
        client = await nats.connect(
            servers=list(settings.servers),
            name=settings.name,
            connect_timeout=ctlconfig.CONNECT_TIMEOUT_S,
            allow_reconnect=False,
            # One more try of each server, then NoServersError. Not 0: nats-py (2.16) reads 0
            # as "no limit" while it picks a server, so an unreachable URL hung forever.
            max_reconnect_attempts=1,
            error_cb=_ignore_nats_error,  # the failure is raised below, as one line
            **settings.connect_options(),
        )
    except NatsConfigError as error:
        raise CtlError(f"--nats-credentials: {error}") from None
    except (OSError, TimeoutError, nats.errors.Error) as error:
        where = redact_url(log["nats_url"])
        raise CtlError(f"NATS at {where} (--nats-url) cannot be reached: {error}") from None
    names = TableLogSettings(stream=log["table_stream"], subject_prefix=log["table_subject_prefix"])
    try:
        js = client.jetstream()
        stream = names.stream_settings
        await body(JetStreamEventStore(js, stream), JetStreamFeed(js, stream), js)
    finally:
        await client.close()
