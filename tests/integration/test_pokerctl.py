"""``pokerctl`` (a real child process) against a real dealer and nats-server: a newcomer's first
steps - create a table, seat bots that play a few hands, read a hand history - for a button game,
a stud game and a draw game."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

import pytest

from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ROOT

SECRET = new_secret()


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        yield harness


async def pokerctl(dealer: DealerHarness, *args: str) -> str:
    """Run ``pokerctl ARGS`` (the dealer keeps serving in this loop meanwhile); its stdout."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "poker.tools.pokerctl",
        "--address",
        f"127.0.0.1:{dealer.port}",
        *args,
        cwd=ROOT,
        env={**os.environ, "POKER_TOKEN_SECRET": SECRET.hex()},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.parametrize(
    ("game", "structure", "header"),
    [
        ("holdem", "no-limit", ('variant = "NT"', "blinds_or_straddles = [1, 2")),
        ("seven-card-stud", "fixed-limit", ('variant = "F7S"', "bring_in = 2")),
        ("deuce-seven-triple-draw", "fixed-limit", ('variant = "F2L3D"', "big_bet = 4")),
    ],
)
async def test_create_bots_and_history(
    dealer: DealerHarness, game: str, structure: str, header: tuple[str, str]
) -> None:
    table_id = (
        await pokerctl(
            dealer, "create", "--game", game, "--structure", structure, "--pause-ms", "1"
        )
    ).strip()
    played = await pokerctl(
        dealer, "bots", table_id, "--hands", "2", "--think-ms", "0", "--no-fund"
    )
    assert "sits in seat" in played
    view = await dealer.client("op", Role.OPERATOR).table(table_id)
    assert view.hands_started >= 2
    assert len(view.seats) == 3
    history = await pokerctl(dealer, "history", f"{table_id}.2")
    assert all(line in history for line in header)
    assert "finishing_stacks" in history
