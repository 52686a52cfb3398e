"""The caller's deadline, carried from the edge to the calls a service makes on its behalf.

The servicer edge (:mod:`poker.servicekit.stack`) records, for the call being served, the
moment its caller stops waiting (``context.time_remaining()``, as a monotonic instant); a client
of another service (the dealer's wallet calls) asks :func:`timeout_within` for its own timeout:
the caller's remaining time, never more than its own cap. A call with no deadline (or outside
any call) gets the cap. Plain Python: the application may use it.

>>> timeout_within(5.0)
5.0
>>> with caller_deadline(0.25):
...     timeout_within(5.0) <= 0.25
True
>>> with caller_deadline(None):
...     timeout_within(5.0)
5.0
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

#: The monotonic instant the current call's caller stops waiting; None: no deadline.
_deadline: Final[contextvars.ContextVar[float | None]] = contextvars.ContextVar(
    "caller_deadline", default=None
)


def deadline_token(remaining_s: float | None) -> contextvars.Token[float | None]:
    """Record that the current call's caller waits ``remaining_s`` more seconds (None: no
    deadline); returns the token that :func:`reset_deadline` takes back."""
    instant = None if remaining_s is None else time.monotonic() + remaining_s
    return _deadline.set(instant)


def reset_deadline(token: contextvars.Token[float | None]) -> None:
    """Forget the deadline :func:`deadline_token` recorded."""
    _deadline.reset(token)


@contextmanager
def caller_deadline(remaining_s: float | None) -> Iterator[None]:
    """The current call's caller waits ``remaining_s`` more seconds inside the block."""
    token = deadline_token(remaining_s)
    try:
        yield
    finally:
        reset_deadline(token)


def remaining_s() -> float | None:
    """Seconds until the current call's caller stops waiting (0 once passed); None: no
    deadline."""
    instant = _deadline.get()
    return None if instant is None else max(0.0, instant - time.monotonic())


def timeout_within(cap_s: float) -> float:
    """The timeout of a call made on the current caller's behalf: its remaining time, at most
    ``cap_s``."""
    left = remaining_s()
    return cap_s if left is None else min(cap_s, left)


__all__ = ["caller_deadline", "deadline_token", "remaining_s", "reset_deadline", "timeout_within"]
