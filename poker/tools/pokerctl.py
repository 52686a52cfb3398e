"""``pokerctl``: the command line of the dealer and the wallet, with bot players.

    pokerctl create --game holdem --blinds 1/2          # prints the new table id
    pokerctl bots <table> --count 3 --hands 5           # seats bots, plays 5 hands, they leave
    pokerctl watch <table>                              # the table's hands as they are played
    pokerctl show <table> [--as bot-1]                  # the table (bot-1's cards with --as)
    pokerctl history <hand id>                          # a finished hand in PHH
    pokerctl seed <table> --as bot-1 [--seed HEX]       # bot-1's seed for his next hand's deck
    pokerctl verify-hand <hand id> [--as bot-1] [--seed SEAT=HEX]   # the deck was fair
    pokerctl replay <table> [--to-version N]            # rebuilt from NATS, no dealer needed
    pokerctl verify [<table> ...]                       # chain, decks, dealer and wallet agree
    pokerctl export --table T | --player P [--since D] [--until D] [-o F]   # one .phhs file
    pokerctl tables | close <table> | token <subject>
    pokerctl drain <table> [--timeout 60]               # hand the table to another dealer
    pokerctl deposit alice 5000 [--key K] | withdraw alice 100 --key K   # the wallet
    pokerctl balance alice | transactions alice | escrow <table> | rake | audit

Every command takes ``--json`` (one JSON object, or one per line for ``watch`` and ``bots``).

Where things are (flag, else environment variable, else the config file, else the default; see
:mod:`poker.tools.ctlconfig`): the dealer ``--dealer``/``POKER_DEALER``, the wallet
``--wallet``/``POKER_WALLET``, the token keys (``--token-keys``/``POKER_TOKEN_KEYS``, a keyring
file holding the private keys of the roles it signs; else ``POKER_TOKEN_SECRET`` in hex; else
``--secret-file``/``POKER_SECRET_FILE``; else ``var/token-keys/pokerctl.json`` - the local
issuers' keys ``make run`` writes - or the legacy ``var/token-secret``, of ``--home``/
``POKER_HOME``, of the nearest folder up from here that has one, or of the checkout pokerctl
runs from), and TLS
(``--tls-ca/--tls-cert/--tls-key``, ``POKER_TLS_*``; none: plaintext, the loopback ``make run``).
Deposits and withdrawals (the bots' funding included) go with a cashier token, as the payments
service's would; ``pokerctl token SUBJECT --role cashier`` prints one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import signal
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial, wraps
from pathlib import Path
from typing import Any, TypeVar

import click
import grpc
import nats
import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from poker.engine import fairness_check
from poker.engine.games import GAMES, ForcedBets
from poker.engine.table import live_stack
from poker.eventstore.aggregate import SNAPSHOT_DECODE_ERRORS
from poker.eventstore.api import Record
from poker.eventstore.jetstream import JetStreamEventStore, writer_headers
from poker.eventstore.sealing import (
    Keyring,
    KeyringError,
    SealedSnapshotStore,
    SnapshotRefused,
    Writer,
    load_keyring,
)
from poker.eventstore.snapshots import CorruptSnapshot, JetStreamSnapshotStore, SnapshotSettings
from poker.servicekit.auth import bearer_metadata
from poker.servicekit.channels import health_checked_options
from poker.servicekit.nats_connect import (
    NatsConfigError,
    NatsSettings,
    redact_url,
    server_urls,
    url_has_user,
)
from poker.servicekit.tls import aio_channel
from poker.servicekit.tokens import NoSigningKey, Role, TokenKeys, issue_token
from poker.tablelog.feed import JetStreamFeed, is_table_id
from poker.tablelog.seals import TableSeals
from poker.tablelog.secrets import DeckKeyError, DeckKeys, load_deck_keys
from poker.tablelog.settings import DEFAULT_TABLE_LOG, TableLogSettings
from poker.tools import ctlconfig, logtools
from poker.tools.botrun import BotSession, fund_bots
from poker.tools.client import CHANNEL_OPTIONS, Client
from poker.tools.ctlconfig import CtlError, Settings
from poker.tools.render import (
    STRUCTURES,
    Narrator,
    as_json,
    game_name,
    local_time,
    stakes_text,
    structure_name,
    table_view,
)
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb
from poker.v1 import wallet_pb2_grpc

#: How long a wallet call may wait for a serving wallet (a standby taking the lease right after
#: `make run` starts) before pokerctl gives up.
_WALLET_WAIT_S = 5.0
_CONTEXT = {"help_option_names": ["-h", "--help"], "show_default": True, "max_content_width": 100}
_F = TypeVar("_F", bound=Callable[..., Any])


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


async def _with_dealer(ctl: Ctl, body: Callable[[grpc.aio.Channel], Awaitable[None]]) -> None:
    address = ctl.settings.dealer
    tls = ctl.settings.tls()
    async with aio_channel(address, tls, CHANNEL_OPTIONS) as channel:
        await _ready(channel, "dealer", address, "--dealer (POKER_DEALER)", tls=tls is not None)
        await body(channel)


async def _wallet_call(
    ctl: Ctl, method: str, request: Any, subject: str = "operator", role: Role = Role.OPERATOR
) -> Any:
    """One Wallet call as ``role``, made once the wallet reports SERVING: the channel's health
    checks and retry policy wait a few seconds for a wallet still taking its lease
    (:mod:`poker.servicekit.channels`)."""
    token = issue_token(ctl.keys(), subject=subject, role=role)
    address = ctl.settings.wallet
    tls = ctl.settings.tls()
    options = [*CHANNEL_OPTIONS, *health_checked_options("poker.v1.WalletService")]
    async with aio_channel(address, tls, options) as channel:
        await _ready(channel, "wallet", address, "--wallet (POKER_WALLET)", tls=tls is not None)
        rpc = getattr(wallet_pb2_grpc.WalletServiceStub(channel), method)
        return await rpc(
            request, metadata=bearer_metadata(token), timeout=_WALLET_WAIT_S, wait_for_ready=True
        )


def _json_option(function: _F) -> _F:
    return click.option(
        "--json", "as_json_", is_flag=True, help="Print JSON for scripts instead of text."
    )(function)


def _run(function: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """A click command body that runs ``function(ctl, **params)`` in an event loop."""

    @wraps(function)
    def command(as_json_: bool = False, **params: Any) -> None:
        ctl: Ctl = click.get_current_context().find_object(Ctl)  # type: ignore[assignment]
        ctl.json = as_json_
        asyncio.run(function(ctl, **params))

    return command


class _Pair(click.ParamType):  # type: ignore[type-arg]
    """``SMALL/BIG``: two whole amounts (blinds, fixed-limit bets)."""

    name = "SMALL/BIG"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        small, slash, big = str(value).partition("/")
        small, big = small.strip(), big.strip()
        if not slash or not all(part.isascii() and part.isdigit() for part in (small, big)):
            self.fail(f"{value!r} is not two whole amounts like 1/2", param, ctx)
        return int(small), int(big)


_PAIR = _Pair()
_GAME_HELP = "The game: " + ", ".join(f"{key} ({game.name})" for key, game in GAMES.items())


# --- the commands ---------------------------------------------------------------------------


@click.group(
    context_settings=_CONTEXT,
    help="The command line of the dealer and the wallet, with bot players. "
    "`pokerctl COMMAND --help` says more; every command takes --json.",
)
@click.option(
    "--dealer",
    "--address",
    envvar="POKER_DEALER",
    default=ctlconfig.DEFAULT_DEALER,
    help="The dealer's gRPC address (env POKER_DEALER).",
)
@click.option(
    "--wallet",
    envvar="POKER_WALLET",
    default=ctlconfig.DEFAULT_WALLET,
    help="The wallet's gRPC address (env POKER_WALLET).",
)
@click.option(
    "--home",
    envvar="POKER_HOME",
    default="",
    show_default=False,
    help="The checkout whose var/token-keys/ `make run` wrote (env POKER_HOME; default: the "
    "nearest folder up from here with one, else pokerctl's own checkout).",
)
@click.option(
    "--secret-file",
    envvar="POKER_SECRET_FILE",
    default="",
    show_default=False,
    help="A legacy shared token secret (env POKER_SECRET_FILE; default: "
    "<home>/var/token-secret when <home> has no var/token-keys/pokerctl.json).",
)
@click.option(
    "--token-keys",
    envvar="POKER_TOKEN_KEYS",
    default="",
    show_default=False,
    help="A token keyring file (JSON) holding the private key of each role pokerctl signs "
    "(operator; cashier for deposits); wins over the secret.",
)
@click.option(
    "--tls-ca",
    envvar="POKER_TLS_CA",
    default="",
    show_default=False,
    help="CA (PEM) of the servers.",
)
@click.option(
    "--tls-cert",
    envvar="POKER_TLS_CERT",
    default="",
    show_default=False,
    help="Client certificate (PEM).",
)
@click.option(
    "--tls-key",
    envvar="POKER_TLS_KEY",
    default="",
    show_default=False,
    help="Its private key (PEM).",
)
@click.pass_context
def cli(ctx: click.Context, /, **options: str) -> None:
    """The pokerctl group: its options say where the services and the keys are."""
    ctx.obj = Ctl(Settings(**options))


@cli.command()
@click.option(
    "--game", type=click.Choice(sorted(GAMES)), metavar="GAME", default="holdem", help=_GAME_HELP
)
@click.option(
    "--structure",
    type=click.Choice(sorted(STRUCTURES)),
    default="no-limit",
    help="The betting structure.",
)
@click.option("--blinds", type=_PAIR, default=None, help="Button games' blinds [default: 1/2].")
@click.option(
    "--ante", type=click.IntRange(0), default=None, help="The ante [default: 1 in stud, else 0]."
)
@click.option("--bring-in", type=click.IntRange(0), default=0, help="Stud; 0: twice the ante.")
@click.option(
    "--bets",
    type=_PAIR,
    default=None,
    help="Fixed-limit small/big bets [default: the big blind (stud: twice the bring-in) and"
    " twice that].",
)
@click.option(
    "--table-id",
    default="",
    show_default=False,
    help="The table's id (default: the dealer picks one).",
)
@click.option("--timer-ms", type=click.IntRange(1), default=15_000, help="Time to act, in ms.")
@click.option(
    "--pause-ms", type=click.IntRange(1), default=2_000, help="Pause between hands, in ms."
)
@click.option(
    "--gathering-ms",
    type=click.IntRange(0),
    default=None,
    show_default=False,
    help="Once two can play at an idle table, the next hand waits this long, so that players"
    " who sit down together are dealt in together (0: none) [default: the pause].",
)
@click.option("--real-money", is_flag=True, help="Real money (raked) instead of play money.")
@_json_option
@_run
async def create(ctl: Ctl, **args: Any) -> None:
    """Open a table; prints its id."""

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await ctl.dealer(channel, "operator", Role.OPERATOR).call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id=_cid(),
                table_id=args["table_id"],
                game=args["game"],
                structure=STRUCTURES[args["structure"]],
                stakes=_stakes(args),
                real_money=args["real_money"],
                action_timer_ms=args["timer_ms"],
                pause_between_hands_ms=args["pause_ms"],
                settings=_gathering(args["gathering_ms"]),
            ),
        )
        ctl.emit(
            {"table_id": reply.table_id, "version": reply.version},
            lambda: print(reply.table_id),
        )

    await _with_dealer(ctl, body)


def _gathering(gathering_ms: int | None) -> pb.TableConfig | None:
    """The ``settings`` that set the gathering delay (None: the table's default, the pause)."""
    return None if gathering_ms is None else pb.TableConfig(gathering_ms=gathering_ms)


def _stakes(args: dict[str, Any]) -> pb.Stakes:
    """The stakes ``create`` asks for: blinds for the button games, an ante (and the room's
    bring-in, twice the ante, unless given) for the stud-type games; fixed limit's bets default
    to the big blind (or twice the bring-in) and twice that."""
    stud = GAMES[args["game"]].forced_bets is ForcedBets.ANTE_BRING_IN
    small, big = args["blinds"] or ((0, 0) if stud else (1, 2))
    ante = args["ante"] if args["ante"] is not None else (1 if stud else 0)
    stakes = pb.Stakes(small_blind=small, big_blind=big, ante=ante, bring_in=args["bring_in"])
    if args["bets"]:
        stakes.small_bet, stakes.big_bet = args["bets"]
    elif args["structure"] == "fixed-limit":
        stakes.small_bet = stakes.big_blind or 2 * (args["bring_in"] or 2 * ante)
        stakes.big_bet = 2 * stakes.small_bet
    return stakes


@cli.command()
@_json_option
@_run
async def tables(ctl: Ctl) -> None:
    """List the tables: game, stakes, seats, money and state."""

    async def body(channel: grpc.aio.Channel) -> None:
        operator = ctl.dealer(channel, "operator", Role.OPERATOR)
        reply = await operator.call("ListTables", dpb.ListTablesRequest())
        # A quarantined table is not served (its GetTable is refused): its line says so.
        views = await asyncio.gather(
            *(_view_unless_quarantined(operator, summary) for summary in reply.tables)
        )
        rows = [
            {
                **as_json(summary),
                "real_money": view.config.real_money,
                "chips": sum(seat.stack for seat in view.seats),
                "hands_started": view.hands_started,
            }
            for summary, view in zip(reply.tables, views, strict=True)
        ]
        ctl.emit({"tables": rows}, lambda: _print_tables(ctl, reply.tables, views))

    await _with_dealer(ctl, body)


async def _view_unless_quarantined(operator: Client, summary: Any) -> dpb.TableView:
    if summary.quarantined:
        return dpb.TableView(table_id=summary.table_id)
    return await operator.table(summary.table_id)


def _print_tables(ctl: Ctl, summaries: Sequence[Any], views: Sequence[dpb.TableView]) -> None:
    if not summaries:
        ctl.out.print("no tables yet: `pokerctl create` opens one")
        return
    grid = Table(header_style="bold", show_edge=False)
    for column in ("table", "game", "structure", "stakes", "seats", "money", "chips", "hands"):
        grid.add_column(column)
    grid.add_column("state")
    for summary, view in zip(summaries, views, strict=True):
        state = "closed" if summary.closed else ("playing" if summary.hand_running else "waiting")
        state = "QUARANTINED" if summary.quarantined else state
        grid.add_row(
            summary.table_id,
            game_name(summary.game),
            structure_name(summary.structure),
            stakes_text(summary.stakes),
            f"{summary.players}/{summary.seat_count}",
            "real" if view.config.real_money else "play",
            str(sum(seat.stack for seat in view.seats)),
            str(view.hands_started),
            state,
        )
    ctl.out.print(grid)


_AS = click.option(
    "--as",
    "as_player",
    default="",
    show_default=False,
    help="See it as this player (his own cards); default: operator.",
)


def _viewer(ctl: Ctl, channel: grpc.aio.Channel, as_player: str) -> Client:
    if as_player:
        return ctl.dealer(channel, as_player, Role.PLAYER)
    return ctl.dealer(channel, "operator", Role.OPERATOR)


@cli.command()
@click.argument("table")
@_AS
@_json_option
@_run
async def show(ctl: Ctl, table: str, as_player: str) -> None:
    """The table now: seats, stacks, visible cards, the pot, whose turn and what he may do."""

    async def body(channel: grpc.aio.Channel) -> None:
        view = await _viewer(ctl, channel, as_player).table(table)
        ctl.emit(as_json(view), lambda: ctl.out.print(table_view(view)))

    await _with_dealer(ctl, body)


@cli.command()
@click.argument("table")
@_AS
@click.option("--from-seq", type=click.IntRange(0), default=0, help="Events after this version.")
@_json_option
@_run
async def watch(ctl: Ctl, table: str, as_player: str, from_seq: int) -> None:
    """Follow the table: every hand as it is played (Ctrl-C to stop)."""

    async def body(channel: grpc.aio.Channel) -> None:
        client = _viewer(ctl, channel, as_player)
        view = await client.table(table)
        narrator = Narrator({seat.seat: seat.player_id for seat in view.seats})
        stream = client.stub.WatchTable(
            dpb.WatchTableRequest(table_id=table, from_seq=from_seq), metadata=client.metadata
        )
        async for response in stream:
            event = response.event
            lines = narrator.lines(event)
            ctl.emit(as_json(event), partial(_print_lines, ctl, lines))

    await _with_dealer(ctl, body)


def _print_lines(ctl: Ctl, lines: Sequence[str]) -> None:
    for line in lines:
        ctl.out.print(line, markup=False)


@cli.command()
@click.argument("hand_id")
@_AS
@_json_option
@_run
async def history(ctl: Ctl, hand_id: str, as_player: str) -> None:
    """A finished hand in PHH (hand ids are <table>.<number>)."""

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await _viewer(ctl, channel, as_player).call(
            "GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id)
        )
        ctl.emit(as_json(reply), lambda: print(reply.phh))

    await _with_dealer(ctl, body)


@cli.command()
@click.argument("table")
@click.option("--as", "as_player", required=True, help="The seated player giving the seed.")
@click.option(
    "--seed",
    "seed_hex",
    default="",
    show_default=False,
    help="The seed in hex, 1 to 64 bytes (default: 32 random bytes, printed).",
)
@_json_option
@_run
async def seed(ctl: Ctl, table: str, as_player: str, seed_hex: str) -> None:
    """Give a player's seed for the next hand he is dealt into: mixed with the dealer's
    committed seed into the deck (docs/fairness.md); keep it to check the hand afterwards."""
    text = seed_hex or secrets.token_hex(32)

    async def body(channel: grpc.aio.Channel) -> None:
        client = ctl.dealer(channel, as_player, Role.PLAYER)
        view = await client.table(table)
        number = next((s.seat for s in view.seats if s.player_id == as_player), 0)
        if not number:
            raise CtlError(f"{as_player} has no seat at table {table}.")
        request = dpb.CommitSeedRequest(
            command_id=_cid(), table_id=table, seat=number, seed_hex=text
        )
        await client.call("CommitSeed", request)
        ctl.emit(
            {"table_id": table, "seat": number, "seed_hex": text},
            lambda: print(f"seat {number} at {table}: seed {text} for the next hand"),
        )

    await _with_dealer(ctl, body)


def _given_seeds(values: tuple[str, ...]) -> dict[int, bytes]:
    """``SEAT=HEX`` options as seeds by seat."""
    seeds: dict[int, bytes] = {}
    for value in values:
        seat_text, _, hex_text = value.partition("=")
        try:
            seeds[int(seat_text)] = bytes.fromhex(hex_text)
        except ValueError:
            raise click.BadParameter(f"{value!r} is not SEAT=HEX.", param_hint="--seed") from None
    return seeds


@cli.command("verify-hand")
@click.argument("hand_id")
@_AS
@click.option(
    "--seed",
    "seeds",
    multiple=True,
    show_default=False,
    help="SEAT=HEX: the seed that seat gave; the hand must have used it (repeatable).",
)
@_json_option
@_run
async def verify_hand(ctl: Ctl, hand_id: str, as_player: str, seeds: tuple[str, ...]) -> None:
    """Check a finished hand was dealt fair: its commitment, the deck its seeds derive and
    every card dealt (as the operator, or --as a player dealt in). Exit status 1 if not."""
    given = _given_seeds(seeds)

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await _viewer(ctl, channel, as_player).call(
            "GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id)
        )
        check = fairness_check.verify_hand(list(reply.events), given_seeds=given)
        data = {
            "hand_id": hand_id,
            "ok": check.ok,
            "problems": check.problems,
            "cards_checked": check.cards_checked,
            "unchecked": check.unchecked,
            "player_seeds": {str(seat): value.hex() for seat, value in check.player_seeds},
        }

        def human() -> None:
            for problem in check.problems:
                print(f"FAIL {problem}")
            if check.ok:
                print(
                    f"hand {hand_id} is fair: commitment, derivation and {check.cards_checked}"
                    f" cards checked ({len(check.player_seeds)} player seeds)"
                )
            if check.unchecked:
                print(f"note: {check.unchecked}")

        ctl.emit(data, human)
        if not check.ok:
            raise SystemExit(1)

    await _with_dealer(ctl, body)


@cli.command()
@click.argument("table")
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0, 600),
    default=0.0,
    help="Seconds the running hand may take to end (0: the dealer's --drain-timeout).",
)
@_json_option
@_run
async def drain(ctl: Ctl, table: str, timeout_s: float) -> None:
    """Move a table to another dealer: the dealer serving it (--dealer) finishes the running
    hand, deals no other, and releases the table, which another dealer takes over."""

    async def body(channel: grpc.aio.Channel) -> None:
        operator = ctl.dealer(channel, "operator", Role.OPERATOR)
        request = dpb.DrainTableRequest(table_id=table)
        if timeout_s:
            request.timeout.FromMilliseconds(round(timeout_s * 1000))
        # The call lasts as long as the hand: wait for the dealer's longest timeout, and more.
        reply = await operator.stub.DrainTable(
            request, metadata=operator.metadata, timeout=(timeout_s or 600.0) + 30.0
        )
        ended = "after its hand ended" if reply.hand_finished else "with its hand still running"
        ctl.emit(
            as_json(reply),
            lambda: print(f"{table} released at version {reply.version} {ended}"),
        )

    await _with_dealer(ctl, body)


@cli.command()
@click.argument("table")
@_json_option
@_run
async def close(ctl: Ctl, table: str) -> None:
    """Close a table: a running hand is voided, everyone cashed out."""

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await ctl.dealer(channel, "operator", Role.OPERATOR).call(
            "CloseTable", dpb.CloseTableRequest(command_id=_cid(), table_id=table)
        )
        ctl.emit(
            {"table_id": table, "version": reply.version},
            lambda: print(f"{table} closed at version {reply.version}"),
        )

    await _with_dealer(ctl, body)


@cli.command()
@click.argument("table")
@click.option("--count", type=click.IntRange(1, 10), default=3, help="How many bots.")
@click.option("--buy-in", type=click.IntRange(1), default=200, help="Each bot's buy-in.")
@click.option("--hands", type=click.IntRange(0), default=5, help="Hands the bots play.")
@click.option(
    "--think-ms",
    type=click.IntRange(0),
    default=300,
    help="Each bot's thinking time per turn, in ms.",
)
@click.option("--fund/--no-fund", default=True, help="Deposit each bot's buy-in first.")
@_json_option
@_run
async def bots(
    ctl: Ctl, table: str, *, count: int, buy_in: int, hands: int, think_ms: int, fund: bool
) -> None:
    """Seat bots, let them play, then stand them up and cash them out (also on Ctrl-C)."""

    async def body(channel: grpc.aio.Channel) -> None:
        operator = ctl.dealer(channel, "operator", Role.OPERATOR)
        view = await operator.table(table)
        if view.closed:
            raise CtlError(f"table {table} is closed")
        progress = _BotProgress(ctl, hands, {seat.seat: seat.player_id for seat in view.seats})
        session = BotSession(
            channel,
            ctl.keys(),
            table,
            hands=hands,
            think_ms=think_ms,
            on_event=progress.event,
            on_problem=progress.problem,
        )
        new = session.new_bots(view, count)
        if not new:
            raise CtlError(f"table {table} has no free seat")
        if fund:
            await fund_bots(new, buy_in, lambda name, amount: _fund(ctl, name, amount))
        loop = asyncio.get_running_loop()
        running = asyncio.current_task()
        presses = 0

        def interrupted() -> None:
            # The first Ctrl-C (or SIGTERM) stands the bots up and lets them finish their hand;
            # a second one stops at once (the bots still seated are named).
            nonlocal presses
            presses += 1
            if presses == 1:
                progress.problem("leaving: the bots stand up after their hand (Ctrl-C again: now)")
                session.leaving = asyncio.ensure_future(session.leave())
            elif running is not None:
                running.cancel()

        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, interrupted)
        try:
            with progress:
                result = await session.run(view, buy_in)
        except asyncio.CancelledError:
            seated = ", ".join(b.name for b in session.bots.values() if b.seated) or "none"
            raise CtlError(f"stopped at once; bots still seated: {seated}") from None
        finally:
            for number in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(number)
        summary = {
            "table_id": table,
            "hands": result.hands,
            "last_hand_id": result.last_hand_id,
            "bought_in": result.bought_in,
            "cashed_out": result.cashed_out,
            "left_seated": result.left_seated,
        }
        ctl.emit({"result": summary}, lambda: _print_bot_result(ctl, result))

    await _with_dealer(ctl, body)


class _BotProgress:
    """What ``bots`` prints as it goes: the hands as a person reads them, and hands played of
    the total (a progress bar on a terminal, a line per hand elsewhere)."""

    def __init__(self, ctl: Ctl, total: int, names: dict[int, str]) -> None:
        self._ctl = ctl
        self._total = total
        self._narrator = Narrator(names)
        self._done = 0
        self._bar: Progress | None = None
        if ctl.out.is_terminal and not ctl.json:
            self._bar = Progress(
                TextColumn("hands played"),
                BarColumn(),
                MofNCompleteColumn(),
                console=ctl.out,
                transient=True,
            )
            self._task = self._bar.add_task("hands", total=total)

    def __enter__(self) -> _BotProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def event(self, event: Any, done: int, total: int) -> None:
        lines = self._narrator.lines(event)
        if self._ctl.json:
            print(json.dumps({"event": as_json(event), "hands_done": done}), flush=True)
        else:
            _print_lines(self._ctl, lines)
            if done != self._done and self._bar is None:
                self._ctl.out.print(f"[{done}/{total} hands played]", markup=False)
        if self._bar is not None:
            self._bar.update(self._task, completed=done)
        self._done = done

    def problem(self, sentence: str) -> None:
        self._ctl.err.print(sentence, markup=False)


def _print_bot_result(ctl: Ctl, result: Any) -> None:
    for name, amount in result.bought_in.items():
        out = result.cashed_out.get(name)
        money = f"cashed out {out} ({out - amount:+d})" if out is not None else "STILL SEATED"
        ctl.out.print(f"{name}: bought in {amount}, {money}", markup=False)
    if result.last_hand_id:
        ctl.out.print(
            f"{result.hands} hand{'s' if result.hands != 1 else ''} played; "
            f"the last: `pokerctl history {result.last_hand_id}`",
            markup=False,
        )


async def _fund(ctl: Ctl, name: str, amount: int) -> None:
    """Give a new bot its buy-in through the wallet; a dealer on the dev wallet needs none."""
    request = wpb.DepositRequest(player_id=name, amount=amount, idempotency_key=_cid())
    try:
        await _wallet_call(ctl, "Deposit", request, "cashier", Role.CASHIER)
    except grpc.aio.AioRpcError as error:
        ctl.err.print(f"(no deposit for {name}: {error.code().name})", markup=False)


@cli.command()
@click.argument("subject")
@click.option(
    "--role", type=click.Choice([role.value for role in Role]), default="player", help="Its role."
)
@_json_option
@_run
async def token(ctl: Ctl, subject: str, role: str) -> None:
    """Print a bearer token for other gRPC clients (grpcurl ...).

    It is signed with the private key of the role's issuer in pokerctl's keyring (--token-keys;
    the local `make run` setup: var/token-keys/pokerctl.json): a player token needs the login
    service's key, a cashier token the payments service's, an operator token the operator's,
    a dealer token a dealer's; a keyring without it is refused with the key it needs."""
    text = issue_token(ctl.keys(), subject=subject, role=Role(role))
    ctl.emit({"token": text, "subject": subject, "role": role}, lambda: print(text))


def _money(balance: wpb.Balance) -> str:
    tables = ", ".join(f"{line.table_id}: {line.amount}" for line in balance.escrow)
    return (
        f"{balance.player_id}: cash {balance.cash}, held {balance.held}, "
        f"at tables {sum(line.amount for line in balance.escrow)}"
        + (f" ({tables})" if tables else "")
        + f", total {balance.total}"
    )


def _money_command(method: str) -> Callable[..., Coroutine[Any, Any, None]]:
    async def move(ctl: Ctl, player: str, amount: int, key: str) -> None:
        request_type = wpb.DepositRequest if method == "Deposit" else wpb.WithdrawRequest
        request = request_type(player_id=player, amount=amount, idempotency_key=key or _cid())
        reply = await _wallet_call(ctl, method, request, "cashier", Role.CASHIER)
        ctl.emit(
            as_json(reply),
            lambda: print(f"transaction {reply.transaction_id}; {_money(reply.balance)}"),
        )

    move.__doc__ = f"{method} money for a player (as the cashier; idempotent per key)."
    return move


for _name in ("deposit", "withdraw"):
    cli.command(_name, help=f"{_name.title()} money for a player (idempotent per --key).")(
        click.argument("player")(
            click.argument("amount", type=click.IntRange(1))(
                click.option(
                    "--key",
                    default="",
                    show_default=False,
                    help="Idempotency key (default: a fresh one).",
                )(_json_option(_run(_money_command(_name.title()))))
            )
        )
    )


@cli.command()
@click.argument("players", nargs=-1, required=True)
@_json_option
@_run
async def balance(ctl: Ctl, players: tuple[str, ...]) -> None:
    """Players' cash, held money and chips at tables."""
    replies = [
        (await _wallet_call(ctl, "GetBalance", wpb.GetBalanceRequest(player_id=p))).balance
        for p in players
    ]

    def human() -> None:
        for reply in replies:
            print(_money(reply))

    ctl.emit({"balances": [as_json(r) for r in replies]}, human)


@cli.command()
@click.argument("player", default="")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, help="How many, newest first.")
@_json_option
@_run
async def transactions(ctl: Ctl, player: str, limit: int) -> None:
    """A player's ledger (everyone's without a player), newest first."""
    request = wpb.ListTransactionsRequest(player_id=player, page_size=limit)
    reply = await _wallet_call(ctl, "ListTransactions", request)

    def human() -> None:
        grid = Table(header_style="bold", show_edge=False)
        for column in ("#", "when", "kind", "table@event", "postings"):
            grid.add_column(column)
        for tx in reply.transactions:
            kind = lpb.TransactionKind.Name(tx.kind).removeprefix("TRANSACTION_KIND_").lower()
            grid.add_row(
                str(tx.transaction_id),
                local_time(tx.occurred_at),
                kind,
                f"{tx.table_id}@{tx.position}" if tx.table_id else "",
                " ".join(f"{p.account} {p.amount:+d}" for p in tx.postings),
            )
        ctl.out.print(grid)

    ctl.emit(as_json(reply), human)


@cli.command()
@click.argument("table")
@_json_option
@_run
async def escrow(ctl: Ctl, table: str) -> None:
    """The money at a table, per player."""
    reply = await _wallet_call(ctl, "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table))

    def human() -> None:
        for line in reply.escrow:
            print(f"{line.player_id}: {line.amount}")
        state = "closed" if reply.closed else "open"
        print(f"total {reply.total} ({state}, applied up to event {reply.last_applied_position})")

    ctl.emit(as_json(reply), human)


@cli.command()
@_json_option
@_run
async def rake(ctl: Ctl) -> None:
    """The rake report by day, table and game."""
    request = wpb.GetRakeReportRequest(
        group_by=[
            wpb.RAKE_DIMENSION_BY_DAY,
            wpb.RAKE_DIMENSION_BY_TABLE,
            wpb.RAKE_DIMENSION_BY_GAME,
        ]
    )
    reply = await _wallet_call(ctl, "GetRakeReport", request)

    def human() -> None:
        grid = Table(header_style="bold", show_edge=False)
        for column in ("day (UTC)", "table", "game", "hands", "rake"):
            grid.add_column(column)
        for row in reply.rows:
            grid.add_row(row.day, row.table_id, row.game, str(row.hands), str(row.rake))
        ctl.out.print(grid)
        ctl.out.print(f"total rake {reply.total_rake} over {reply.total_hands} hands")

    ctl.emit(as_json(reply), human)


@cli.command()
@_json_option
@_run
async def audit(ctl: Ctl) -> None:
    """Check every invariant of the ledger against the tables."""
    reply = await _wallet_call(ctl, "Audit", wpb.AuditRequest())

    def human() -> None:
        for breach in reply.breaches:
            print(f"BREACH {breach.kind} {breach.subject}: {breach.message}")
        verdict = "clean" if reply.clean else f"{len(reply.breaches)} breaches"
        print(
            f"audit {verdict}: ledger event {reply.ledger_sequence}, {reply.tables_checked} tables"
        )

    ctl.emit(as_json(reply), human)


# --- the operator's tools over the table log itself (NATS, no dealer) ----------------------------


def _nats_options(function: _F) -> _F:
    """Where the table log is and as whom: ``--nats``, ``--nats-credentials``, ``--stream``,
    ``--subject-prefix`` (the dealer's names; the room's by default)."""
    options = [
        click.option(
            "--nats",
            "nats_url",
            envvar="POKER_NATS",
            default="nats://127.0.0.1:4222",
            help="NATS server URL(s), comma-separated (POKER_NATS).",
        ),
        click.option(
            "--nats-credentials",
            "nats_credentials",
            envvar="POKER_NATS_CREDENTIALS",
            default="",
            show_default=False,
            help="The operator's NATS credentials file (default: var/nats-credentials/admin.json"
            " of the home, if it exists).",
        ),
        click.option(
            "--stream",
            envvar="POKER_TABLE_STREAM",
            default=DEFAULT_TABLE_LOG.stream,
            help="The tables stream (the dealer's --stream).",
        ),
        click.option(
            "--subject-prefix",
            envvar="POKER_TABLE_SUBJECT_PREFIX",
            default=DEFAULT_TABLE_LOG.subject_prefix,
            help="Its subjects' prefix (the dealer's --subject-prefix).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _snapshot_options(function: _F) -> _F:
    """``--log-keys`` and ``--snapshot-bucket``: the dealers' sealed snapshots."""
    function = click.option(
        "--snapshot-bucket",
        envvar="POKER_SNAPSHOT_BUCKET",
        default=DEFAULT_TABLE_LOG.snapshot_bucket,
        help="The snapshots bucket (the dealer's --snapshot-bucket).",
    )(function)
    return click.option(
        "--log-keys",
        envvar="POKER_LOG_KEYS",
        default="",
        show_default=False,
        help="The room's public log keyring, to check the snapshots' seals and (verify) the"
        " records' (default: var/log-keys-public.json of the home, else var/log-keys.json, if"
        " either exists; none: snapshots are not read, seals not checked).",
    )(function)


def _log_keyring(ctl: Ctl, log_keys: str) -> Keyring | None:
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


def _deck_key_option(function: _F) -> _F:
    """``--deck-key``: the dealers' deck keys, to read the hands' decks, seeds and cards."""
    return click.option(
        "--deck-key",
        envvar="POKER_DECK_KEY",
        default="",
        show_default=False,
        help="The dealers' deck key ring, to read every hand's deck, seeds and cards (default:"
        " var/deck-key.json of the home, if it exists; none: the money is rebuilt, but the"
        " decks are not checked and the hands not exported).",
    )(function)


def _deck_keys(ctl: Ctl, path: str) -> DeckKeys | None:
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


async def _snapshot_store(
    ctl: Ctl, js: JetStreamContext, log_keys: str, bucket: str
) -> SealedSnapshotStore | None:
    """The dealers' snapshots, every seal checked before anything is unpickled; None without
    the log keys."""
    keyring = _log_keyring(ctl, log_keys)
    if keyring is None:
        return None
    inner = JetStreamSnapshotStore(js, SnapshotSettings(bucket=bucket))
    if not await inner.bind_bucket():
        return None  # no bucket: every replay starts from the first event
    return SealedSnapshotStore(
        inner,
        keyring,
        bucket=bucket,
        writer=Writer.DEALER,
        accept=(Writer.DEALER,),
        hmac_accepted=keyring.hmac_below is None,
    )


async def _start_of(
    snapshots: SealedSnapshotStore | None,
    table: str,
    to_version: int | None,
    deck_keys: DeckKeys | None = None,
) -> logtools.Start | None:
    """The snapshot a replay may start from (None: from the first event)."""
    if snapshots is None:
        return None
    try:
        start = await logtools.latest_snapshot(snapshots, table, deck_keys)
    except (SnapshotRefused, CorruptSnapshot):
        return None  # a snapshot is an optimization: the log is the truth
    except SNAPSHOT_DECODE_ERRORS:
        return None  # another engine's layout: the log is replayed
    if start is None or (to_version is not None and start.state.version > to_version):
        return None
    return start


def _tables_progress(ctl: Ctl, verb: str) -> Progress:
    """A progress bar of tables done (``verifying 3/40 tables``) on stderr, for people only: off
    with --json or when stderr is not a terminal."""
    return Progress(
        TextColumn(verb),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tables"),
        console=ctl.err,
        disable=ctl.json or not ctl.err.is_terminal,
    )


async def _ignore_nats_error(error: Exception) -> None:
    """nats-py's error callback: its default prints a traceback on stderr."""


async def _with_log(
    ctl: Ctl,
    log: dict[str, str],
    body: Callable[[JetStreamEventStore, JetStreamFeed, JetStreamContext], Awaitable[None]],
) -> None:
    """Run ``body(store, feed, js)`` with the table log's store and feed, connected with the
    operator's credentials (``log``: the options of :func:`_nats_options`)."""
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
            max_reconnect_attempts=0,
            error_cb=_ignore_nats_error,  # the failure is raised below, as one line
            **settings.connect_options(),
        )
    except NatsConfigError as error:
        raise CtlError(f"--nats-credentials: {error}") from None
    except (OSError, TimeoutError, nats.errors.Error) as error:
        where = redact_url(log["nats_url"])
        raise CtlError(f"NATS at {where} (--nats) cannot be reached: {error}") from None
    names = TableLogSettings(stream=log["stream"], subject_prefix=log["subject_prefix"])
    try:
        js = client.jetstream()
        stream = names.stream_settings
        await body(JetStreamEventStore(js, stream), JetStreamFeed(js, stream), js)
    finally:
        await client.close()


def _state_data(replayed: logtools.Replayed) -> dict[str, Any]:
    state = replayed.state
    seats = []
    if state is not None:
        for number in state.occupied():
            seat = state.seats[number - 1]
            assert seat is not None
            seats.append(
                {
                    "seat": number,
                    "player_id": seat.player_id,
                    "stack": live_stack(state, number),
                    "sitting_out": seat.sitting_out,
                }
            )
    return {
        "table_id": replayed.table_id,
        "version": replayed.version,
        "records": replayed.records,
        "hands_started": state.hands_started if state is not None else 0,
        "hand_running": state.hand_running if state is not None else False,
        "closed": state.closed if state is not None else False,
        "seats": seats,
        "chain_breaks": [broken.message for broken in replayed.breaks],
    }


@cli.command()
@click.argument("table")
@click.option("--to-version", type=click.IntRange(1), default=None, help="Stop after this event.")
@click.option("--from-scratch", is_flag=True, help="From the first event, not the snapshot.")
@_nats_options
@_snapshot_options
@_deck_key_option
@_json_option
@_run
async def replay(
    ctl: Ctl,
    table: str,
    *,
    to_version: int | None,
    from_scratch: bool,
    log_keys: str,
    snapshot_bucket: str,
    deck_key: str,
    **log: str,
) -> None:
    """Rebuild a table from its log on NATS (no dealer needed): from its latest snapshot (its
    seal checked with --log-keys) or its first event, to --to-version (default: now); its state
    there, the hash chain checked, and the PHH of the hands in the range (their cards read with
    --deck-key)."""
    keys = _deck_keys(ctl, deck_key)

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        records = await logtools.read_records(store, table)
        if not records:
            raise CtlError(f"There is no table {table} in the log.")
        snapshots = (
            None if from_scratch else await _snapshot_store(ctl, js, log_keys, snapshot_bucket)
        )
        start = await _start_of(snapshots, table, to_version, keys)
        replayed = logtools.replay_records(
            table, records, to_version=to_version, start=start, deck_keys=keys
        )
        phhs, count = logtools.export_phhs(replayed.hands)
        data = {
            **_state_data(replayed),
            "from_snapshot": start.state.version if start is not None else 0,
            "hands": count,
            "encrypted_hands": replayed.sealed_hands,
            "phhs": phhs,
        }

        def human() -> None:
            ctl.out.print(
                f"table {table} at version {replayed.version} ({replayed.records} records"
                + (f" after the snapshot at {data['from_snapshot']}" if start is not None else "")
                + "):"
                f" {data['hands_started']} hands started"
                + (", a hand running" if data["hand_running"] else "")
                + (", closed" if data["closed"] else ""),
                markup=False,
            )
            for seat in data["seats"]:
                away = " (sitting out)" if seat["sitting_out"] else ""
                print(f"  seat {seat['seat']}: {seat['player_id']} {seat['stack']}{away}")
            for message in data["chain_breaks"]:
                print(f"CHAIN {message}")
            if replayed.sealed_hands:
                print(f"{replayed.sealed_hands} hands encrypted: give --deck-key to show them")
            if phhs:
                print(phhs)

        ctl.emit(data, human)

    await _with_log(ctl, log, body)


async def _live_differences(ctl: Ctl, replayed: logtools.Replayed) -> list[str]:
    """Where the live dealer's and the wallet's view of the table differ from the rebuild."""
    state = replayed.state
    if state is None:
        return []
    differences: list[str] = []
    rebuilt = {seat["player_id"]: seat["stack"] for seat in _state_data(replayed)["seats"]}

    async def with_dealer(channel: grpc.aio.Channel) -> None:
        view = await ctl.dealer(channel, "operator", Role.OPERATOR).table(replayed.table_id)
        if view.version != replayed.version:
            differences.append(
                f"the dealer is at version {view.version}, the log at {replayed.version}"
            )
        live = {seat.player_id: seat.stack for seat in view.seats if seat.player_id}
        if live != rebuilt:
            differences.append(f"the dealer's stacks {live} are not the log's {rebuilt}")

    await _with_dealer(ctl, with_dealer)
    if not state.hand_running:
        reply = await _wallet_call(
            ctl, "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=replayed.table_id)
        )
        escrow = {line.player_id: line.amount for line in reply.escrow if line.amount}
        if escrow != {player: stack for player, stack in rebuilt.items() if stack}:
            differences.append(f"the wallet's escrow {escrow} is not the log's stacks {rebuilt}")
    return differences


@cli.command()
@click.argument("tables", nargs=-1)
@click.option("--no-live", is_flag=True, help="Do not compare with the dealer and the wallet.")
@_nats_options
@_snapshot_options
@_deck_key_option
@_json_option
@_run
async def verify(
    ctl: Ctl,
    tables: tuple[str, ...],
    *,
    no_live: bool,
    log_keys: str,
    snapshot_bucket: str,
    deck_key: str,
    **log: str,
) -> None:
    """Replay tables from scratch (default: every table): check the hash chain, every
    committed deck and (with --log-keys, the room's public keys) every seal, and compare with
    the live dealer's state and the wallet's escrow. A report per table; exit status 1 on any
    difference. The decks are checked with --deck-key (without it, the hands whose secrets are
    encrypted are counted, not checked)."""
    reports: list[dict[str, Any]] = []
    keys = _deck_keys(ctl, deck_key)

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        names = list(tables) or await feed.table_ids()
        keyring = _log_keyring(ctl, log_keys)
        snapshots = await _snapshot_store(ctl, js, log_keys, snapshot_bucket)
        with _tables_progress(ctl, "verifying") as progress:
            task = progress.add_task("tables", total=len(names))
            for name in names:
                log_records = await logtools.read_log(store, name)
                records = [(record.position, record.data) for record in log_records]
                replayed = logtools.replay_records(name, log_records, deck_keys=keys)
                problems = logtools.verify_replayed(replayed)
                if keyring is not None:
                    problems += logtools.seal_problems(name, log_records, keyring)
                start = await _start_of(snapshots, name, None, keys)
                if start is not None:
                    difference = logtools.snapshot_difference(name, records, start, keys)
                    problems += [difference] if difference is not None else []
                if not replayed.records:
                    problems.append(f"there is no table {name} in the log")
                elif not no_live:
                    problems += await _live_differences(ctl, replayed)
                reports.append(
                    {
                        "table_id": name,
                        "version": replayed.version,
                        "ok": not problems,
                        "hands": len(replayed.hands),
                        "encrypted_hands": replayed.sealed_hands,
                        "problems": problems,
                    }
                )
                progress.advance(task)

    await _with_log(ctl, log, body)

    def human() -> None:
        for report in reports:
            verdict = "ok" if report["ok"] else f"{len(report['problems'])} problems"
            print(
                f"{report['table_id']}: {verdict} (version {report['version']},"
                f" {report['hands']} hands)"
                + (
                    f"; {report['encrypted_hands']} hands' decks not checked: encrypted"
                    " (give --deck-key)"
                    if report["encrypted_hands"]
                    else ""
                )
            )
            for problem in report["problems"]:
                print(f"  - {problem}")

    ctl.emit({"tables": reports, "ok": all(r["ok"] for r in reports)}, human)
    if not all(report["ok"] for report in reports):
        raise SystemExit(1)


@cli.group("log")
def log_group() -> None:
    """The operator's repairs of the table log itself (NATS, the admin user; no dealer)."""


async def _stream_message(js: JetStreamContext, stream: str, position: int) -> Any:
    """The message at ``position`` of ``stream`` (any subject), or None."""
    try:
        return await js.get_msg(stream, position)
    except nats.js.errors.NotFoundError:
        return None


@log_group.command("remove-record")
@click.option(
    "--table",
    required=True,
    help="The table whose log holds the record (for a subject that is no table's, the"
    " subject's tail after the prefix: 0.t-1 for poker.table.0.t-1).",
)
@click.option(
    "--position", type=click.IntRange(1), required=True, help="The record's stream position."
)
@click.option(
    "--log-keys",
    envvar="POKER_LOG_KEYS",
    default="",
    show_default=False,
    help="The room's public log keyring, to check the record's seal (default:"
    " var/log-keys-public.json of the home, else var/log-keys.json, if it exists).",
)
@_nats_options
@_json_option
@_run
async def remove_record(ctl: Ctl, *, table: str, position: int, log_keys: str, **log: str) -> None:
    """Delete one record of the tables stream that the checks refuse, so that its table is
    served again: only a record on a subject that is no table's, or the first record of the
    table's log that a rebuild refuses (its seal, its bytes, the hash chain); anything else is
    refused, nothing deleted. Needs the operator's NATS user (the services may not delete)."""
    keyring = _log_keyring(ctl, log_keys)
    seals = TableSeals(keyring, Writer.DEALER) if keyring is not None else None  # reads only
    result: dict[str, Any] = {}

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        stream = log["stream"]
        message = await _stream_message(js, stream, position)
        if message is None:
            raise CtlError(f"There is no record at position {position} of {stream}.")
        headers = dict(message.headers or {})
        subject = str(message.subject)
        before: list[Record] = []
        if is_table_id(table):
            async with contextlib.aclosing(store.read(table)) as records:  # type: ignore[type-var]
                async for earlier in records:
                    if earlier.position >= position:
                        break
                    before.append(earlier)
        record = Record(
            table,
            position,
            str(headers.get("Nats-Msg-Id", "")).removeprefix(f"{table}:"),
            message.data or b"",
            writer_headers(headers),
        )
        verdict = logtools.judge_removal(
            table,
            position,
            subject,
            subject_prefix=log["subject_prefix"],
            before=before,
            record=record,
            seals=seals,
        )
        if not verdict.allowed:
            raise CtlError(f"Not removed: {verdict.why}.")
        try:
            # The server's default no_erase=false: the message's bytes are overwritten too.
            await js.delete_msg(stream, position)
        except nats.js.errors.APIError as error:
            raise CtlError(f"JetStream refused to delete it: {error.description}") from None
        result.update(
            {
                "removed": True,
                "stream": stream,
                "position": position,
                "subject": subject,
                "why": verdict.why,
            }
        )

    await _with_log(ctl, log, body)
    ctl.emit(
        result,
        lambda: print(
            f"removed the record at position {position} of {result['stream']}"
            f" ({result['subject']}): {result['why']}"
        ),
    )


def _ms(moment: datetime | None) -> int | None:
    """A --since/--until moment as unix ms (naive: UTC)."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


@cli.command()
@click.option("--table", "table", default="", show_default=False, help="This table's hands.")
@click.option("--player", "player", default="", show_default=False, help="This player's hands.")
@click.option("--since", type=click.DateTime(), default=None, help="Hands started from (UTC).")
@click.option("--until", type=click.DateTime(), default=None, help="Hands started before (UTC).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default="-", help="The file.")
@_nats_options
@_deck_key_option
@_json_option
@_run
async def export(
    ctl: Ctl,
    *,
    table: str,
    player: str,
    since: datetime | None,
    until: datetime | None,
    output: str,
    deck_key: str,
    **log: str,
) -> None:
    """The finished hands of a table or of a player (every table) as one .phhs file, read from
    the log on NATS (their cards with --deck-key: without it, hands dealt since the decks were
    encrypted are left out)."""
    if bool(table) == bool(player):
        raise click.UsageError("Give --table or --player (one of them).")
    keys = _deck_keys(ctl, deck_key)
    texts: list[str] = []
    total = 0

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        nonlocal total
        names = [table] if table else await feed.table_ids()
        with _tables_progress(ctl, "exporting") as progress:
            task = progress.add_task("tables", total=len(names))
            hands: list[logtools.HandRecord] = []
            for name in names:
                hands += logtools.replay_records(
                    name, await logtools.read_records(store, name), deck_keys=keys
                ).hands
                progress.advance(task)
        text, total = logtools.export_phhs(
            hands, player=player or None, since_ms=_ms(since), until_ms=_ms(until)
        )
        texts.append(text)

    await _with_log(ctl, log, body)
    text = texts[0] if texts else ""
    if output == "-":
        ctl.emit({"hands": total, "phhs": text}, lambda: print(text))
        return
    Path(output).write_text(text, encoding="utf-8")
    ctl.emit(
        {"hands": total, "output": output}, lambda: print(f"{total} hands written to {output}")
    )


def _cid() -> str:
    return uuid.uuid4().hex


def main(argv: Sequence[str] | None = None) -> None:
    """The ``pokerctl`` entry point: one line on stderr for every error, never a traceback."""
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="pokerctl",
            default_map=ctlconfig.load_config_file(),
            standalone_mode=False,
        )
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except CtlError as error:
        _fail(str(error))
    except NoSigningKey as error:
        _fail(f"{error}; give pokerctl a keyring holding it: --token-keys PATH (POKER_TOKEN_KEYS)")
    except grpc.aio.AioRpcError as error:
        _fail(ctlconfig.rpc_sentence(error))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:  # `pokerctl watch t | head`
        sys.stderr.close()


def _fail(sentence: str) -> None:
    print(f"pokerctl: {sentence}", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
