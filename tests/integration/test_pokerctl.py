"""``pokerctl`` as a newcomer runs it (a real child process) against a real wallet, dealer and
nats-server: create a table, seat bots that are all dealt in from the first hand, play a few
hands and leave (also on Ctrl-C), a second run on the same table, the hand history; errors in
one line (bad arguments, a service that is down), ``--json`` that parses, and the token secret
found from any folder."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from poker.dealer.wallet_client import GrpcWallet
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ROOT
from poker.testing.wallet import WalletHarness, wallet_settings

SECRET = new_secret()


@dataclass
class Room:
    """A wallet and a dealer using it."""

    wallet: WalletHarness
    dealer: DealerHarness

    def flags(self) -> list[str]:
        return ["--dealer", f"127.0.0.1:{self.dealer.port}", "--wallet", self.wallet.address]


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    settings = namespace_settings(nats_server.url, SECRET)
    async with WalletHarness(wallet_settings(settings, hold_ttl_s=60)) as wallet:
        port = GrpcWallet([wallet.address], settings.token_secret)
        try:
            async with DealerHarness(settings, wallet=port) as dealer:
                yield Room(wallet, dealer)
        finally:
            await port.close()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POKER_", "POKERCTL_"))}
    return {**env, "POKER_TOKEN_SECRET": SECRET.hex(), "COLUMNS": "200", **extra}


async def _start(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "poker.tools.pokerctl",
        *args,
        cwd=cwd,
        env=env if env is not None else _env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def pokerctl_result(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[int, str, str]:
    """Run ``pokerctl ARGS`` (the services keep serving in this loop meanwhile)."""
    process = await _start(*args, env=env, cwd=cwd)
    out, err = await asyncio.wait_for(process.communicate(), timeout=90)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def pokerctl(room: Room, *args: str, env: dict[str, str] | None = None) -> str:
    """``pokerctl ARGS`` that must succeed; its stdout."""
    code, out, err = await pokerctl_result(*room.flags(), *args, env=env)
    assert code == 0, err
    return out


async def new_table(room: Room, game: str = "holdem", structure: str = "no-limit") -> str:
    out = await pokerctl(
        room, "create", "--game", game, "--structure", structure, "--pause-ms", "300"
    )
    return out.strip()


def first_hand_dealt(output: str) -> int:
    """How many players the first hand of a ``bots`` run dealt in (the bots sit down at once and
    the table's gathering delay holds its first hand until they have: all of them)."""
    line = next(line for line in output.splitlines() if line.startswith("button "))
    return len(line.split("dealt in: ", 1)[1].split(", "))


@pytest.mark.parametrize(
    ("game", "structure", "count", "header"),
    [
        ("holdem", "no-limit", 3, ('variant = "NT"', "blinds_or_straddles = [1, 2")),
        ("seven-card-stud", "fixed-limit", 3, ('variant = "F7S"', "bring_in = 2")),
        ("deuce-seven-triple-draw", "fixed-limit", 3, ('variant = "F2L3D"', "big_bet = 4")),
        ("draw32", "pot-limit", 4, ("finishing_stacks",)),
    ],
)
async def test_bots_are_dealt_in_play_and_leave(
    room: Room, game: str, structure: str, count: int, header: tuple[str, ...]
) -> None:
    table_id = await new_table(room, game, structure)
    played = await pokerctl(
        room, "bots", table_id, "--count", str(count), "--hands", "2", "--think-ms", "0"
    )
    assert first_hand_dealt(played) == count, played
    assert "hand over" in played
    assert "STILL SEATED" not in played
    view = await room.dealer.client("op", Role.OPERATOR).table(table_id)
    assert view.hands_started >= 2
    assert not view.seats, "every bot stood up and cashed out"
    history = await pokerctl(room, "history", f"{table_id}.2")
    assert all(line in history for line in header)
    assert "finishing_stacks" in history


async def test_a_second_run_on_the_same_table_works(room: Room) -> None:
    table_id = await new_table(room)
    for _ in range(2):
        played = await pokerctl(
            room, "bots", table_id, "--count", "3", "--hands", "1", "--think-ms", "0"
        )
        assert first_hand_dealt(played) == 3, played
    view = await room.dealer.client("op", Role.OPERATOR).table(table_id)
    assert not view.seats
    assert view.hands_started >= 2


async def test_ctrl_c_stands_the_bots_up(room: Room) -> None:
    table_id = await new_table(room)
    process = await _start(*room.flags(), "bots", table_id, "--hands", "1000", "--think-ms", "20")
    assert process.stdout is not None
    started = 0
    while started < 2:  # two hands under way
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert line, "pokerctl bots ended early"
        started += line.startswith("── hand ")
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert "Traceback" not in err.decode()
    view = await room.dealer.client("op", Role.OPERATOR).table(table_id)
    assert not view.seats, out.decode()[-2000:]


async def test_json_on_every_command_parses(room: Room) -> None:
    created = json.loads(await pokerctl(room, "create", "--pause-ms", "300", "--json"))
    table_id = created["table_id"]
    lines = await pokerctl(room, "bots", table_id, "--hands", "1", "--think-ms", "0", "--json")
    objects = [json.loads(line) for line in lines.splitlines()]
    assert objects[-1]["result"]["left_seated"] == []
    assert objects[-1]["result"]["hands"] == 1
    assert any("hand_started" in o.get("event", {}) for o in objects)
    tables = json.loads(await pokerctl(room, "tables", "--json"))
    assert table_id in [row["table_id"] for row in tables["tables"]]
    view = json.loads(await pokerctl(room, "show", table_id, "--json"))
    assert view["table_id"] == table_id
    assert "gathering_ms" not in view["config"], "unset: the pause"
    gathered = json.loads(await pokerctl(room, "create", "--gathering-ms", "250", "--json"))
    shown = json.loads(await pokerctl(room, "show", gathered["table_id"], "--json"))
    assert int(shown["config"]["gathering_ms"]) == 250
    for command in (
        ["history", f"{table_id}.1"],
        ["deposit", "carol", "500"],
        ["balance", "carol"],
        ["transactions", "carol"],
        ["transactions", "carol", "--limit", "1", "--page-token", "1"],
        ["escrow", table_id],
        ["rake"],
        ["audit"],
        ["audit", "--deep"],
        ["token", "carol"],
    ):
        json.loads(await pokerctl(room, *command, "--json"))


async def test_show_and_tables_read_like_a_table(room: Room) -> None:
    table_id = await new_table(room)
    shown = await pokerctl(room, "show", table_id)
    assert "Texas Hold'em no-limit, blinds 1/2" in shown
    listed = await pokerctl(room, "tables")
    assert re.search(r"table\W+game\W+structure\W+stakes", listed)
    assert table_id in listed


async def test_tables_pages_through_every_open_table(room: Room) -> None:
    created = {await new_table(room) for _ in range(3)}
    every = json.loads(await pokerctl(room, "tables", "--all", "--page-size", "1", "--json"))
    ids = [row["table_id"] for row in every["tables"]]
    assert created <= set(ids) and len(ids) == len(set(ids)) and not every["next_page_token"]
    first = json.loads(await pokerctl(room, "tables", "--page-size", "1", "--json"))
    assert len(first["tables"]) == 1 and first["next_page_token"]
    shown = await pokerctl(room, "tables", "--page-size", "1")
    assert "more: pokerctl tables --page-token" in shown
    following = json.loads(
        await pokerctl(
            room, "tables", "--page-size", "1", "--page-token", first["next_page_token"], "--json"
        )
    )
    assert following["tables"][0]["table_id"] > first["tables"][0]["table_id"]
    none = json.loads(await pokerctl(room, "tables", "--game", "razz", "--json"))
    assert none["tables"] == []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_errors_are_one_line_without_traceback(room: Room) -> None:
    code, _, err = await pokerctl_result(*room.flags(), "create", "--blinds", "abc")
    assert code == 2 and "Traceback" not in err and "'abc' is not two whole amounts" in err
    # What starting pokerctl costs on this machine now (the suite loads it): the baseline.
    began = time.monotonic()
    code, _, err = await pokerctl_result("token", "somebody")
    assert code == 0, err
    startup_s = time.monotonic() - began
    dead = f"127.0.0.1:{_free_port()}"
    for args in (["--dealer", dead, "tables"], ["--wallet", dead, "balance", "alice"]):
        began = time.monotonic()
        code, _, err = await pokerctl_result(*args)
        assert code == 1
        assert len(err.strip().splitlines()) == 1, err
        assert dead in err and "make run" in err
        waited_s = time.monotonic() - began - startup_s
        assert waited_s < 6, f"no silent wait: {waited_s:.1f} s beyond starting up"
    code, _, err = await pokerctl_result("token", "x", env={**_env(), "POKER_TOKEN_SECRET": "00"})
    assert code == 1 and "Traceback" not in err and "at least 32 bytes" in err, err
    code, _, err = await pokerctl_result(*room.flags(), "show", "no-such-table")
    assert code == 1 and err.startswith("pokerctl: NOT_FOUND"), err
    assert len(err.strip().splitlines()) == 1
    code, _, err = await pokerctl_result(*room.flags(), "history", "no-such-table")
    assert code == 1 and "<table id>.<hand number>" in err, err
    assert len(err.strip().splitlines()) == 1


async def test_the_secret_is_found_from_any_folder(room: Room, tmp_path: Path) -> None:
    home = tmp_path / "checkout"
    (home / "var").mkdir(parents=True)
    (home / "var" / "token-secret").write_text(SECRET.hex() + "\n", encoding="ascii")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in _env().items() if k != "POKER_TOKEN_SECRET"}
    code, _, err = await pokerctl_result(
        *room.flags(), "tables", env={**env, "POKER_HOME": str(home)}, cwd=elsewhere
    )
    assert code == 0, err
    nested = home / "sub" / "dir"
    nested.mkdir(parents=True)
    code, _, err = await pokerctl_result(*room.flags(), "tables", env=env, cwd=nested)
    assert code == 0, err
    missing = tmp_path / "nothing"
    code, _, err = await pokerctl_result(
        *room.flags(), "tables", env={**env, "POKER_HOME": str(missing)}, cwd=elsewhere
    )
    assert code == 1 and str(missing) in err and "make run" in err


async def test_drain_releases_the_table(room: Room) -> None:
    """``pokerctl drain``: the dealer serving the table (no hand running) lets it go at once."""
    table_id = await new_table(room)
    assert room.dealer.dealer is not None
    assert room.dealer.dealer.ownership.owned() == [table_id]
    out = await pokerctl(room, "drain", table_id, "--timeout", "5")
    assert out.startswith(f"{table_id} released at version 1 after its hand ended"), out
    assert room.dealer.dealer.ownership.owned() == []
    # Asked again within the hold-off (a retry): the same answer, nothing done twice.
    again = await pokerctl(room, "drain", table_id)
    assert again == out, again
    # A table that does not exist: one line, no trace.
    code, _, err = await pokerctl_result(*room.flags(), "drain", "t-nowhere")
    assert code != 0 and "There is no table t-nowhere" in err and "Traceback" not in err, err
