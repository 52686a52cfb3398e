"""Where pokerctl finds the services and the keys, from wherever it runs, and its one-line errors.

Each setting comes from its flag, else its environment variable, else the config file, else the
default. The config file is ``$POKERCTL_CONFIG``, else ``~/.config/pokerctl/config.toml`` when it
exists: TOML whose top-level keys are the group's options and whose tables are commands'
options, with dashes as underscores::

    dealer = "10.0.0.5:50051"          # --dealer / POKER_DEALER
    wallet = "10.0.0.5:50061"          # --wallet / POKER_WALLET
    home = "/home/me/poker"            # --home / POKER_HOME: the checkout `make run` runs in
    # secret_file, token_keys, tls_ca, tls_cert, tls_key likewise
    [bots]
    count = 4

The token keys: ``--token-keys`` (a keyring file: the private keys of the roles pokerctl signs,
e.g. the operator's), else ``POKER_TOKEN_SECRET`` (hex), else ``--secret-file``, else the local
setup's issuer keyring ``var/token-keys/pokerctl.json`` (the player, cashier and operator keys
``make run`` made; docs/security/tokens.md), else the legacy shared ``var/token-secret``, each
looked for in ``--home``, the nearest folder up from the working directory that has one, or the
checkout pokerctl itself runs from.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import click
import grpc
from click.core import ParameterSource

from poker.servicekit import flags
from poker.servicekit.flagspec import Program, Setting, help_text
from poker.servicekit.settings import client_tls, load_token_keys
from poker.servicekit.tls import ClientTls
from poker.servicekit.tokens import TokenKeyring, TokenKeys
from poker.tools.client import error_reason

_F = TypeVar("_F", bound=Callable[..., Any])

DEFAULT_DEALER: Final[str] = flags.DEALER.default
DEFAULT_WALLET: Final[str] = flags.WALLET_SERVICE.default
#: How long pokerctl waits for a service to answer the connection before it says so.
CONNECT_TIMEOUT_S: Final = 2.0
_SECRET: Final = Path("var") / "token-secret"
#: The local setup's issuer keyring (``make run`` writes it): pokerctl's private keys.
LOCAL_ISSUER_KEYS: Final = Path("var") / "token-keys" / "pokerctl.json"
#: The checkout pokerctl runs from (an editable install: poker/tools/ctlconfig.py -> root).
_OWN_CHECKOUT: Final = Path(__file__).resolve().parents[2]


def option(setting: Setting, *, name: str | None = None, detail: str = "") -> Callable[[_F], _F]:
    """The click option of ``setting`` (defined in :mod:`poker.servicekit.flags`): its flag,
    its ``POKER_*`` variable, default, help and bounds; ``name`` is the parameter's name when it
    is not the setting's field, ``detail`` a sentence on what this command does with it.

    Each deprecated name is a hidden option of its own (flag, variable and config-file key, as
    the old option had them) that still works, with a line on stderr, as the services' old
    names do; the new name wins over the old one given the same way (flag, variable, file), and
    any flag wins over any variable.
    """
    program = Program.POKERCTL
    assert program in setting.programs, f"--{setting.flag} is no pokerctl setting"
    dest = name or setting.dest
    kind = _click_type(setting)
    help_line = help_text(setting, program) + (f" {detail}" if detail else "")
    olds = setting.aliases.get(program, ())
    decorators: list[Callable[[_F], _F]] = [
        click.option(
            f"--{old}",
            old.replace("-", "_"),
            envvar=variable,
            default=None,
            type=kind,
            hidden=True,
            expose_value=False,
            callback=_deprecated_callback(dest, f"--{setting.flag}", setting.env(program)),
        )
        for old, variable in zip(olds, setting.deprecated_envs(program), strict=True)
    ]
    decorators.append(
        click.option(
            f"--{setting.flag}",
            dest,
            envvar=setting.env(program),
            default=setting.default_for(program),
            show_default=False,
            type=kind,
            help=help_line,
            callback=_resolve_callback(dest) if olds else None,
        )
    )

    def decorate(function: _F) -> _F:
        # click lists a command's options in the order of its decorators, top first, and
        # processes those not on the command line in that order: the old names come first,
        # so that the new one's callback sees what they were given.
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


def _click_type(setting: Setting) -> Any:
    """The click type of ``setting``: its choices, its bounded number, or its kind."""
    if setting.choices:
        return click.Choice(setting.choices)
    if setting.kind not in (int, float) or (setting.minimum, setting.maximum) == (None, None):
        return setting.kind
    low, high = setting.minimum, setting.maximum
    if setting.kind is int:
        return click.IntRange(
            None if low is None else int(low), None if high is None else int(high)
        )
    return click.FloatRange(low, high)


#: Where a value came from, strongest first: a flag beats a variable beats the config file.
_RANK: Final = {
    ParameterSource.COMMANDLINE: 0,
    ParameterSource.ENVIRONMENT: 1,
    ParameterSource.DEFAULT_MAP: 2,
}


def _deprecated_key(ctx: click.Context, dest: str) -> str:
    # ctx.meta is shared by a group's context and its commands': the key names the command.
    return f"ctlconfig.deprecated.{ctx.command_path}.{dest}"


def _deprecated_callback(dest: str, flag: str, variable: str) -> Callable[..., None]:
    """The callback of a deprecated name: says so on stderr and keeps its value for the new
    option's callback (the strongest source when several old names are given)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        source = ctx.get_parameter_source(param.name or "")
        if value is None or source not in _RANK:
            return
        if source is ParameterSource.ENVIRONMENT:
            used, new = str(param.envvar), variable
        elif source is ParameterSource.COMMANDLINE:
            used, new = param.opts[0], flag
        else:
            used, new = (
                f"{param.name} in the config file",
                flag.removeprefix("--").replace("-", "_"),
            )
        click.echo(f"{ctx.find_root().info_name}: {used} is deprecated: use {new}", err=True)
        kept = ctx.meta.get(_deprecated_key(ctx, dest))
        if kept is None or _RANK[source] < kept[0]:
            ctx.meta[_deprecated_key(ctx, dest)] = (_RANK[source], value)

    return callback


def _resolve_callback(dest: str) -> Callable[..., Any]:
    """The callback of a setting with deprecated names: an old name's value when it was given
    in a stronger way than the new one (a flag over a variable, ...) and the new one not."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        kept = ctx.meta.get(_deprecated_key(ctx, dest))
        source = ctx.get_parameter_source(param.name or "")
        rank = _RANK.get(source, len(_RANK)) if source is not None else len(_RANK)
        if kept is not None and kept[0] < rank:
            return kept[1]
        return value

    return callback


#: pokerctl's settings (the group's options and the log tools'), in the order of their help.
SETTINGS: Final = tuple(s for s in flags.SETTINGS if Program.POKERCTL in s.programs)


class CtlError(Exception):
    """A problem pokerctl tells the user in one sentence (no traceback)."""


def config_file() -> Path | None:
    """The config file pokerctl reads, or None."""
    named = os.environ.get("POKERCTL_CONFIG", "")
    if named:
        return Path(named)
    default = Path.home() / ".config" / "pokerctl" / "config.toml"
    return default if default.exists() else None


def load_config_file() -> dict[str, Any]:
    """The config file's settings as click's ``default_map`` (empty without a file)."""
    path = config_file()
    if path is None:
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CtlError(f"cannot read the config file {path}: {error}") from None


@dataclass(frozen=True)
class Settings:
    """The group's options, resolved lazily (``--help`` reads no file)."""

    dealer: str = DEFAULT_DEALER
    wallet: str = DEFAULT_WALLET
    home: str = flags.HOME.default
    secret_file: str = flags.SECRET_FILE.default
    token_keys: str = flags.TOKEN_KEYS.default
    tls_ca: str = flags.CTL_TLS_CA.default
    tls_cert: str = flags.CTL_TLS_CERT.default
    tls_key: str = flags.CTL_TLS_KEY.default

    def tls(self) -> ClientTls | None:
        """TLS to both services; None (plaintext) when no TLS file is set."""
        try:
            return client_tls(self.tls_ca, self.tls_cert, self.tls_key, flag="--tls")
        except SystemExit as error:
            raise CtlError(str(error)) from None

    def secret_path(self) -> Path:
        """The token secret file this run uses (see the module doc)."""
        if self.secret_file:
            return Path(self.secret_file).expanduser()
        return self._local_folder() / _SECRET

    def state_folder(self) -> Path:
        """Where pokerctl keeps what it learns between runs (``var/pokerctl`` in the home: the
        checkpoints of ``verify``)."""
        return self._local_folder() / "var" / "pokerctl"

    def _local_folder(self) -> Path:
        """The checkout whose local keys pokerctl uses: ``--home``, else the nearest folder up
        from here with an issuer keyring or a secret, else pokerctl's own checkout."""
        if self.home:
            return Path(self.home).expanduser()
        here = Path.cwd().resolve()
        for folder in (here, *here.parents):
            if (folder / LOCAL_ISSUER_KEYS).exists() or (folder / _SECRET).exists():
                return folder
        return _OWN_CHECKOUT

    def signing_keys(self) -> TokenKeys:
        """The keys pokerctl signs its tokens with."""
        if self.token_keys:
            return _keyring(Path(self.token_keys).expanduser())
        text = os.environ.get("POKER_TOKEN_SECRET", "")
        source = "POKER_TOKEN_SECRET"
        issuers = self._local_folder() / LOCAL_ISSUER_KEYS
        if not text and not self.secret_file and issuers.exists():
            return _keyring(issuers)
        if not text:
            path = self.secret_path()
            if not path.exists():
                raise CtlError(
                    f"no token keys at {issuers} nor {path}: start the services with `make run` "
                    "in the checkout, or say where they are with --home / POKER_HOME (the "
                    "checkout), --token-keys / POKER_TOKEN_KEYS or --secret-file / "
                    "POKER_SECRET_FILE"
                )
            text = path.read_text(encoding="ascii").strip()
            source = str(path)
        try:
            secret = bytes.fromhex(text)
            TokenKeyring.single(secret)  # the services' own check: long enough
        except ValueError as error:
            raise CtlError(f"the token secret in {source} is not usable: {error}") from None
        return secret


def _keyring(path: Path) -> TokenKeyring:
    try:
        return load_token_keys(str(path))
    except SystemExit as error:
        raise CtlError(str(error)) from None


def rpc_sentence(error: grpc.aio.AioRpcError) -> str:
    """A failed call in one line: the status and the server's sentence."""
    details = (error.details() or "").splitlines()[0] if error.details() else ""
    if error.code() == grpc.StatusCode.UNAVAILABLE:
        return f"the service is unavailable ({details}): is `make run` running?"
    if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "the service did not answer in time"
    reason = error_reason(error)  # the stable reason of docs/api-errors.md
    return f"{error.code().name}: {details}" + (f" [{reason}]" if reason else "")
