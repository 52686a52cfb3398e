"""pokerctl is a package by audience (player, bots, operators, wallet, log tools): each module
small enough to read at once, every command in exactly one audience's ``COMMANDS``, and the
parser built in one place (:mod:`poker.tools.pokerctl.cli`) from them."""

from __future__ import annotations

import ast
from pathlib import Path

import click

from poker.tools.pokerctl import cli as cli_module
from poker.tools.pokerctl.cli import AUDIENCES, cli

PACKAGE = Path(cli_module.__file__).parent

#: The most lines a module of the package may have.
MAX_LINES = 400

#: Every command pokerctl has: a command added or dropped is a decision, made here too.
COMMANDS = {
    "audit",
    "balance",
    "bots",
    "close",
    "create",
    "deposit",
    "drain",
    "escrow",
    "export",
    "history",
    "log",
    "rake",
    "replay",
    "seed",
    "show",
    "tables",
    "token",
    "transactions",
    "verify",
    "verify-hand",
    "watch",
    "withdraw",
}


def _modules() -> list[Path]:
    return sorted(PACKAGE.glob("*.py"))


def test_no_module_of_pokerctl_is_over_400_lines() -> None:
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in _modules()}
    assert len(sizes) > 5, sizes
    too_long = {name: size for name, size in sizes.items() if size > MAX_LINES}
    assert not too_long, f"split these by what they do: {too_long}"


def test_every_command_comes_from_exactly_one_audience() -> None:
    names = [command.name for audience in AUDIENCES for command in audience.COMMANDS]
    assert len(names) == len(set(names)), names
    assert set(names) == COMMANDS
    assert set(cli.commands) == COMMANDS
    for audience in AUDIENCES:
        for command in audience.COMMANDS:
            assert cli.commands[command.name or ""] is command


def test_only_cli_adds_commands_to_the_group() -> None:
    # A command is defined in its audience's module and listed in its COMMANDS; only cli.py
    # adds them to the pokerctl group (a module calling add_command elsewhere hides one).
    for path in _modules():
        if path.name == "cli.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            node.func.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        ]
        assert "add_command" not in calls, path.name


def test_the_audiences_call_the_services_through_the_one_client() -> None:
    # The stubs are poker.tools.client's: no module of the package builds its own.
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [alias.name for alias in node.names]
                assert not any(name.endswith("_pb2_grpc") for name in names), path.name
                assert not node.module.endswith("_pb2_grpc"), path.name


def test_the_log_subgroup_keeps_its_command() -> None:
    group = cli.commands["log"]
    assert isinstance(group, click.Group)
    assert set(group.commands) == {"remove-record", "archive"}
