"""The event store on NATS JetStream: one stream, one subject per log.

Appends carry ``Nats-Expected-Last-Subject-Sequence`` (optimistic concurrency: a second writer
for the same log fails) and ``Nats-Msg-Id`` (a retried append lands once). They go through the
request/reply ``publish``, never ``publish_async``: an error ack never resolves a future there
(nats.py issue 985), and every append here must learn whether it was refused.

A duplicate ack (``ack.duplicate``: the Msg-Id landed before, within the duplicate window) is
never taken for a new append: its ``seq`` is the first record's, which is read back; the same
bytes are a retry that landed, other bytes raise :class:`~poker.eventstore.api.DuplicateAppend`.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from poker.eventstore.api import (
    ConcurrencyConflict,
    DuplicateAppend,
    Record,
    StoreUnavailable,
    verify_headers,
    verify_key,
)
from poker.eventstore.defaults import DEFAULT_REPLICAS, DEFAULT_STREAM, DEFAULT_SUBJECT_PREFIX
from poker.eventstore.nats_errors import (
    TRANSIENT_NATS_ERRORS,
    is_closed,
    is_transient,
    is_wrong_last_sequence,
    unavailable_on_transient,
)


@dataclass(frozen=True, slots=True)
class StreamSettings:
    """Where the logs live and how long an append may keep retrying.

    ``retry_budget`` must outlast a JetStream leader election (about 5 s on a 3-node cluster).
    The stream itself is the operator's (poker.servicekit.provisioning creates it with
    ``duplicate_window_s`` and ``replicas``); the store never creates or changes it.
    """

    stream: str = DEFAULT_STREAM
    subject_prefix: str = DEFAULT_SUBJECT_PREFIX
    duplicate_window_s: float = 120.0
    retry_budget_s: float = 10.0
    request_timeout_s: float = 2.0
    replicas: int = DEFAULT_REPLICAS


class JetStreamEventStore:
    """:class:`poker.eventstore.api.EventStore` over a JetStream stream that never deletes
    history. The stream must exist (provisioned by the operator): nothing here creates or
    reconfigures it.

    Logs are read through ordered consumers, or, given ``direct``, by batch direct get (a
    stream of another NATS account, reached through imported JetStream API services: an
    ordered consumer's deliveries cannot cross into the reader's account)."""

    def __init__(
        self,
        js: JetStreamContext,
        settings: StreamSettings | None = None,
        *,
        direct: BatchDirectGet | None = None,
    ) -> None:
        self._js = js
        self.settings = settings or StreamSettings()
        self._direct = direct

    def subject(self, key: str) -> str:
        """The subject of ``key``'s log; keys are single subject tokens."""
        verify_key(key)
        return f"{self.settings.subject_prefix}.{key}"

    async def append(
        self,
        key: str,
        data: bytes,
        *,
        expected_position: int,
        msg_id: str,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        """See :meth:`poker.eventstore.api.EventStore.append`."""
        subject = self.subject(key)
        own = dict(headers or {})
        verify_headers(own)
        headers = {
            **own,
            # JetStream deduplicates per stream, not per subject: scope the id to its log.
            "Nats-Msg-Id": f"{key}:{msg_id}",
            "Nats-Expected-Last-Subject-Sequence": str(expected_position),
        }
        deadline = time.monotonic() + self.settings.retry_budget_s
        delay = 0.02
        while True:
            try:
                ack = await self._js.publish(
                    subject, data, timeout=self.settings.request_timeout_s, headers=headers
                )
            except (nats.errors.Error, TimeoutError) as error:
                if is_wrong_last_sequence(error):
                    return await self._resolve_wrong_sequence(key, expected_position, msg_id, data)
                if not is_transient(error):
                    raise
                # Same Msg-Id on every try: if an earlier try landed, the server deduplicates;
                # a refusal in flight (another write to the log being proposed) settles.
                if time.monotonic() + delay > deadline or is_closed(error):
                    raise StoreUnavailable(f"appending to {key!r} failed: {error!r}") from error
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
            else:
                if ack.duplicate:
                    return await self._resolve_duplicate(key, int(ack.seq), msg_id, data)
                return int(ack.seq)

    async def _resolve_duplicate(self, key: str, position: int, msg_id: str, data: bytes) -> int:
        """A duplicate ack names the record that first carried the Msg-Id: ours (a retry of this
        very append that landed) only if it holds these bytes."""
        first = await self.read_at(key, position)
        if first is not None and first.data == data:
            return position
        raise DuplicateAppend(key, msg_id, position)

    async def _resolve_wrong_sequence(
        self, key: str, expected: int, msg_id: str, data: bytes
    ) -> int:
        """A refused append is a success if our own earlier try is among what moved the log.

        JetStream checks the expected sequence before its duplicate window, so a retry of an
        append that did land comes back as a wrong-sequence error; the records written since the
        writer's view tell a landed retry from a real conflict.
        """
        actual = expected
        async for record in self.read(key, after=expected):
            if record.msg_id == msg_id:
                if record.data != data:
                    raise DuplicateAppend(key, msg_id, record.position)
                return record.position
            actual = record.position
        raise ConcurrencyConflict(key, expected, actual)

    async def read_at(self, key: str, position: int) -> Record | None:
        """See :meth:`poker.eventstore.api.EventStore.read_at` (a direct get of the stream
        sequence)."""
        if position < 1:
            return None
        subject = self.subject(key)
        try:
            message = await self._js.get_msg(self.settings.stream, position, direct=True)
        except nats.js.errors.NotFoundError:
            return None
        except TRANSIENT_NATS_ERRORS as error:
            raise StoreUnavailable(f"reading {key!r} at {position} failed: {error!r}") from error
        if message.subject != subject:
            return None
        headers = message.headers or {}
        return Record(
            key=key,
            position=int(message.seq or position),
            msg_id=_unscoped(key, str(headers.get("Nats-Msg-Id", ""))),
            data=message.data or b"",
            headers=writer_headers(headers),
            stored_at=unix_ms(message.time),
        )

    async def first_position_at(self, key: str, unix_ms: int) -> int | None:
        """The position of ``key``'s first record stored at or after ``unix_ms`` (the server's
        clock, as :attr:`Record.stored_at`), None if there is none: one direct get by start time
        (``DIRECT.GET.<stream>`` with ``start_time`` and ``next_by_subj``), whose cost does not
        grow with the log."""
        moment = datetime.datetime.fromtimestamp(unix_ms / 1000, tz=datetime.UTC)
        request = {
            "start_time": moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "next_by_subj": self.subject(key),
        }
        with unavailable_on_transient(f"locating the records of {key!r} by time"):
            # nats-py's get_msg has no start_time: the API call by hand.
            reply = await self._js._nc.request(
                f"{self._js._prefix}.DIRECT.GET.{self.settings.stream}",
                json.dumps(request).encode(),
                timeout=self.settings.request_timeout_s,
            )
        headers = reply.headers or {}
        status = headers.get(api.Header.STATUS)
        if status == "404":
            return None
        if status is not None or "Nats-Sequence" not in headers:
            raise StoreUnavailable(f"locating the records of {key!r} by time: status {status}")
        return int(headers["Nats-Sequence"])

    async def _last_message(self, key: str) -> Record | None:
        subject = self.subject(key)
        with unavailable_on_transient(f"reading the last record of {key!r}"):
            try:
                message = await self._js.get_last_msg(self.settings.stream, subject)
            except nats.js.errors.NotFoundError:
                return None
        headers = message.headers or {}
        return Record(
            key=key,
            position=int(message.seq or 0),
            msg_id=_unscoped(key, str(headers.get("Nats-Msg-Id", ""))),
            data=message.data or b"",
            headers=writer_headers(headers),
            stored_at=unix_ms(message.time),
        )

    async def last_position(self, key: str) -> int:
        """See :meth:`poker.eventstore.api.EventStore.last_position`."""
        last = await self._last_message(key)
        return 0 if last is None else last.position

    async def read(self, key: str, after: int = 0) -> AsyncIterator[Record]:
        """See :meth:`poker.eventstore.api.EventStore.read` (:meth:`read_batches`, one at a
        time)."""
        async for batch in self.read_batches(key, after):
            for record in batch:
                yield record

    async def read_batches(self, key: str, after: int = 0) -> AsyncIterator[list[Record]]:
        """See :meth:`poker.eventstore.api.EventStore.read_batches`; an ordered consumer from
        ``after + 1`` (or batch direct gets, see the class).

        A consumer that stops delivering (on a cluster, a read's consumer may be placed on a node
        that just died, before the others noticed) or cannot be created is replaced by a new one
        from the last record yielded, so no record comes twice or goes missing; after
        ``retry_budget_s`` without progress the read raises
        :class:`~poker.eventstore.api.StoreUnavailable`.
        """
        end = await self.last_position(key)
        position = after
        deadline = time.monotonic() + self.settings.retry_budget_s
        while position < end:
            reader = (
                self._read_consumer(key, position, end)
                if self._direct is None
                else self._direct.read(
                    self.settings.stream,
                    self.subject(key),
                    key,
                    after=position,
                    end=end,
                    timeout_s=self.settings.request_timeout_s,
                )
            )
            try:
                while True:
                    try:
                        batch = await anext(reader)
                    except StopAsyncIteration:
                        return
                    except TRANSIENT_NATS_ERRORS as error:
                        if time.monotonic() > deadline or is_closed(error):
                            raise StoreUnavailable(
                                f"reading {key!r} after {position} failed: {error!r}"
                            ) from error
                        break  # a new consumer from where this one stopped
                    yield batch
                    position = batch[-1].position
                    deadline = time.monotonic() + self.settings.retry_budget_s
            finally:
                await reader.aclose()
            await asyncio.sleep(0.05)

    async def _read_consumer(
        self, key: str, after: int, end: int
    ) -> AsyncGenerator[list[Record], None]:
        """The records ``after + 1`` .. ``end`` of ``key`` through one ordered consumer.

        The consumer's callback appends to a deque and wakes the reader, which takes everything
        that arrived at once: no ``next_msg`` (a task, a uuid and a ``wait_for`` per message),
        no queue futures, one resumption per batch instead of per record. Nothing arriving for
        twice the request timeout raises ``nats.errors.TimeoutError``.
        """
        arrived: deque[Msg] = deque()
        wake = asyncio.Event()

        async def deliver(message: Msg) -> None:
            arrived.append(message)
            wake.set()

        subscription = await self._js.subscribe(
            self.subject(key),
            # Named, not looked up by subject: saves a round trip, and $JS.API.STREAM.NAMES
            # (which lists every stream) is not among the services' NATS permissions.
            stream=self.settings.stream,
            cb=deliver,
            ordered_consumer=True,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            # Gone from the server soon after the read unsubscribes, not 5 s later: reads are
            # many (every rebuild, every WatchTable catch-up) and each is a consumer meanwhile.
            config=api.ConsumerConfig(
                opt_start_seq=after + 1, inactive_threshold=READ_CONSUMER_INACTIVE_S
            ),
            pending_msgs_limit=-1,
            pending_bytes_limit=-1,
        )
        prefix = f"{key}:"
        timeout = 2 * self.settings.request_timeout_s
        try:
            while True:
                if not arrived:
                    wake.clear()
                    try:
                        await asyncio.wait_for(wake.wait(), timeout)
                    except TimeoutError:
                        raise nats.errors.TimeoutError from None
                batch = []
                while arrived:
                    message = arrived.popleft()
                    position, stored_at = delivered_place(message)
                    headers = message.headers or {}
                    msg_id = headers.get("Nats-Msg-Id", "").removeprefix(prefix)
                    own = writer_headers(headers) if len(headers) > 1 else {}
                    batch.append(Record(key, position, msg_id, message.data, own, stored_at))
                    if position >= end:
                        yield batch
                        return
                yield batch
        finally:
            await subscription.unsubscribe()


class BatchDirectGet:
    """Reads a log by batch direct get: ``DIRECT.GET.<stream>`` with ``{"seq": n,
    "next_by_subj": subject, "batch": N}``; the server answers with up to N messages of that
    subject from ``n`` on, one by one, then a status message (``204`` end of batch, ``404``
    nothing there) ends the batch. One request, one reply subject per batch; no consumer is
    made, so it works through a JetStream API imported from another account (``api_prefix``,
    e.g. ``$JS.TABLES.API``), where an ordered consumer's deliveries could not reach the
    reader. On a replicated stream any replica may answer, a lagging one with fewer records:
    the store's read asks again from the last record it got until the log's end."""

    def __init__(self, client: Client, api_prefix: str = "$JS.API", batch: int = 256) -> None:
        self._client = client
        self.api_prefix = api_prefix
        self.batch = batch
        self._requests = itertools.count(1)

    async def read(
        self, stream: str, subject: str, key: str, *, after: int, end: int, timeout_s: float
    ) -> AsyncGenerator[list[Record], None]:
        """The records ``after + 1`` .. ``end`` of ``subject``, a list per answered batch.
        Nothing arriving for ``timeout_s`` raises ``nats.errors.TimeoutError``; the records
        end early (returns) when the answering replica has no more."""
        arrived: deque[Msg] = deque()
        wake = asyncio.Event()
        inbox = self._client.new_inbox()

        async def deliver(message: Msg) -> None:
            arrived.append(message)
            wake.set()

        subscription = await self._client.subscribe(
            f"{inbox}.*", cb=deliver, pending_msgs_limit=-1, pending_bytes_limit=-1
        )
        prefix = f"{key}:"
        position = after
        try:
            while position < end:
                reply = f"{inbox}.{next(self._requests)}"
                request = {"seq": position + 1, "next_by_subj": subject, "batch": self.batch}
                await self._client.publish(
                    f"{self.api_prefix}.DIRECT.GET.{stream}",
                    json.dumps(request).encode(),
                    reply=reply,
                )
                batch, done = await self._one_batch(
                    arrived, wake, reply=reply, prefix=prefix, key=key, timeout_s=timeout_s
                )
                batch = [record for record in batch if position < record.position <= end]
                if batch:
                    position = batch[-1].position
                    yield batch
                if done or not batch:
                    return
        finally:
            await subscription.unsubscribe()

    async def _one_batch(
        self,
        arrived: deque[Msg],
        wake: asyncio.Event,
        *,
        reply: str,
        prefix: str,
        key: str,
        timeout_s: float,
    ) -> tuple[list[Record], bool]:
        """The records of one batch, and whether the subject has none after them (``404``, or
        an end of batch with nothing pending)."""
        batch: list[Record] = []
        while True:
            if not arrived:
                wake.clear()
                try:
                    await asyncio.wait_for(wake.wait(), timeout_s)
                except TimeoutError:
                    raise nats.errors.TimeoutError from None
            while arrived:
                message = arrived.popleft()
                if message.subject != reply:
                    continue  # a late answer to an earlier request of this read
                headers = message.headers or {}
                status = headers.get(api.Header.STATUS)
                if status is not None:
                    if status not in ("204", "404"):
                        raise nats.errors.TimeoutError  # a refusal: retried like a lost answer
                    pending = headers.get("Nats-Num-Pending", "0")
                    return batch, status == "404" or pending == "0"
                position = int(headers.get("Nats-Sequence", "0"))
                msg_id = headers.get("Nats-Msg-Id", "").removeprefix(prefix)
                own = writer_headers(headers)
                stored_at = stamp_ms(headers.get("Nats-Time-Stamp"))
                batch.append(Record(key, position, msg_id, message.data, own, stored_at))


def writer_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The writer's own headers of a stored message (without JetStream's ``Nats-*`` ones)."""
    return {name: value for name, value in headers.items() if not name.startswith("Nats-")}


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MILLISECOND = datetime.timedelta(milliseconds=1)


def unix_ms(moment: datetime.datetime | None) -> int | None:
    """``moment`` (a stored message's time, as nats-py gives it) in unix ms, exactly."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return (moment - _EPOCH) // _MILLISECOND


def stamp_ms(text: str | None) -> int | None:
    """A direct get's ``Nats-Time-Stamp`` (RFC 3339 in UTC, to the nanosecond:
    ``2026-12-07T02:17:30.261999239Z``) in unix ms, truncated as :func:`unix_ms` truncates;
    None when absent or not of that form.

    >>> stamp_ms("1970-01-01T00:00:01.999999999Z")
    1999
    >>> stamp_ms("1970-01-01T00:00:02Z"), stamp_ms("yesterday")
    (2000, None)
    """
    if not text or not text.endswith("Z"):
        return None
    whole, _, fraction = text[:-1].partition(".")
    if fraction and not (fraction.isascii() and fraction.isdigit()):
        return None
    try:
        moment = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.UTC)
    except ValueError:
        return None
    return (moment - _EPOCH) // _MILLISECOND + int((fraction + "000")[:3])


def delivered_place(message: Msg) -> tuple[int, int | None]:
    """The stream position and the stored time (unix ms) of a message a consumer delivered,
    from its reply subject (``$JS.ACK...``: the server puts the message's stored time there,
    the same for every consumer), without building nats-py's metadata (a datetime per
    message); the metadata's for a subject of another shape."""
    tokens = (message.reply or "").split(".")
    if len(tokens) == 9:  # $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ns>.<pending>
        sequence, nanoseconds = tokens[5], tokens[7]
    elif len(tokens) >= 11:  # with domain and account hash: two tokens more before the stream
        sequence, nanoseconds = tokens[7], tokens[9]
    else:
        sequence = nanoseconds = ""
    if sequence.isdigit() and nanoseconds.isdigit():
        return int(sequence), int(nanoseconds) // 1_000_000
    metadata = message.metadata
    return metadata.sequence.stream, unix_ms(metadata.timestamp)


#: How long the server keeps a read's (or a feed's) consumer once nobody subscribes to it.
READ_CONSUMER_INACTIVE_S = 0.5


def _unscoped(key: str, scoped_id: str) -> str:
    """The writer's own id from the stream-wide ``<key>:<id>`` form."""
    return scoped_id.removeprefix(f"{key}:")
