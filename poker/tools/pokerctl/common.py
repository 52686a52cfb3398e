"""What every pokerctl command shares: one run (:class:`Ctl`: its settings, where it prints,
``--json``), the channels to the dealer and the wallet (each call waiting a moment for a server
that answers, else one sentence saying where to point pokerctl), and the decorators that turn an
``async def`` into a click command (:func:`run`, :func:`json_option`).

The audiences' commands (:mod:`~poker.tools.pokerctl.player`, :mod:`~poker.tools.pokerctl.bots`,
:mod:`~poker.tools.pokerctl.operators`, :mod:`~poker.tools.pokerctl.wallet`,
:mod:`~poker.tools.pokerctl.logs`, :mod:`~poker.tools.pokerctl.repair`) call the services
through :mod:`poker.tools.client` and print through :mod:`poker.tools.render`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar

import click
import grpc
from rich.console import Console

from poker.servicekit.channels import health_checked_options
from poker.servicekit.tls import aio_channel
from poker.servicekit.tokens import Role, TokenKeys, issue_token
from poker.tools import ctlconfig
from poker.tools.client import CHANNEL_OPTIONS, Client, WalletClient
from poker.tools.ctlconfig import CtlError, Settings

#: How long a wallet call may wait for a serving wallet (a standby taking the lease right after
#: `make run` starts) before pokerctl gives up.
_WALLET_WAIT_S = 5.0
#: A decorated function: an option decorator returns what it was given.
F = TypeVar("F", bound=Callable[..., Any])


def _console(*, stderr: bool = False) -> Console:
    """A console for people: the terminal's width, or wide when piped (a file, a pager, a test),
    so that tables are not cut to 80 columns."""
    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(stderr=stderr, highlight=False, soft_wrap=True, width=200)
    return console


@dataclass
class Ctl:
    """One pokerctl run: its settings and where it prints."""

    settings: Settings
    json: bool = False
    out: Console = field(default_factory=_console)
    err: Console = field(default_factory=lambda: _console(stderr=True))

    def emit(self, data: Any, human: Callable[[], None]) -> None:
        """``data`` as one JSON line with ``--json``, else what ``human`` prints."""
        if self.json:
            print(json.dumps(data, sort_keys=True), flush=True)
        else:
            human()

    def keys(self) -> TokenKeys:
        """The token keys (read on first use: ``token`` and the others need them, help does not)."""
        return self.settings.signing_keys()

    def dealer(self, channel: grpc.aio.Channel, subject: str, role: Role) -> Client:
        """A Dealer client as ``subject``."""
        return Client(channel, self.keys(), subject, role)


# --- the plumbing: connections, one-line errors, --json -----------------------------------------


async def _ready(
    channel: grpc.aio.Channel, what: str, address: str, flag: str, *, tls: bool = False
) -> None:
    """Fail in a moment with one sentence when nothing answers at ``address`` (or the TLS
    handshake fails: a wrong CA, no client certificate for a server that requires one)."""
    try:
        await asyncio.wait_for(channel.channel_ready(), ctlconfig.CONNECT_TIMEOUT_S)
    except TimeoutError:
        hint = (
            " (over TLS: are --tls-ca, --tls-cert and --tls-key the ones it trusts?)" if tls else ""
        )
        raise CtlError(
            f"cannot reach the {what} at {address}{hint}: start it with `make run` in the "
            f"checkout, or point pokerctl at it with {flag}"
        ) from None


async def with_dealer(ctl: Ctl, body: Callable[[grpc.aio.Channel], Awaitable[None]]) -> None:
    """Run ``body(channel)`` on a channel to the dealer (``--dealer``), once it answers."""
    address = ctl.settings.dealer
    tls = ctl.settings.tls()
    async with aio_channel(address, tls, CHANNEL_OPTIONS) as channel:
        await _ready(channel, "dealer", address, "--dealer (POKER_DEALER)", tls=tls is not None)
        await body(channel)


async def wallet_call(
    ctl: Ctl,
    method: str,
    request: Any,
    subject: str = "operator",
    role: Role = Role.OPERATOR,
    *,
    timeout_s: float | None = None,
) -> Any:
    """One Wallet call as ``role``, made once the wallet reports SERVING: the channel's health
    checks and retry policy wait a few seconds for a wallet still taking its lease
    (:mod:`poker.servicekit.channels`); ``timeout_s`` for a call that takes longer (the deep
    audit)."""
    token = issue_token(ctl.keys(), subject=subject, role=role)
    address = ctl.settings.wallet
    tls = ctl.settings.tls()
    options = [*CHANNEL_OPTIONS, *health_checked_options("poker.v1.WalletService")]
    async with aio_channel(address, tls, options) as channel:
        await _ready(channel, "wallet", address, "--wallet (POKER_WALLET)", tls=tls is not None)
        wallet = WalletClient(channel, None, subject, role, token=token)
        timeout = _WALLET_WAIT_S if timeout_s is None else timeout_s
        return await wallet.call(method, request, timeout=timeout, wait_for_ready=True)


def json_option(function: F) -> F:
    """``--json``: every command takes it (one JSON object, or one per line for a stream)."""
    return click.option(
        "--json", "as_json_", is_flag=True, help="Print JSON for scripts instead of text."
    )(function)


def run(function: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """A click command body that runs ``function(ctl, **params)`` in an event loop."""

    @wraps(function)
    def command(as_json_: bool = False, **params: Any) -> None:
        ctl: Ctl = click.get_current_context().find_object(Ctl)  # type: ignore[assignment]
        ctl.json = as_json_
        asyncio.run(function(ctl, **params))

    return command


def cid() -> str:
    """A fresh command id (or idempotency key)."""
    return uuid.uuid4().hex


def print_lines(ctl: Ctl, lines: Sequence[str]) -> None:
    """The lines a :class:`~poker.tools.render.Narrator` tells, as they are (no markup)."""
    for line in lines:
        ctl.out.print(line, markup=False)
