"""What NATS's and JetStream's errors mean here: the one place that says which failures are
"not now" (tried again, then :class:`~poker.eventstore.api.StoreUnavailable`), which error code
is a lost optimistic-concurrency race, and which refusals are not settled yet. Every store and
the services' JetStream callers ask this module; none keeps its own list.

The codes are nats-server's (``server/errors.json``, ``jetstream_errors_generated.go``); the
classes are nats-py's (``nats.errors``, ``nats.js.errors``), which raise an
:class:`nats.js.errors.APIError` carrying the server's ``err_code`` for any refusal it has no
class for, and pick the class by the HTTP-like ``code``: 503 -> ``ServiceUnavailableError``,
404 -> ``NotFoundError``, 400 -> ``BadRequestError``.

>>> try:
...     with unavailable_on_transient("reading the lease on 't1'"):
...         raise nats.errors.TimeoutError
... except StoreUnavailable as error:
...     print(error)
reading the lease on 't1' failed: TimeoutError()
>>> is_wrong_last_sequence(nats.js.errors.BadRequestError(code=400, err_code=10071))
True
>>> is_transient(nats.js.errors.BadRequestError(code=400, err_code=10164))
True
>>> is_transient(nats.js.errors.ServiceUnavailableError(code=503, err_code=10163))
True
>>> is_transient(nats.js.errors.BadRequestError(code=400, err_code=10071))
False
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Final

import nats.errors
import nats.js.errors

from poker.eventstore.api import StoreUnavailable

#: ``JSStreamWrongLastSequenceErrF`` = 10071 ("wrong last sequence: {seq}"): a
#: ``Nats-Expected-Last-Subject-Sequence`` (or KV revision) check failed against the store:
#: another write moved the subject. Settled: asking again gets the same answer.
WRONG_LAST_SEQUENCE: Final = 10071

#: Refusals whose outcome is not settled yet, on a replicated stream (nats-server's clustered
#: publish path): ``JSStreamWrongLastSequenceConstantErr`` = 10164 ("wrong last sequence", no
#: number: another write with an expected sequence for the same subject is still being
#: proposed, so the check cannot be made yet) and ``JSStreamDuplicateMessageConflict`` = 10158
#: (409, "duplicate message id is in process": an earlier try of this very append may yet
#: land). Tried again, each becomes a settled answer: a success, a duplicate ack, or 10071.
#: (nats-py's ``kv.update`` reports 10164 as ``KeyWrongLastSequenceError`` itself: for a KV
#: compare-and-set it is a lost race either way.)
IN_FLIGHT_CODES: Final = frozenset({10164, 10158})

#: The failures that say "not now": a request that got no answer in time (``TimeoutError``,
#: also asyncio's, which a ``wait_for`` raises), nobody listening on the subject
#: (``NoRespondersError``; ``NoStreamResponseError`` is nats-py's name for it on a JetStream
#: publish), a connection closed under the request (``ConnectionClosedError``: the service is
#: stopping or lost NATS; its callers give up through the same path), and any 503
#: (``ServiceUnavailableError``: nats-py's JetStream API calls raise it for "no responders"
#: too, and the server for "JetStream system temporarily unavailable" (10008) or "expected
#: last sequence per subject temporarily unavailable" (10163) while a leader is elected).
TRANSIENT_NATS_ERRORS: Final = (
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    nats.errors.ConnectionClosedError,
    nats.js.errors.NoStreamResponseError,
    nats.js.errors.ServiceUnavailableError,
    asyncio.TimeoutError,
)


def is_wrong_last_sequence(error: BaseException) -> bool:
    """Whether ``error`` is JetStream refusing a write because the subject moved on
    (:data:`WRONG_LAST_SEQUENCE`, or nats-py's KV class for it)."""
    if isinstance(error, nats.js.errors.KeyWrongLastSequenceError):
        return True
    return isinstance(error, nats.js.errors.APIError) and error.err_code == WRONG_LAST_SEQUENCE


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` means "not now": the same request may succeed when tried again
    (:data:`TRANSIENT_NATS_ERRORS`, or a refusal not settled yet, :data:`IN_FLIGHT_CODES`)."""
    if isinstance(error, TRANSIENT_NATS_ERRORS):
        return True
    return isinstance(error, nats.js.errors.APIError) and error.err_code in IN_FLIGHT_CODES


def is_closed(error: BaseException) -> bool:
    """Whether ``error`` says the client's connection is closed for good (the service is
    stopping, or gave up reconnecting): unavailable, like any transient failure, but asking
    again on the same connection cannot mend it, so a retry loop gives up at once."""
    return isinstance(error, nats.errors.ConnectionClosedError)


@contextlib.contextmanager
def unavailable_on_transient(action: str) -> Iterator[None]:
    """Turn NATS's transient failures (:func:`is_transient`) inside the block into
    :class:`StoreUnavailable` naming ``action``; anything else passes through."""
    try:
        yield
    except (nats.errors.Error, TimeoutError) as error:
        if not is_transient(error):
            raise
        raise StoreUnavailable(f"{action} failed: {error!r}") from error
