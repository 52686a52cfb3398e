"""The one place pokerctl's parser is built: the ``pokerctl`` group with its global options
(where the services and the keys are; their values are :mod:`poker.tools.ctlconfig`'s), every
audience's commands added to it, and the entry point (:func:`main`: one line on stderr for
every error, never a traceback).

A new command goes into its audience's module and that module's ``COMMANDS``; a new audience's
module into :data:`AUDIENCES`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click
import grpc

from poker.servicekit import flags
from poker.servicekit.tokens import NoSigningKey
from poker.tools import ctlconfig
from poker.tools.ctlconfig import CtlError, Settings
from poker.tools.pokerctl import bots, logs, operators, player, repair, wallet
from poker.tools.pokerctl.common import Ctl

_CONTEXT = {"help_option_names": ["-h", "--help"], "show_default": True, "max_content_width": 100}


@click.group(
    context_settings=_CONTEXT,
    help="The command line of the dealer and the wallet, with bot players. "
    "`pokerctl COMMAND --help` says more; every command takes --json.",
)
@ctlconfig.option(flags.DEALER)
@ctlconfig.option(flags.WALLET_SERVICE)
@ctlconfig.option(flags.HOME)
@ctlconfig.option(flags.SECRET_FILE)
@ctlconfig.option(flags.TOKEN_KEYS)
@ctlconfig.option(flags.CTL_TLS_CA)
@ctlconfig.option(flags.CTL_TLS_CERT)
@ctlconfig.option(flags.CTL_TLS_KEY)
@click.pass_context
def cli(ctx: click.Context, /, **options: str) -> None:
    """The pokerctl group: its options say where the services and the keys are."""
    ctx.obj = Ctl(Settings(**options))


#: The audiences, each a module whose ``COMMANDS`` the group takes (``--help`` lists them sorted).
AUDIENCES = (player, bots, operators, wallet, logs, repair)
for _audience in AUDIENCES:
    for _command in _audience.COMMANDS:
        cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """The ``pokerctl`` entry point: one line on stderr for every error, never a traceback."""
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="pokerctl",
            default_map=ctlconfig.load_config_file(),
            standalone_mode=False,
        )
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except CtlError as error:
        _fail(str(error))
    except NoSigningKey as error:
        _fail(f"{error}; give pokerctl a keyring holding it: --token-keys PATH (POKER_TOKEN_KEYS)")
    except grpc.aio.AioRpcError as error:
        _fail(ctlconfig.rpc_sentence(error))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:  # `pokerctl watch t | head`
        sys.stderr.close()


def _fail(sentence: str) -> None:
    print(f"pokerctl: {sentence}", file=sys.stderr)
    sys.exit(1)
