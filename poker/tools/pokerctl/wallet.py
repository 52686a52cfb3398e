"""The wallet's commands: move money (``deposit``, ``withdraw``: as the cashier, the payments
service's role) and read it (``balance``, ``transactions``, ``escrow``, ``rake``, ``audit``: as
the operator)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import click

from poker.servicekit.tokens import Role
from poker.tools.pokerctl.common import (
    Ctl,
    cid,
    json_option,
    run,
    wallet_call,
)
from poker.tools.render import as_json, money_text, rake_grid, transactions_grid
from poker.v1 import wallet_pb2 as wpb


def _money_command(method: str) -> Callable[..., Coroutine[Any, Any, None]]:
    async def move(ctl: Ctl, player: str, amount: int, key: str) -> None:
        request_type = wpb.DepositRequest if method == "Deposit" else wpb.WithdrawRequest
        request = request_type(player_id=player, amount=amount, idempotency_key=key or cid())
        reply = await wallet_call(ctl, method, request, "cashier", Role.CASHIER)
        ctl.emit(
            as_json(reply),
            lambda: print(f"transaction {reply.transaction_id}; {money_text(reply.balance)}"),
        )

    move.__doc__ = f"{method} money for a player (as the cashier; idempotent per key)."
    return move


def _money_move(name: str) -> click.Command:
    """``deposit`` or ``withdraw``: PLAYER AMOUNT [--key K]."""
    return click.command(name, help=f"{name.title()} money for a player (idempotent per --key).")(
        click.argument("player")(
            click.argument("amount", type=click.IntRange(1))(
                click.option(
                    "--key",
                    default="",
                    show_default=False,
                    help="Idempotency key (default: a fresh one).",
                )(json_option(run(_money_command(name.title()))))
            )
        )
    )


deposit = _money_move("deposit")
withdraw = _money_move("withdraw")


@click.command()
@click.argument("players", nargs=-1, required=True)
@json_option
@run
async def balance(ctl: Ctl, players: tuple[str, ...]) -> None:
    """Players' cash, held money and chips at tables."""
    replies = [
        (await wallet_call(ctl, "GetBalance", wpb.GetBalanceRequest(player_id=p))).balance
        for p in players
    ]

    def human() -> None:
        for reply in replies:
            print(money_text(reply))

    ctl.emit({"balances": [as_json(r) for r in replies]}, human)


@click.command()
@click.argument("player", default="")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, help="How many, newest first.")
@click.option(
    "--page-token",
    default="",
    help="Continue from the 'next page' token a previous call printed (older transactions).",
)
@json_option
@run
async def transactions(ctl: Ctl, player: str, limit: int, page_token: str) -> None:
    """A player's ledger (everyone's without a player), newest first, one page: the wallet reads
    a bounded stretch of its journal per page, so a page may hold fewer (then the next token
    goes on)."""
    request = wpb.ListTransactionsRequest(player_id=player, page_size=limit, page_token=page_token)
    reply = await wallet_call(ctl, "ListTransactions", request)

    def human() -> None:
        ctl.out.print(transactions_grid(reply.transactions))
        if reply.next_page_token:
            ctl.out.print(f"next page: --page-token {reply.next_page_token}")

    ctl.emit(as_json(reply), human)


@click.command()
@click.argument("table")
@json_option
@run
async def escrow(ctl: Ctl, table: str) -> None:
    """The money at a table, per player."""
    reply = await wallet_call(ctl, "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table))

    def human() -> None:
        for line in reply.escrow:
            print(f"{line.player_id}: {line.amount}")
        state = "closed" if reply.closed else "open"
        print(f"total {reply.total} ({state}, applied up to event {reply.last_applied_position})")

    ctl.emit(as_json(reply), human)


@click.command()
@json_option
@run
async def rake(ctl: Ctl) -> None:
    """The rake report by day, table and game."""
    request = wpb.GetRakeReportRequest(
        group_by=[
            wpb.RAKE_DIMENSION_BY_DAY,
            wpb.RAKE_DIMENSION_BY_TABLE,
            wpb.RAKE_DIMENSION_BY_GAME,
        ]
    )
    reply = await wallet_call(ctl, "GetRakeReport", request)

    def human() -> None:
        ctl.out.print(rake_grid(reply.rows))
        ctl.out.print(f"total rake {reply.total_rake} over {reply.total_hands} hands")

    ctl.emit(as_json(reply), human)


@click.command()
@click.option(
    "--deep",
    is_flag=True,
    help="From scratch: replay the whole journal and re-read every table's log (costs the "
    "whole history, about 2 s per 1,000 hands; one at a time).",
)
@click.option(
    "--deep-timeout",
    type=click.FloatRange(1, 86_400),
    default=3_600.0,
    show_default=True,
    help="Seconds to wait for a --deep audit.",
)
@json_option
@run
async def audit(ctl: Ctl, deep: bool, deep_timeout: float) -> None:
    """Check every invariant of the ledger against the tables (as the wallet keeps them while
    it consumes; --deep recomputes them from the whole history)."""
    reply = await wallet_call(
        ctl, "Audit", wpb.AuditRequest(deep=deep), timeout_s=deep_timeout if deep else None
    )

    def human() -> None:
        for breach in reply.breaches:
            print(f"BREACH {breach.kind} {breach.subject}: {breach.message}")
        verdict = "clean" if reply.clean else f"{len(reply.breaches)} breaches"
        print(
            f"audit {verdict}: ledger event {reply.ledger_sequence}, {reply.tables_checked} tables"
        )

    ctl.emit(as_json(reply), human)


# --- the operator's tools over the table log itself (NATS, no dealer) ----------------------------


#: The wallet's commands, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (
    deposit,
    withdraw,
    balance,
    transactions,
    escrow,
    rake,
    audit,
)
