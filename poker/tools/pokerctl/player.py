"""What a player (or anyone watching) does: see a table (``show``), follow it (``watch``), read a
finished hand (``history``), give a seed for his next hand's deck (``seed``) and check that a
hand was dealt fair (``verify-hand``). Each runs as the operator, or ``--as`` a player (his own
cards)."""

from __future__ import annotations

import secrets
from functools import partial

import click
import grpc

from poker.engine import fairness_check
from poker.servicekit.tokens import Role
from poker.tools.client import Client
from poker.tools.ctlconfig import CtlError
from poker.tools.pokerctl.common import (
    Ctl,
    cid,
    json_option,
    print_lines,
    run,
    with_dealer,
)
from poker.tools.render import (
    Narrator,
    as_json,
    table_view,
)
from poker.v1 import dealer_pb2 as dpb

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


@click.command()
@click.argument("table")
@_AS
@json_option
@run
async def show(ctl: Ctl, table: str, as_player: str) -> None:
    """The table now: seats, stacks, visible cards, the pot, whose turn and what he may do."""

    async def body(channel: grpc.aio.Channel) -> None:
        view = await _viewer(ctl, channel, as_player).table(table)
        ctl.emit(as_json(view), lambda: ctl.out.print(table_view(view)))

    await with_dealer(ctl, body)


@click.command()
@click.argument("table")
@_AS
@click.option("--from-seq", type=click.IntRange(0), default=0, help="Events after this version.")
@json_option
@run
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
            ctl.emit(as_json(event), partial(print_lines, ctl, lines))

    await with_dealer(ctl, body)


@click.command()
@click.argument("hand_id")
@_AS
@json_option
@run
async def history(ctl: Ctl, hand_id: str, as_player: str) -> None:
    """A finished hand in PHH (hand ids are <table>.<number>)."""

    async def body(channel: grpc.aio.Channel) -> None:
        reply = await _viewer(ctl, channel, as_player).call(
            "GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id)
        )
        ctl.emit(as_json(reply), lambda: print(reply.phh))

    await with_dealer(ctl, body)


@click.command()
@click.argument("table")
@click.option("--as", "as_player", required=True, help="The seated player giving the seed.")
@click.option(
    "--seed",
    "seed_hex",
    default="",
    show_default=False,
    help="The seed in hex, 1 to 64 bytes (default: 32 random bytes, printed).",
)
@json_option
@run
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
            command_id=cid(), table_id=table, seat=number, seed_hex=text
        )
        await client.call("CommitSeed", request)
        ctl.emit(
            {"table_id": table, "seat": number, "seed_hex": text},
            lambda: print(f"seat {number} at {table}: seed {text} for the next hand"),
        )

    await with_dealer(ctl, body)


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


@click.command("verify-hand")
@click.argument("hand_id")
@_AS
@click.option(
    "--seed",
    "seeds",
    multiple=True,
    show_default=False,
    help="SEAT=HEX: the seed that seat gave; the hand must have used it (repeatable).",
)
@json_option
@run
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

    await with_dealer(ctl, body)


#: The player's commands, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (show, watch, history, seed, verify_hand)
