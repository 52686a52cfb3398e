"""The wallet's commands: move money (``deposit``, ``withdraw``: as the cashier, the payments
service's role) and read it (``balance``, ``transactions``, ``escrow``, ``rake``, ``audit``: as
the operator)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import click
from rich.table import Table

from poker.servicekit.tokens import Role
from poker.tools.pokerctl.common import (
    Ctl,
    cid,
    json_option,
    run,
    wallet_call,
)
from poker.tools.render import (
    as_json,
    local_time,
)
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb


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
        request = request_type(player_id=player, amount=amount, idempotency_key=key or cid())
        reply = await wallet_call(ctl, method, request, "cashier", Role.CASHIER)
        ctl.emit(
            as_json(reply),
            lambda: print(f"transaction {reply.transaction_id}; {_money(reply.balance)}"),
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
            print(_money(reply))

    ctl.emit({"balances": [as_json(r) for r in replies]}, human)


@click.command()
@click.argument("player", default="")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, help="How many, newest first.")
@json_option
@run
async def transactions(ctl: Ctl, player: str, limit: int) -> None:
    """A player's ledger (everyone's without a player), newest first."""
    request = wpb.ListTransactionsRequest(player_id=player, page_size=limit)
    reply = await wallet_call(ctl, "ListTransactions", request)

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
        grid = Table(header_style="bold", show_edge=False)
        for column in ("day (UTC)", "table", "game", "hands", "rake"):
            grid.add_column(column)
        for row in reply.rows:
            grid.add_row(row.day, row.table_id, row.game, str(row.hands), str(row.rake))
        ctl.out.print(grid)
        ctl.out.print(f"total rake {reply.total_rake} over {reply.total_hands} hands")

    ctl.emit(as_json(reply), human)


@click.command()
@json_option
@run
async def audit(ctl: Ctl) -> None:
    """Check every invariant of the ledger against the tables."""
    reply = await wallet_call(ctl, "Audit", wpb.AuditRequest())

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
