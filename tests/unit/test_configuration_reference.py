"""The one definition of every setting (poker/servicekit/flags.py) and what is built from it:
docs/configuration.md is current, every setting has help and a default within its bounds, no
two settings of a program share a name or a variable, the deprecated names still work, the
table log's names are one group in all three programs, and pokerctl's options agree."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import click.testing
import pytest

from poker.dealer.config import CrashRule, DealerSettings
from poker.dealer.config import load_settings as dealer_settings
from poker.eventstore.aggregate import Aggregate
from poker.eventstore.jetstream import StreamSettings
from poker.eventstore.leases import LeaseSettings
from poker.eventstore.snapshots import SnapshotSettings
from poker.servicekit import flags, flagspec
from poker.servicekit.flagspec import ENV_PREFIX, Group, Program, Setting, of_program
from poker.tablelog.settings import TableLogSettings
from poker.tools import ctlconfig
from poker.wallet.config import WalletSettings
from poker.wallet.config import load_settings as wallet_settings

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "configuration.md"
SECRET = ["--token-secret", "ab" * 32]


def test_the_reference_is_current() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == flags.configuration_markdown(), (
        "docs/configuration.md is not current: run "
        "`python -m poker.servicekit.flags --markdown > docs/configuration.md`"
    )


def test_the_module_writes_the_reference() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "poker.servicekit.flags", "--markdown"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert done.stdout == flags.configuration_markdown()


def test_every_group_has_its_section_and_every_setting_its_row() -> None:
    text = flags.configuration_markdown()
    for group in Group:
        assert f"## {group.value}\n" in text
    for setting in flags.SETTINGS:
        assert f"| `--{setting.flag}`" in text


@pytest.mark.parametrize("setting", flags.SETTINGS, ids=lambda setting: setting.flag)
def test_every_setting_has_help_and_a_default_it_accepts(setting: Setting) -> None:
    assert setting.help.endswith(".") and len(setting.help) > 10
    assert setting.programs
    for program in setting.programs:
        default = setting.default_for(program)
        assert isinstance(default, setting.kind), (setting.flag, program)
        assert setting.problem(default) is None, (setting.flag, program)


@pytest.mark.parametrize("program", list(Program))
def test_no_two_settings_of_a_program_share_a_flag_or_a_variable(program: Program) -> None:
    names: list[str] = []
    variables: list[str] = []
    for setting in of_program(flags.SETTINGS, program):
        names += [setting.flag, *setting.aliases.get(program, ())]
        variables += [setting.env(program), *setting.deprecated_envs(program)]
        assert set(setting.aliases) <= set(setting.programs), setting.flag
    assert len(names) == len(set(names))
    assert len(variables) == len(set(variables))
    assert all(variable.startswith(ENV_PREFIX[program]) for variable in variables)


def test_the_table_log_is_one_group_in_all_three_programs() -> None:
    assert [setting.flag for setting in flags.TABLE_LOG] == [
        "table-stream",
        "table-subject-prefix",
        "table-snapshot-bucket",
        "table-lease-bucket",
        "table-index-bucket",
    ]
    assert all(setting.group is Group.TABLE_LOG for setting in flags.TABLE_LOG)
    for setting in flags.TABLE_LOG[:3]:
        assert set(setting.programs) == set(Program)
    assert flags.TABLE_INDEX_BUCKET.programs == (Program.DEALER,)  # only dealers keep it
    room = TableLogSettings()
    defaults = [setting.default for setting in flags.TABLE_LOG]
    assert defaults == [
        room.stream,
        room.subject_prefix,
        room.snapshot_bucket,
        room.lease_bucket,
        room.index_bucket,
    ]
    dealer = dealer_settings(SECRET, environ={}).table_log
    wallet = wallet_settings(SECRET, environ={}).table_log
    assert dealer.names == wallet.names == room.names


def test_the_event_stores_defaults_are_the_flags() -> None:
    # One literal each (poker/eventstore/defaults.py, the lower layer): the flags refer to it.
    stream, lease, snapshot = StreamSettings(), LeaseSettings(), SnapshotSettings()
    assert (stream.stream, stream.subject_prefix) == (
        flags.TABLE_STREAM.default,
        flags.TABLE_SUBJECT_PREFIX.default,
    )
    assert snapshot.bucket == flags.TABLE_SNAPSHOT_BUCKET.default
    assert lease.bucket == flags.TABLE_LEASE_BUCKET.default
    assert lease.ttl_s == flags.LEASE_TTL.default
    assert stream.replicas == lease.replicas == snapshot.replicas == flags.REPLICAS.default
    attempts = inspect.signature(Aggregate.__init__).parameters["max_attempts"].default
    assert attempts == flags.MAX_ATTEMPTS.default


def test_both_services_read_the_table_log_under_the_same_names() -> None:
    argv = [
        *SECRET,
        "--table-stream=T",
        "--table-subject-prefix=t.x",
        "--table-snapshot-bucket=S",
        "--table-lease-bucket=L",
    ]
    dealer = dealer_settings(argv, environ={}).table_log
    wallet = wallet_settings(argv, environ={}).table_log
    assert dealer.names == wallet.names
    assert (wallet.stream, wallet.subject_prefix, wallet.snapshot_bucket) == ("T", "t.x", "S")
    env = {"DEALER_TABLE_STREAM": "E", "WALLET_TABLE_STREAM": "E"}
    from_env = dealer_settings(SECRET, env), wallet_settings(SECRET, env)
    assert [settings.table_stream for settings in from_env] == ["E", "E"]


@pytest.mark.parametrize(
    ("program", "settings_class", "loaded_apart"),
    [
        (Program.DEALER, DealerSettings, {"token_secret_file", "token_signing_key", "deck_key"}),
        (Program.WALLET, WalletSettings, {"token_secret_file"}),
    ],
)
def test_every_setting_fills_the_settings_field_of_its_name(
    program: Program, settings_class: type[object], loaded_apart: set[str]
) -> None:
    """One name per setting: the flag's (or its declared ``field``) is the settings field, so
    no map renames one to the other."""
    fields = {field.name for field in dataclasses.fields(settings_class)}  # type: ignore[arg-type]
    dests = {setting.dest for setting in of_program(flags.SETTINGS, program)}
    assert dests - loaded_apart <= fields, dests - loaded_apart - fields


def test_the_old_names_still_work_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    dealer = dealer_settings(
        [*SECRET, "--stream", "T", "--lease-bucket", "L"], {"DEALER_SUBJECT_PREFIX": "p"}
    )
    table_log = dealer.table_log
    assert (table_log.stream, table_log.subject_prefix, table_log.lease_bucket) == ("T", "p", "L")
    wallet = wallet_settings(
        [*SECRET, "--stream", "J", "--dealer-snapshot-bucket", "S"],
        {"WALLET_LEASE_BUCKET": "WL", "WALLET_DEALER_LEASE_BUCKET": "DL"},
    )
    assert (wallet.journal_stream, wallet.journal_lease_bucket) == ("J", "WL")  # the journal's
    assert (wallet.table_snapshot_bucket, wallet.table_lease_bucket) == ("S", "DL")
    err = capsys.readouterr().err
    assert "--stream is deprecated: use --table-stream" in err
    assert "--stream is deprecated: use --journal-stream" in err
    assert "DEALER_SUBJECT_PREFIX is deprecated: use DEALER_TABLE_SUBJECT_PREFIX" in err


def test_the_new_name_wins_over_the_old() -> None:
    env = {"DEALER_STREAM": "old", "DEALER_TABLE_STREAM": "new"}
    assert dealer_settings(SECRET, env).table_stream == "new"
    assert dealer_settings([*SECRET, "--table-stream", "flag"], env).table_stream == "flag"


def test_a_value_out_of_bounds_is_refused_with_its_flag() -> None:
    with pytest.raises(SystemExit, match="--grpc-port must be 0 to 65535"):
        dealer_settings([*SECRET, "--grpc-port", "70000"], environ={})
    with pytest.raises(SystemExit, match="--hold-ttl must be positive"):
        wallet_settings(SECRET, environ={"WALLET_HOLD_TTL": "0"})
    with pytest.raises(SystemExit, match="--crash-rule must be one of close, void, resume"):
        dealer_settings(SECRET, environ={"DEALER_CRASH_RULE": "sometimes"})


def test_the_crash_rules_are_the_dealers() -> None:
    assert flags.CRASH_RULE.choices == tuple(rule.value for rule in CrashRule)


@pytest.mark.parametrize("program", [Program.DEALER, Program.WALLET])
def test_the_help_lists_every_setting_of_the_service(program: Program) -> None:
    module = f"poker.{program.value}"
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    for setting in of_program(flags.SETTINGS, program):
        assert f"--{setting.flag} " in done.stdout, setting.flag
        assert setting.env(program) in done.stdout, setting.flag


# --- pokerctl ---------------------------------------------------------------------------------


def _pokerctl_options() -> dict[str, click.Option]:
    """Every option of pokerctl's command tree, by its first name."""
    from poker.tools.pokerctl.cli import cli

    found: dict[str, click.Option] = {}

    def walk(command: click.Command) -> None:
        for param in command.params:
            if isinstance(param, click.Option):
                found.setdefault(param.opts[0].removeprefix("--"), param)
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                walk(sub)

    walk(cli)
    return found


def _agrees(option: click.Option | None, setting: Setting) -> bool:
    if option is None:
        return False
    envvar: Any = option.envvar
    variables = [envvar] if isinstance(envvar, str) else list(envvar or ())
    return (
        variables[:1] == [setting.env(Program.POKERCTL)]
        and option.default == setting.default_for(Program.POKERCTL)
        and f"--{setting.flag}" in option.opts
    )


def test_pokerctl_options_agree_with_the_definitions() -> None:
    options = _pokerctl_options()
    for setting in ctlconfig.SETTINGS:
        assert _agrees(options.get(setting.flag), setting), (
            f"pokerctl's --{setting.flag} is not the one of flags.py"
        )


def test_every_pokerctl_option_of_a_setting_is_built_from_it() -> None:
    # An option named as a setting (or one of its old names) but declared by hand would drift
    # from its definition: only ctlconfig.option gives the old names their own hidden options.
    settings = {setting.flag: setting for setting in ctlconfig.SETTINGS}
    old_names = {
        old: setting
        for setting in ctlconfig.SETTINGS
        for old in setting.aliases.get(Program.POKERCTL, ())
    }
    for name, option in _pokerctl_options().items():
        if name in old_names:
            assert option.hidden and not option.expose_value, name
        elif name in settings:
            assert option.opts == [f"--{name}"], option.opts
            assert (option.help or "").startswith(
                flagspec.help_text(settings[name], Program.POKERCTL)
            ), name


def _show() -> click.Command:
    @click.command()
    @ctlconfig.option(flags.TABLE_STREAM)
    @ctlconfig.option(flags.NATS_URL)
    def show(table_stream: str, nats_url: str) -> None:
        click.echo(f"{table_stream} {nats_url}")

    return show


def test_ctlconfig_builds_a_click_option_from_a_definition() -> None:
    runner = click.testing.CliRunner()
    done = runner.invoke(_show(), [])
    assert (done.stdout, done.stderr) == ("POKER_TABLES nats://127.0.0.1:4222\n", "")
    done = runner.invoke(_show(), ["--table-stream", "S"], env={"POKER_NATS_URL": "nats://n:1"})
    assert (done.stdout, done.stderr) == ("S nats://n:1\n", "")


def test_pokerctl_old_names_still_work_with_a_warning() -> None:
    runner = click.testing.CliRunner()
    done = runner.invoke(_show(), ["--stream", "S"], env={"POKER_NATS": "nats://n:1"})
    assert done.stdout == "S nats://n:1\n"
    assert "show: --stream is deprecated: use --table-stream" in done.stderr
    assert "show: POKER_NATS is deprecated: use POKER_NATS_URL" in done.stderr
    done = runner.invoke(_show(), [], default_map={"stream": "F"})
    assert done.stdout.startswith("F ")
    assert "stream in the config file is deprecated: use table_stream" in done.stderr


def test_pokerctl_new_names_win_over_the_old_given_the_same_way() -> None:
    runner = click.testing.CliRunner()
    env = {"POKER_TABLE_STREAM": "E", "POKER_STREAM": "old"}
    assert runner.invoke(_show(), [], env=env).stdout.startswith("E ")
    both = ["--stream", "old", "--table-stream", "new"]
    assert runner.invoke(_show(), both, env=env).stdout.startswith("new ")
    # A flag, even an old one, wins over a variable (as with the services' argparse).
    assert runner.invoke(_show(), ["--stream", "F"], env=env).stdout.startswith("F ")
    done = runner.invoke(_show(), [], default_map={"stream": "old", "table_stream": "new"})
    assert done.stdout.startswith("new ")
    assert runner.invoke(_show(), [], env=env, default_map={"stream": "F"}).stdout.startswith("E ")


def test_pokerctl_old_names_are_hidden_from_the_help() -> None:
    done = click.testing.CliRunner().invoke(_show(), ["--help"])
    assert "--table-stream" in done.stdout and "POKER_TABLE_STREAM" in done.stdout
    assert "--stream " not in done.stdout and "--nats " not in done.stdout
