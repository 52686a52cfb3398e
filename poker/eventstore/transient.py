"""NATS failures that mean "not now", not "no": one definition for the stores that turn them
into the event store's own :class:`~poker.eventstore.api.StoreUnavailable` (retried by the
callers' budgets, never a bug's status).

>>> try:
...     with unavailable_on_transient("reading the lease on 't1'"):
...         raise nats.errors.TimeoutError
... except StoreUnavailable as error:
...     print(error)
reading the lease on 't1' failed: TimeoutError()
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Final

import nats.errors
import nats.js.errors

from poker.eventstore.api import StoreUnavailable

#: A request that got no answer, no responder, or a connection closed under it; a JetStream
#: that does not answer yet (no stream response while a leader is elected).
TRANSIENT_NATS_ERRORS: Final = (
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    nats.errors.ConnectionClosedError,
    nats.js.errors.NoStreamResponseError,
    asyncio.TimeoutError,
)


@contextlib.contextmanager
def unavailable_on_transient(action: str) -> Iterator[None]:
    """Turn NATS's transient failures inside the block into :class:`StoreUnavailable` naming
    ``action``."""
    try:
        yield
    except TRANSIENT_NATS_ERRORS as error:
        raise StoreUnavailable(f"{action} failed: {error!r}") from error
