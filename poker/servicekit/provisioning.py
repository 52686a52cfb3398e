"""The room's streams, KV buckets and durable consumer, as data: the one place that says what
they are. The operator's provisioning creates or updates them (:func:`provision`, run as the NATS
users ``admin`` and ``wallet-admin``, one per NATS account, by
``python -m poker.servicekit.provision``); each service checks at start that
what exists is what it needs (:func:`verify`) and refuses to start otherwise. No service's NATS
user may create, update, delete or purge a stream, nor create a durable consumer: a service that
could reconfigure a stream could republish its subjects into another stream (minting money),
cap its history, seal it, or source another service's stream (docs/security/nats.md).

>>> room = Room(TablesSpec(), WalletSpec())
>>> [resource.label for resource in streams_of(room)]  # doctest: +NORMALIZE_WHITESPACE
['stream POKER_TABLES', 'bucket POKER_SNAPSHOTS', 'bucket POKER_LEASES',
 'bucket POKER_TABLE_INDEX', 'stream POKER_TABLES_ARCHIVE', 'stream POKER_WALLET',
 'bucket POKER_WALLET_SNAPSHOTS', 'bucket POKER_WALLET_LEASES']
>>> tables = streams_of(room)[0].config
>>> tables.deny_delete, tables.deny_purge, tables.max_msgs_per_subject, tables.allow_direct
(False, True, -1, True)
>>> consumers_of(room)[0].label
'consumer wallet-ledger of stream POKER_TABLES'
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext, api

from poker.eventstore.api import retry_while_unavailable
from poker.eventstore.jetstream import StreamSettings
from poker.eventstore.nats_errors import is_transient, unavailable_on_transient
from poker.eventstore.snapshots import SnapshotSettings
from poker.servicekit import flags
from poker.servicekit.nats_permissions import TableNames, WalletNames

#: What an operator runs to create or repair them (with the ``admin`` user's credentials).
PROVISION_COMMAND: Final = "python -m poker.servicekit.provision"

#: JetStream's deduplication window of the two logs (a retried append lands once within it).
DUPLICATE_WINDOW_S: Final = StreamSettings().duplicate_window_s
#: The largest snapshot value (bigger snapshots go in chunks, see poker.eventstore.snapshots).
SNAPSHOT_MAX_VALUE_BYTES: Final = SnapshotSettings().max_value_bytes
#: The redelivery schedule of the wallet's durable consumer (a stalled table's message).
#: The largest listing the index of open tables holds (a TableListing is ~100 bytes).
INDEX_MAX_VALUE_BYTES: Final = 4096
CONSUMER_BACKOFF_S: Final = (1.0, 2.0, 5.0, 10.0, 30.0)
CONSUMER_MAX_ACK_PENDING: Final = 10_000
DEFAULT_LEASE_TTL_S: Final[float] = flags.LEASE_TTL.default


R = TypeVar("R", "StreamResource", "ConsumerResource")


class NotProvisioned(Exception):
    """A stream, bucket or consumer a service needs is missing or not as it needs it; the
    message is one sentence naming it and the command to run."""


class ProvisioningFailed(Exception):
    """The server refused to create or update something (the message says what and why)."""


@dataclass(frozen=True, slots=True)
class TablesSpec:
    """The dealer's side: the table stream and its two buckets."""

    names: TableNames = field(default_factory=TableNames)
    replicas: int = 1
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S


@dataclass(frozen=True, slots=True)
class WalletSpec:
    """The wallet's own stream and buckets, and its durable consumer on the table stream."""

    names: WalletNames = field(default_factory=WalletNames)
    replicas: int = 1
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S


@dataclass(frozen=True, slots=True)
class Room:
    """Everything one dealer namespace and its wallet (None: no wallet) need on JetStream."""

    tables: TablesSpec = field(default_factory=TablesSpec)
    wallet: WalletSpec | None = field(default_factory=WalletSpec)


@dataclass(frozen=True, slots=True)
class StreamResource:
    """A stream (or a KV bucket's stream) and its exact configuration."""

    label: str
    config: api.StreamConfig

    @property
    def name(self) -> str:
        """The stream's name (``KV_<bucket>`` for a bucket)."""
        assert self.config.name is not None
        return self.config.name


@dataclass(frozen=True, slots=True)
class ConsumerResource:
    """A durable consumer and its exact configuration."""

    label: str
    stream: str
    config: api.ConsumerConfig


def log_stream_config(
    name: str, subject_prefix: str, replicas: int, *, deny_delete: bool
) -> api.StreamConfig:
    """A log (the tables' or the wallet's journal): one subject per log, nothing ever expires
    or is replaced, never purged; ``deny_delete`` False lets the operator alone (no service
    user may) remove one foreign record."""
    return api.StreamConfig(
        name=name,
        subjects=[f"{subject_prefix}.>"],
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        max_consumers=-1,
        max_msgs=-1,
        max_bytes=-1,
        max_age=0,
        max_msgs_per_subject=-1,
        max_msg_size=-1,
        discard=api.DiscardPolicy.OLD,
        duplicate_window=DUPLICATE_WINDOW_S,
        deny_delete=deny_delete,
        deny_purge=True,
        allow_direct=True,
        allow_rollup_hdrs=False,
        num_replicas=replicas,
    )


def bucket_stream_config(
    bucket: str,
    replicas: int,
    *,
    description: str,
    ttl_s: float = 0.0,
    max_value_bytes: int = -1,
) -> api.StreamConfig:
    """A KV bucket's stream, as nats-py's ``create_key_value`` makes it (history 1, no direct
    get), so that the services bind it with ``js.key_value``."""
    # nats-py: the duplicate window may not exceed the TTL.
    window = min(ttl_s, DUPLICATE_WINDOW_S) if ttl_s else DUPLICATE_WINDOW_S
    return api.StreamConfig(
        name=f"KV_{bucket}",
        description=description,
        subjects=[f"$KV.{bucket}.>"],
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        allow_direct=False,
        allow_rollup_hdrs=True,
        allow_msg_ttl=True,
        deny_delete=True,
        deny_purge=False,
        discard=api.DiscardPolicy.NEW,
        duplicate_window=window,
        max_age=ttl_s,
        max_bytes=-1,
        max_consumers=-1,
        max_msg_size=max_value_bytes,
        max_msgs=-1,
        max_msgs_per_subject=1,
        num_replicas=replicas,
    )


def snapshot_bucket(
    bucket: str, replicas: int, max_value_bytes: int = SNAPSHOT_MAX_VALUE_BYTES
) -> StreamResource:
    """A snapshot bucket: one value per key, no expiry, values up to ``max_value_bytes``."""
    return StreamResource(
        f"bucket {bucket}",
        bucket_stream_config(
            bucket,
            replicas,
            description="Aggregate snapshots: position header + state bytes.",
            max_value_bytes=max_value_bytes,
        ),
    )


def lease_bucket(bucket: str, replicas: int, ttl_s: float) -> StreamResource:
    """A lease bucket: one value per key, aging out after ``ttl_s`` (the lease TTL), and
    per-message TTLs allowed (``allow_msg_ttl``, :func:`bucket_stream_config`): the dealers'
    table claims are written with ``Nats-TTL: never``, so that only the heartbeats they refer to
    age out (:mod:`poker.eventstore.heartbeats`)."""
    return StreamResource(
        f"bucket {bucket}",
        bucket_stream_config(
            bucket,
            replicas,
            description="Leases: one owner per name, aging out after max_age.",
            ttl_s=ttl_s,
        ),
    )


def index_bucket(bucket: str, replicas: int) -> StreamResource:
    """The index of open tables: one small listing per open table, no expiry (a closed table's
    key is deleted by the dealer that closed it)."""
    return StreamResource(
        f"bucket {bucket}",
        bucket_stream_config(
            bucket,
            replicas,
            description="The open tables: one TableListing per table id (a cache of the log).",
            max_value_bytes=INDEX_MAX_VALUE_BYTES,
        ),
    )


def archive_names(stream: str, subject_prefix: str) -> tuple[str, str]:
    """The archive stream and subject prefix of the table stream ``stream`` with subjects
    ``subject_prefix`` (``pokerctl log archive`` moves closed tables' logs there): the stream's
    name and ``_ARCHIVE``, and the prefix's last token ``table`` made ``archive``.

    >>> archive_names("POKER_TABLES", "poker.table")
    ('POKER_TABLES_ARCHIVE', 'poker.archive')
    >>> archive_names("T_x", "tx.tables")
    ('T_x_ARCHIVE', 'tx.tables_archive')
    """
    head, _, last = subject_prefix.rpartition(".")
    prefix = f"{head}.archive" if head and last == "table" else f"{subject_prefix}_archive"
    return f"{stream}_ARCHIVE", prefix


def archive_stream(names: TableNames, replicas: int) -> StreamResource:
    """The archive of closed tables' logs (:func:`archive_names`): written by the operator
    alone (no service user may publish to its subjects, nor delete or purge: ``deny_delete``
    and ``deny_purge``), kept without limit (an operator who wants the archive to expire sets
    ``max_age`` on it by hand, or copies it to an object store), read as the hot log was by
    ``pokerctl verify --archive`` and ``export --archive``.

    >>> archive = archive_stream(TableNames(), 1).config
    >>> archive.name, archive.subjects, archive.deny_delete, archive.deny_purge
    ('POKER_TABLES_ARCHIVE', ['poker.archive.>'], True, True)
    """
    stream, prefix = archive_names(names.stream, names.subject_prefix)
    return StreamResource(
        f"stream {stream}", log_stream_config(stream, prefix, replicas, deny_delete=True)
    )


def table_streams(spec: TablesSpec) -> list[StreamResource]:
    """The table stream and the dealer's three buckets (snapshots, leases, the index)."""
    names = spec.names
    return [
        StreamResource(
            f"stream {names.stream}",
            log_stream_config(names.stream, names.subject_prefix, spec.replicas, deny_delete=False),
        ),
        snapshot_bucket(names.snapshot_bucket, spec.replicas),
        lease_bucket(names.lease_bucket, spec.replicas, spec.lease_ttl_s),
        index_bucket(names.index_bucket, spec.replicas),
    ]


def wallet_streams(spec: WalletSpec) -> list[StreamResource]:
    """The wallet's journal and its two buckets."""
    names = spec.names
    return [
        StreamResource(
            f"stream {names.stream}",
            log_stream_config(names.stream, names.subject_prefix, spec.replicas, deny_delete=True),
        ),
        snapshot_bucket(names.snapshot_bucket, spec.replicas),
        lease_bucket(names.lease_bucket, spec.replicas, spec.lease_ttl_s),
    ]


def wallet_consumer(tables: TableNames, wallet: WalletNames) -> ConsumerResource:
    """The wallet's durable pull consumer of every table subject: explicit acks, unlimited
    deliveries with backoff (a stalled table's message comes back, see poker.wallet.consumer)."""
    return ConsumerResource(
        f"consumer {wallet.consumer} of stream {tables.stream}",
        tables.stream,
        api.ConsumerConfig(
            name=wallet.consumer,
            durable_name=wallet.consumer,
            ack_policy=api.AckPolicy.EXPLICIT,
            deliver_policy=api.DeliverPolicy.ALL,
            max_deliver=-1,
            ack_wait=CONSUMER_BACKOFF_S[0],
            backoff=list(CONSUMER_BACKOFF_S),
            max_ack_pending=CONSUMER_MAX_ACK_PENDING,
            filter_subject=f"{tables.subject_prefix}.>",
        ),
    )


def streams_of(room: Room) -> list[StreamResource]:
    """Every stream and bucket of ``room``, the table stream first (and the archive of its
    closed tables' logs after the dealer's buckets)."""
    found = _tables_side(room.tables)
    if room.wallet is not None:
        found += wallet_streams(room.wallet)
    return found


def _tables_side(spec: TablesSpec) -> list[StreamResource]:
    """What the TABLES account's admin provisions: the table stream, its buckets, the archive."""
    return [*table_streams(spec), archive_stream(spec.names, spec.replicas)]


def consumers_of(room: Room) -> list[ConsumerResource]:
    """Every durable consumer of ``room`` (the wallet's, if it has a wallet)."""
    if room.wallet is None:
        return []
    return [wallet_consumer(room.tables.names, room.wallet.names)]


# --- checking (every service, at start) --------------------------------------------------------

#: The stream settings a service's check compares, besides the ones below that need care.
_STREAM_FIELDS: Final = (
    "subjects",
    "retention",
    "storage",
    "num_replicas",
    "max_msgs",
    "max_bytes",
    "max_msgs_per_subject",
    "max_msg_size",
    "discard",
    "deny_purge",
    "allow_direct",
    "allow_rollup_hdrs",
)
_SECONDS_FIELDS: Final = ("max_age", "duplicate_window")
_CONSUMER_FIELDS: Final = (
    "durable_name",
    "ack_policy",
    "deliver_policy",
    "max_deliver",
    "max_ack_pending",
    "filter_subject",
)


def _fix_hint() -> str:
    return f"run `{PROVISION_COMMAND}` with the operator's credentials"


def _differs_seconds(have: float | None, want: float | None) -> bool:
    return not math.isclose(have or 0.0, want or 0.0, abs_tol=1e-3)


def stream_problems(have: api.StreamConfig, want: api.StreamConfig) -> list[str]:
    """What in ``have`` (the server's config) is not as ``want`` says, as ``field=value``
    phrases naming the value found and the one needed; empty when it fits. A setting ``want``
    leaves None is not checked."""
    problems = []
    for name in _STREAM_FIELDS:
        found, needed = getattr(have, name), getattr(want, name)
        if needed is not None and _normal(found) != _normal(needed):
            problems.append(f"{name}={_show(found)} (needs {_show(needed)})")
    for name in _SECONDS_FIELDS:
        found, needed = getattr(have, name), getattr(want, name)
        if _differs_seconds(found, needed):
            problems.append(f"{name}={found}s (needs {needed or 0}s)")
    # A stream the room lets the operator delete from may also deny it: nothing a service does
    # depends on it. One that must deny it must.
    if want.deny_delete and not have.deny_delete:
        problems.append("deny_delete=false (needs true)")
    # Per-message TTLs: the dealers' table claims outlive the lease bucket's max_age by one.
    if want.allow_msg_ttl and not have.allow_msg_ttl:
        problems.append("allow_msg_ttl=false (needs true)")
    if have.republish is not None:
        republish = have.republish
        problems.append(f"a republish of {republish.src!r} to {republish.dest!r} (needs none)")
    if have.sources:
        problems.append(f"sources {[source.name for source in have.sources]} (needs none)")
    if have.mirror is not None:
        problems.append(f"a mirror of {have.mirror.name!r} (needs none)")
    if have.sealed:
        problems.append("sealed=true (needs false)")
    return problems


def consumer_problems(have: api.ConsumerConfig, want: api.ConsumerConfig) -> list[str]:
    """What in the server's consumer config ``have`` is not as ``want`` says."""
    problems = []
    for name in _CONSUMER_FIELDS:
        found, needed = getattr(have, name), getattr(want, name)
        if _normal(found) != _normal(needed):
            problems.append(f"{name}={_show(found)} (needs {_show(needed)})")
    if _differs_seconds(have.ack_wait, want.ack_wait):
        problems.append(f"ack_wait={have.ack_wait}s (needs {want.ack_wait}s)")
    if [round(x, 3) for x in have.backoff or []] != [round(x, 3) for x in want.backoff or []]:
        problems.append(f"backoff={have.backoff} (needs {want.backoff})")
    if have.deliver_subject:
        problems.append(f"a push deliver subject {have.deliver_subject!r} (needs a pull consumer)")
    if have.filter_subjects:
        problems.append(f"filter_subjects={have.filter_subjects} (needs none)")
    return problems


def _normal(value: Any) -> Any:
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return getattr(value, "value", value)  # an enum by its wire value


def _show(value: Any) -> str:
    value = _normal(value)
    return (
        "unset" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


async def _check_stream(js: JetStreamContext, resource: StreamResource) -> None:
    with unavailable_on_transient(f"looking up {resource.label}"):
        try:
            info = await js.stream_info(resource.name)
        except nats.js.errors.NotFoundError:
            raise NotProvisioned(f"{resource.label} does not exist: {_fix_hint()}") from None
    problems = stream_problems(info.config, resource.config)
    if problems:
        raise NotProvisioned(f"{resource.label} has {', '.join(problems)}: {_fix_hint()}")


async def _check_consumer(js: JetStreamContext, resource: ConsumerResource) -> None:
    assert resource.config.durable_name is not None
    with unavailable_on_transient(f"looking up {resource.label}"):
        try:
            info = await js.consumer_info(resource.stream, resource.config.durable_name)
        except nats.js.errors.NotFoundError:
            raise NotProvisioned(f"{resource.label} does not exist: {_fix_hint()}") from None
    problems = consumer_problems(info.config, resource.config)
    if problems:
        raise NotProvisioned(f"{resource.label} has {', '.join(problems)}: {_fix_hint()}")


async def verify(
    js: JetStreamContext,
    streams: Sequence[StreamResource],
    consumers: Sequence[ConsumerResource] = (),
) -> None:
    """Check that every one of ``streams`` and ``consumers`` exists as described; raise
    :class:`NotProvisioned` on the first that does not. Retried while JetStream does not
    answer (:func:`~poker.eventstore.api.retry_while_unavailable`, then
    :class:`~poker.eventstore.api.StoreUnavailable`). Needs only STREAM.INFO and CONSUMER.INFO."""

    async def once() -> None:
        for stream in streams:
            await _check_stream(js, stream)
        for consumer in consumers:
            await _check_consumer(js, consumer)

    await retry_while_unavailable(once)


async def bind_provisioned(label: str, bind: Awaitable[bool]) -> None:
    """``await bind`` (a store's ``bind_bucket``), :class:`NotProvisioned` if it found nothing
    (the bucket went away since :func:`verify`)."""
    if not await bind:
        raise NotProvisioned(f"{label} does not exist: {_fix_hint()}")


def dealer_needs(spec: TablesSpec) -> list[StreamResource]:
    """What the dealer checks at start: the table stream and its two buckets."""
    return table_streams(spec)


def wallet_needs(spec: WalletSpec) -> list[StreamResource]:
    """What the wallet checks at start in its own account: its journal and buckets."""
    return wallet_streams(spec)


def wallet_table_needs(
    spec: WalletSpec, tables: TableNames
) -> tuple[list[StreamResource], list[ConsumerResource]]:
    """What the wallet checks at start on the dealer's side, through its account's imports: the
    table stream (any number of replicas: the dealer's setting) and its durable consumer on it."""
    table_stream = table_streams(TablesSpec(tables))[0]
    any_replicas = replace(table_stream, config=replace(table_stream.config, num_replicas=None))
    return [any_replicas], [wallet_consumer(tables, spec.names)]


# --- provisioning (the operator) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """What provisioning did to one resource: ``created``, ``updated`` or ``unchanged``, and
    any warning an operator must read."""

    label: str
    action: str
    warning: str = ""


async def apply_stream(js: JetStreamContext, resource: StreamResource) -> Outcome:
    """Create ``resource``'s stream, or update it to its configuration if it differs."""
    want = resource.config
    try:
        info = await js.stream_info(resource.name)
    except nats.js.errors.NotFoundError:
        await _server_call(resource.label, "create", js.add_stream(want))
        return Outcome(resource.label, "created")
    have = info.config
    warning = ""
    if have.deny_delete and not want.deny_delete:
        # JetStream refuses to lift deny_delete on an existing stream ("can not cancel deny
        # message deletes"): keep it, and say what it costs.
        want = replace(want, deny_delete=True)
        warning = (
            f"{resource.label} was created with deny_delete=true, which JetStream cannot lift: "
            "the operator cannot remove one record from it"
        )
    if not stream_problems(have, want) and have.description == want.description:
        return Outcome(resource.label, "unchanged", warning)
    await _server_call(resource.label, "update", js.update_stream(want))
    return Outcome(resource.label, "updated", warning)


async def _apply_consumer(js: JetStreamContext, resource: ConsumerResource) -> Outcome:
    assert resource.config.durable_name is not None
    try:
        info = await js.consumer_info(resource.stream, resource.config.durable_name)
    except nats.js.errors.NotFoundError:
        action = "created"
    else:
        if not consumer_problems(info.config, resource.config):
            return Outcome(resource.label, "unchanged")
        action = "updated"
    # CONSUMER.CREATE with the consumer's name creates it or updates what may be updated.
    await _server_call(resource.label, action, js.add_consumer(resource.stream, resource.config))
    return Outcome(resource.label, action)


async def _server_call(label: str, action: str, call: Awaitable[Any]) -> None:
    try:
        await call
    except nats.js.errors.APIError as error:
        if is_transient(error):
            raise  # tried again (see _retried)
        raise ProvisioningFailed(
            f"the server refused to {action.removesuffix('d')} {label}: {error.description}"
        ) from error


async def provision(
    js: JetStreamContext,
    room: Room,
    report: Callable[[Outcome], None] | None = None,
    *,
    wallet_js: JetStreamContext | None = None,
) -> list[Outcome]:
    """Create or update every stream, bucket and consumer of ``room`` to exactly its
    configuration (idempotent: what fits is left alone). ``js``: the TABLES account's admin
    (the table stream, the dealer's buckets and the wallet's durable consumer on the table
    stream); ``wallet_js``: the WALLET account's admin (the journal and its buckets), needed when
    the room has a wallet. Raises :class:`ProvisioningFailed` if the server refuses one (a
    sealed stream cannot be unsealed, a storage type cannot change...)."""
    if room.wallet is not None and wallet_js is None:
        raise ValueError("a room with a wallet needs the WALLET account's admin (wallet_js)")
    steps: list[Callable[[], Awaitable[Outcome]]] = [
        _retried(js, stream, apply_stream) for stream in _tables_side(room.tables)
    ]
    if room.wallet is not None:
        assert wallet_js is not None
        steps += [_retried(wallet_js, each, apply_stream) for each in wallet_streams(room.wallet)]
    steps += [_retried(js, consumer, _apply_consumer) for consumer in consumers_of(room)]
    outcomes = []
    for step in steps:
        outcome = await retry_while_unavailable(step)
        outcomes.append(outcome)
        if report is not None:
            report(outcome)
    return outcomes


async def apply_stream_when_ready(js: JetStreamContext, resource: StreamResource) -> Outcome:
    """:func:`apply_stream`, tried again while JetStream does not answer or has no leader yet
    (a cluster just started or just lost a node), up to the start budget."""
    return await retry_while_unavailable(_retried(js, resource, apply_stream))


def _retried(
    js: JetStreamContext,
    resource: R,
    apply: Callable[[JetStreamContext, R], Awaitable[Outcome]],
) -> Callable[[], Awaitable[Outcome]]:
    """One resource's step, JetStream's unavailability (no answer, no leader yet) raised as
    :class:`~poker.eventstore.api.StoreUnavailable` so that it is tried again."""

    async def step() -> Outcome:
        with unavailable_on_transient(f"provisioning {resource.label}"):
            return await apply(js, resource)

    return step
