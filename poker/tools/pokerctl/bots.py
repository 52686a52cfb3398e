"""``pokerctl bots``: seat bot players at a table, let them play a number of hands, then stand
them up and cash them out (also on Ctrl-C); the bots themselves are :mod:`poker.tools.botrun`'s."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import click
import grpc
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from poker.servicekit.tokens import Role
from poker.tools.botrun import BotSession, fund_bots
from poker.tools.ctlconfig import CtlError
from poker.tools.pokerctl.common import (
    Ctl,
    cid,
    json_option,
    print_lines,
    run,
    wallet_call,
    with_dealer,
)
from poker.tools.render import (
    Narrator,
    as_json,
)
from poker.v1 import wallet_pb2 as wpb


@click.command()
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
@json_option
@run
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

    await with_dealer(ctl, body)


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
            print_lines(self._ctl, lines)
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
    request = wpb.DepositRequest(player_id=name, amount=amount, idempotency_key=cid())
    try:
        await wallet_call(ctl, "Deposit", request, "cashier", Role.CASHIER)
    except grpc.aio.AioRpcError as error:
        ctl.err.print(f"(no deposit for {name}: {error.code().name})", markup=False)


#: The bots' command, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (bots,)
