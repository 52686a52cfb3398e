"""The operator's commands on the dealer: open a table (``create``), list them (``tables``),
hand one to another dealer (``drain``), close one (``close``), and print a token for other gRPC
clients (``token``). The wallet's are in :mod:`poker.tools.pokerctl.wallet`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import click
import grpc

from poker.engine.games import GAMES, ForcedBets
from poker.servicekit.tokens import Role, issue_token
from poker.tools.client import Client
from poker.tools.pokerctl.common import (
    Ctl,
    cid,
    json_option,
    run,
    with_dealer,
)
from poker.tools.render import (
    STRUCTURES,
    as_json,
    tables_grid,
)
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb


class Pair(click.ParamType):  # type: ignore[type-arg]
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


#: ``--blinds`` and ``--bets``.
PAIR = Pair()


_GAME_HELP = "The game: " + ", ".join(f"{key} ({game.name})" for key, game in GAMES.items())


@click.command()
@click.option(
    "--game", type=click.Choice(sorted(GAMES)), metavar="GAME", default="holdem", help=_GAME_HELP
)
@click.option(
    "--structure",
    type=click.Choice(sorted(STRUCTURES)),
    default="no-limit",
    help="The betting structure.",
)
@click.option("--blinds", type=PAIR, default=None, help="Button games' blinds [default: 1/2].")
@click.option(
    "--ante", type=click.IntRange(0), default=None, help="The ante [default: 1 in stud, else 0]."
)
@click.option("--bring-in", type=click.IntRange(0), default=0, help="Stud; 0: twice the ante.")
@click.option(
    "--bets",
    type=PAIR,
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
@json_option
@run
async def create(ctl: Ctl, **args: Any) -> None:
    """Open a table; prints its id."""

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await ctl.dealer(channel, "operator", Role.OPERATOR).call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id=cid(),
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

    await with_dealer(ctl, body)


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


#: The most pages ``tables --all`` follows (1,000 tables a page: a million tables).
MAX_PAGES = 1000
_MONEY = {"real": dpb.MONEY_FILTER_REAL, "play": dpb.MONEY_FILTER_PLAY}


@click.command()
@click.option(
    "--page-size", type=click.IntRange(1, 1000), default=100, help="Tables a page (1-1000)."
)
@click.option("--page-token", default="", help="The page a previous listing ended with.")
@click.option("--all", "every", is_flag=True, help="Follow the pages to the last one.")
@click.option("--game", default="", help="Only this game's tables (e.g. holdem, omaha).")
@click.option("--big-blind", type=click.IntRange(0), default=0, help="Only these stakes.")
@click.option("--money", type=click.Choice(sorted(_MONEY)), help="Only real- or play-money.")
@click.option("--free-seats", is_flag=True, help="Only tables with a seat free.")
@json_option
@run
async def tables(
    ctl: Ctl,
    *,
    page_size: int,
    page_token: str,
    every: bool,
    game: str,
    big_blind: int,
    money: str | None,
    free_seats: bool,
) -> None:
    """List the open tables, a page at a time (--all: every page): game, stakes, seats, money
    and state. The next page's token is printed (and in --json, ``next_page_token``)."""
    request = dpb.ListTablesRequest(
        page_size=page_size,
        page_token=page_token,
        game=game,
        big_blind=big_blind,
        money=_MONEY[money] if money else dpb.MONEY_FILTER_UNSPECIFIED,
        has_free_seats=free_seats,
    )

    async def body(channel: grpc.aio.Channel) -> None:
        operator = ctl.dealer(channel, "operator", Role.OPERATOR)
        summaries: list[Any] = []
        for _ in range(MAX_PAGES):
            reply = await operator.call("ListTables", request)
            summaries += reply.tables
            request.page_token = reply.next_page_token
            if not every or not request.page_token:
                break
        # A quarantined table is not served (its GetTable is refused): its line says so.
        views = await asyncio.gather(
            *(_view_unless_quarantined(operator, summary) for summary in summaries)
        )
        rows = [
            {
                **as_json(summary),
                "real_money": summary.real_money,
                "chips": sum(seat.stack for seat in view.seats),
                "hands_started": view.hands_started,
            }
            for summary, view in zip(summaries, views, strict=True)
        ]
        token = request.page_token
        ctl.emit(
            {"tables": rows, "next_page_token": token},
            lambda: _print_tables(ctl, summaries, views, token),
        )

    await with_dealer(ctl, body)


async def _view_unless_quarantined(operator: Client, summary: Any) -> dpb.TableView:
    if summary.quarantined:
        return dpb.TableView(table_id=summary.table_id)
    return await operator.table(summary.table_id)


def _print_tables(
    ctl: Ctl, summaries: Sequence[Any], views: Sequence[dpb.TableView], token: str
) -> None:
    if not summaries:
        ctl.out.print("no open tables: `pokerctl create` opens one")
    else:
        ctl.out.print(tables_grid(summaries, views))
    if token:
        ctl.out.print(f"more: pokerctl tables --page-token {token} (or --all)")


@click.command()
@click.argument("table")
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0, 600),
    default=0.0,
    help="Seconds the running hand may take to end (0: the dealer's --drain-timeout).",
)
@json_option
@run
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

    await with_dealer(ctl, body)


@click.command()
@click.argument("table")
@json_option
@run
async def close(ctl: Ctl, table: str) -> None:
    """Close a table: a running hand is voided, everyone cashed out."""

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await ctl.dealer(channel, "operator", Role.OPERATOR).call(
            "CloseTable", dpb.CloseTableRequest(command_id=cid(), table_id=table)
        )
        ctl.emit(
            {"table_id": table, "version": reply.version},
            lambda: print(f"{table} closed at version {reply.version}"),
        )

    await with_dealer(ctl, body)


@click.command()
@click.argument("subject")
@click.option(
    "--role", type=click.Choice([role.value for role in Role]), default="player", help="Its role."
)
@json_option
@run
async def token(ctl: Ctl, subject: str, role: str) -> None:
    """Print a bearer token for other gRPC clients (grpcurl ...).

    It is signed with the private key of the role's issuer in pokerctl's keyring (--token-keys;
    the local `make run` setup: var/token-keys/pokerctl.json): a player token needs the login
    service's key, a cashier token the payments service's, an operator token the operator's,
    a dealer token a dealer's; a keyring without it is refused with the key it needs."""
    text = issue_token(ctl.keys(), subject=subject, role=Role(role))
    ctl.emit({"token": text, "subject": subject, "role": role}, lambda: print(text))


#: The operator's dealer commands, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (create, tables, drain, close, token)
