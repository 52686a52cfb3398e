"""What a setting is, and what is built from a list of them: an argparse parser's flags, their
checks, and the Markdown of docs/configuration.md. The settings themselves are listed once, in
:mod:`poker.servicekit.flags`.

A setting is a flag (``--nats-url``) that every program it belongs to also reads from its own
environment variable: the program's prefix and the flag in upper snake case (``DEALER_NATS_URL``,
``WALLET_NATS_URL``, ``POKER_NATS_URL`` for pokerctl). A flag may keep an old name per program,
a deprecated alias that still works, flag and variable alike:

>>> stream = Setting("table-stream", "The tables stream.", Group.TABLE_LOG, (Program.DEALER,),
...                  default="POKER_TABLES", aliases={Program.DEALER: ("stream",)})
>>> stream.env(Program.DEALER), stream.deprecated_envs(Program.DEALER)
('DEALER_TABLE_STREAM', ('DEALER_STREAM',))
>>> parser = argparse.ArgumentParser()
>>> add_flags(parser, Program.DEALER, {}, [stream])
>>> parser.parse_args(["--stream", "T"]).table_stream
'T'
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final


class Program(enum.StrEnum):
    """A program that reads settings: the two services and the operator's CLI."""

    DEALER = "dealer"
    WALLET = "wallet"
    POKERCTL = "pokerctl"


#: Each program's environment prefix.
ENV_PREFIX: Final[Mapping[Program, str]] = {
    Program.DEALER: "DEALER_",
    Program.WALLET: "WALLET_",
    Program.POKERCTL: "POKER_",
}


class Group(enum.Enum):
    """The sections of docs/configuration.md, in order."""

    COMMON = "Common"
    NATS = "NATS"
    GRPC = "gRPC and TLS"
    TOKENS = "Tokens and keys"
    TABLE_LOG = "Table log"
    DEALER = "Dealer"
    WALLET = "Wallet"
    POKERCTL = "pokerctl"


def env_name(prefix: str, flag: str) -> str:
    """The environment variable of ``--flag``: ``prefix`` + the flag in upper snake case."""
    return prefix + flag.upper().replace("-", "_")


@dataclass(frozen=True, slots=True, eq=False)
class Setting:
    """One setting: its flag, help, group, the programs that read it, its type, default and
    bounds (``minimum``/``maximum`` inclusive, ``above`` exclusive), its choices, the settings
    field it fills (``field``, else the flag in snake case) and its deprecated names."""

    flag: str
    help: str
    group: Group
    programs: tuple[Program, ...]
    kind: type = str
    default: Any = ""
    #: A program's own default where it differs (the dealer's port is not the wallet's).
    defaults: Mapping[Program, Any] = dataclasses.field(default_factory=dict)
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    choices: tuple[str, ...] = ()
    field: str = ""
    #: Old flag names, per program, still accepted (flag and environment variable).
    aliases: Mapping[Program, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    #: A secret's value (never shown as a default).
    secret: bool = False

    @property
    def dest(self) -> str:
        """The attribute the parsed flag is stored under (the settings field)."""
        return self.field or self.flag.replace("-", "_")

    def default_for(self, program: Program) -> Any:
        """The default ``program`` uses."""
        return self.defaults.get(program, self.default)

    def env(self, program: Program) -> str:
        """``program``'s environment variable of this setting."""
        return env_name(ENV_PREFIX[program], self.flag)

    def deprecated_envs(self, program: Program) -> tuple[str, ...]:
        """The variables of this setting's deprecated names in ``program``."""
        return tuple(env_name(ENV_PREFIX[program], old) for old in self.aliases.get(program, ()))

    def bounds(self) -> str:
        """The accepted values in words ("1 to 5", "positive", "0 or more", "one of a, b"), or
        ""."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.minimum is not None and self.maximum is not None:
            return f"{_number(self.minimum)} to {_number(self.maximum)}"
        if self.above == 0 or (self.kind is int and self.minimum == 1):
            return "positive"
        if self.minimum == 0:
            return "0 or more"
        if self.minimum is not None:
            return f"{_number(self.minimum)} or more"
        if self.above is not None:
            return f"more than {_number(self.above)}"
        return ""

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is refused (a sentence naming the flag), or None."""
        if self.choices and value not in self.choices:
            return f"--{self.flag} must be {self.bounds()}, not {value!r}"
        if self.kind in (int, float):
            low_ok = self.minimum is None or value >= self.minimum
            high_ok = self.maximum is None or value <= self.maximum
            above_ok = self.above is None or value > self.above
            if not (low_ok and high_ok and above_ok):
                return f"--{self.flag} must be {self.bounds()}, not {value!r}"
        return None


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def of_program(settings: Iterable[Setting], program: Program) -> list[Setting]:
    """The settings ``program`` reads."""
    return [setting for setting in settings if program in setting.programs]


class _Deprecated(argparse.Action):
    """Stores the value of a deprecated flag name, saying which name replaces it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        sys.stderr.write(f"{parser.prog}: {option_string} is deprecated: use {self.metavar}\n")
        setattr(namespace, self.dest, values)


def _environment_default(setting: Setting, program: Program, env: Mapping[str, str]) -> Any:
    """The variable's text (argparse converts it: a bad value is a usage error), the first of
    the current name and then the deprecated ones; unset or empty: the setting's default."""
    value = env.get(setting.env(program), "")
    if value:
        return value
    for old in setting.deprecated_envs(program):
        if env.get(old, ""):
            sys.stderr.write(f"{old} is deprecated: use {setting.env(program)}\n")
            return env[old]
    return setting.default_for(program)


def help_text(setting: Setting, program: Program) -> str:
    """The flag's ``--help`` line: its help, variable, default and bounds."""
    parts = [f"env {setting.env(program)}"]
    default = setting.default_for(program)
    if not setting.secret and default not in ("", None):
        parts.append(f"default {default}")
    if setting.bounds():
        parts.append(setting.bounds())
    return f"{setting.help} ({'; '.join(parts)})"


def add_flags(
    parser: argparse.ArgumentParser,
    program: Program,
    env: Mapping[str, str],
    settings: Sequence[Setting],
) -> None:
    """Add ``--<flag>`` for each of ``program``'s ``settings``, defaulting to its environment
    variable, else its default; each deprecated name is a hidden flag of the same setting."""
    for setting in of_program(settings, program):
        parser.add_argument(
            f"--{setting.flag}",
            dest=setting.dest,
            type=setting.kind,
            metavar=setting.flag.upper().replace("-", "_"),
            default=_environment_default(setting, program, env),
            help=help_text(setting, program).replace("%", "%%"),  # argparse formats it
        )
        for old in setting.aliases.get(program, ()):
            parser.add_argument(
                f"--{old}",
                dest=setting.dest,
                type=setting.kind,
                default=argparse.SUPPRESS,
                action=_Deprecated,
                metavar=f"--{setting.flag}",
                help=argparse.SUPPRESS,
            )


def check_flags(args: argparse.Namespace, program: Program, settings: Sequence[Setting]) -> None:
    """Exit with a sentence if a parsed value is out of its setting's bounds or choices."""
    for setting in of_program(settings, program):
        problem = setting.problem(getattr(args, setting.dest))
        if problem is not None:
            raise SystemExit(problem)


def values(
    args: argparse.Namespace,
    program: Program,
    settings: Sequence[Setting],
    *,
    skip: Iterable[str] = (),
) -> dict[str, Any]:
    """``{field: value}`` of ``program``'s parsed settings, but those in ``skip`` (loaded
    apart, such as key files); each setting's field is the settings class's field of that name."""
    left_out = set(skip)
    return {
        setting.dest: getattr(args, setting.dest)
        for setting in of_program(settings, program)
        if setting.dest not in left_out
    }


# --- docs/configuration.md --------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default_cell(setting: Setting) -> str:
    if setting.secret:
        return "(none)"
    shown = {program: setting.default_for(program) for program in setting.programs}
    if len(set(map(repr, shown.values()))) == 1:
        value = next(iter(shown.values()))
        return f"`{value}`" if value not in ("", None) else "(none)"
    return "<br>".join(f"{program}: `{value}`" for program, value in shown.items())


def _env_cell(setting: Setting) -> str:
    names = []
    for program in setting.programs:
        old = ", ".join(f"~~{name}~~" for name in setting.deprecated_envs(program))
        names.append(f"`{setting.env(program)}`" + (f" ({old})" if old else ""))
    return "<br>".join(names)


def _flag_cell(setting: Setting) -> str:
    text = f"`--{setting.flag}`"
    old = sorted({name for names in setting.aliases.values() for name in names})
    if old:
        deprecated = ", ".join(
            f"`--{name}` ({', '.join(p.value for p, n in setting.aliases.items() if name in n)})"
            for name in old
        )
        text += f"<br>deprecated: {deprecated}"
    return text


def markdown(settings: Sequence[Setting], header: str) -> str:
    """docs/configuration.md: ``header``, then each group's table of its settings."""
    lines = [header.rstrip(), ""]
    for group in Group:
        members = [setting for setting in settings if setting.group is group]
        if not members:
            continue
        lines += [
            f"## {group.value}",
            "",
            "| Flag | Environment | Type | Default | Bounds | Help |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for setting in members:
            row = (
                _flag_cell(setting),
                _env_cell(setting),
                setting.kind.__name__,
                _default_cell(setting),
                _cell(setting.bounds()),
                _cell(setting.help),
            )
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)
