"""Fault points: places in the dealer where a fault test may stop the process itself, exactly
there, which no signal sent from outside can hit.

One point today: :func:`before_append`, between a command's last ownership check (the decision's
``holds()``) and its append leaving the process, the window that only the log's expected
position fences (:mod:`poker.dealer.ownership`). A dealer started with the environment variable
:data:`SIGSTOP_BEFORE_APPEND` set to a command id stops itself (SIGSTOP) there, once, when it
decides that command; ``tests/faults/test_dealer_sigstop.py`` continues it (SIGCONT) after
another dealer took the table over. Unset (always, outside that test), it costs one comparison
per command.
"""

from __future__ import annotations

import os
import signal
from typing import Final

import structlog

_log = structlog.get_logger(__name__)

#: The environment variable naming the command id whose decision stops the process.
SIGSTOP_BEFORE_APPEND: Final = "POKER_FAULT_SIGSTOP_BEFORE_APPEND"

#: The command id still to stop at (emptied once it fired: a retry after the wake-up runs on).
_armed: list[str] = [os.environ.get(SIGSTOP_BEFORE_APPEND, "")]


def before_append(command_id: str) -> None:
    """Stop this process here if told to for ``command_id`` (see the module)."""
    if not _armed[0] or command_id != _armed[0]:
        return
    _armed[0] = ""
    _log.warning("fault_point_sigstop", point="before_append", command_id=command_id)
    os.kill(os.getpid(), signal.SIGSTOP)


__all__ = ["SIGSTOP_BEFORE_APPEND", "before_append"]
