"""Leases: at most one owner of a name (the wallet's writer role) at a time, with expiry.

Each lease here is renewed on its own: right for one name (the wallet leader's), wrong for
thousands. The dealers' tables use :mod:`poker.eventstore.heartbeats` instead: one heartbeat per
dealer, renewed, and per table a claim that refers to it, never renewed (in the same kind of
bucket; a per-table lease value written here reads there as a claim without epoch).

A lease is a key in a JetStream Key-Value bucket whose value names its owner. Acquiring is
``kv.create`` (it lands only if the key is absent), renewing and releasing are compare-and-set on
the revision the owner last wrote, so a writer that lost the lease can neither renew nor release
it. An owner that dies stops renewing, and its lease ages out after the TTL.

**Why the bucket's TTL (stream ``max_age``) and not a per-message TTL.** Every value in a lease
bucket is a lease with the same lifetime, and with ``max_age`` the expiry is a property of the
bucket: each write (acquire or renew) gets a fresh age on the server, and no writer can forget to
set it. A per-message TTL (``Nats-TTL``, nats-server 2.11+) would have to be attached by every
single write: nats-py's ``kv.update`` - the compare-and-set a renew needs - takes no TTL, so
renews would hand-build their headers, and one renew that left it off would make a lease that
never expires. nats-py also rounds a message TTL down to whole seconds, while ``max_age`` is exact.
Either way the server alone decides expiry, on its own clock, so client clocks never disagree
about it.

**Safety on the holder's side.** :attr:`Lease.expires_at` is the holder's monotonic clock *when
it sent* the write plus the TTL; the server stamps the write later than that, so the server
cannot expire the lease (and let another owner in) before the holder's own deadline passes, as
long as the two clocks tick at about the same rate (a server clock stepped forward would shorten
leases). An owner acts as owner only while :meth:`Lease.is_valid` holds and renews well before
(see :class:`LeaseKeeper`). Writers are fenced again where it matters: table appends carry the
expected last sequence, so even a paused ex-owner cannot write over its successor.

**Owner ids must be unique per process** (e.g. host, pid and a random suffix): the value's owner
is how a holder recognises its own lease after a lost reply, and acquire is re-entrant for the
same owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import nats.errors
import nats.js.errors
import structlog
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from poker.eventstore.api import (
    EventStoreError,
    StoreUnavailable,
    retry_while_unavailable,
    verify_key,
)
from poker.eventstore.buckets import bind_existing
from poker.eventstore.defaults import DEFAULT_LEASE_BUCKET, DEFAULT_LEASE_TTL_S, DEFAULT_REPLICAS
from poker.eventstore.nats_errors import is_wrong_last_sequence, unavailable_on_transient
from poker.eventstore.tasks import cancel_and_wait

Clock = Callable[[], float]

_log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Lease:
    """Proof of ownership of ``name`` by ``owner`` as of ``revision``.

    ``expires_at`` is on the holder's monotonic clock; past it the holder must assume it no
    longer owns the name, whatever the server still says.
    """

    name: str
    owner: str
    revision: int
    expires_at: float

    def is_valid(self, clock: Clock = time.monotonic) -> bool:
        """Whether the holder may still act as the owner."""
        return clock() < self.expires_at


class LeaseLost(EventStoreError):
    """The lease expired or another owner holds it now; stop acting as its owner."""

    def __init__(self, name: str, owner: str, holder: str | None) -> None:
        now_held = f"now held by {holder!r}" if holder else "expired and is free"
        super().__init__(f"{owner!r} lost the lease on {name!r}: it {now_held}")
        self.name = name
        self.owner = owner
        self.holder = holder


class LeaseStore(Protocol):
    """Named leases with expiry; see the module docstring for the guarantees."""

    @property
    def ttl_s(self) -> float:
        """How long a lease lives after its last acquire or renew."""
        ...

    async def acquire(self, name: str, owner: str) -> Lease | None:
        """The lease on ``name`` for ``owner``, or None while someone else holds it.

        Re-entrant: if ``owner`` already holds it (say, after a lost reply), it is renewed.
        """
        ...

    async def renew(self, lease: Lease) -> Lease:
        """Extend ``lease`` by the TTL; raises :class:`LeaseLost` if it is gone."""
        ...

    async def release(self, lease: Lease) -> None:
        """Give ``lease`` up at once; does nothing if it was already lost."""
        ...

    async def owner_of(self, name: str) -> str | None:
        """Who holds ``name`` right now, or None."""
        ...


def _verify_owner(owner: str) -> None:
    if not owner or len(owner) > 256:
        raise ValueError("an owner id must be 1-256 characters")


# --- in memory ------------------------------------------------------------------------------


@dataclass(slots=True)
class _HeldLease:
    owner: str
    revision: int
    server_expires_at: float


class InMemoryLeaseStore:
    """:class:`LeaseStore` in a dict with an injectable clock, for unit tests and tools."""

    def __init__(self, ttl_s: float, clock: Clock = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._held: dict[str, _HeldLease] = {}
        self._revision = 0

    @property
    def ttl_s(self) -> float:
        """See :attr:`LeaseStore.ttl_s`."""
        return self._ttl_s

    def _live(self, name: str) -> _HeldLease | None:
        held = self._held.get(name)
        if held is not None and self._clock() >= held.server_expires_at:
            del self._held[name]
            return None
        return held

    def _write(self, name: str, owner: str) -> Lease:
        self._revision += 1
        now = self._clock()
        self._held[name] = _HeldLease(owner, self._revision, now + self._ttl_s)
        return Lease(name, owner, self._revision, now + self._ttl_s)

    async def acquire(self, name: str, owner: str) -> Lease | None:
        """See :meth:`LeaseStore.acquire`."""
        verify_key(name)
        _verify_owner(owner)
        held = self._live(name)
        if held is not None and held.owner != owner:
            return None
        return self._write(name, owner)

    async def renew(self, lease: Lease) -> Lease:
        """See :meth:`LeaseStore.renew`."""
        held = self._live(lease.name)
        if held is None or held.owner != lease.owner:
            raise LeaseLost(lease.name, lease.owner, held.owner if held else None)
        return self._write(lease.name, lease.owner)

    async def release(self, lease: Lease) -> None:
        """See :meth:`LeaseStore.release`."""
        held = self._live(lease.name)
        if held is not None and held.owner == lease.owner:
            del self._held[lease.name]

    async def owner_of(self, name: str) -> str | None:
        """See :meth:`LeaseStore.owner_of`."""
        verify_key(name)
        held = self._live(name)
        return None if held is None else held.owner


# --- JetStream ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeaseSettings:
    """The KV bucket of leases and their TTL (the bucket's ``max_age``).

    Renew at most every ``ttl_s / 3`` so that two renews can fail before the lease is lost.
    """

    bucket: str = DEFAULT_LEASE_BUCKET
    ttl_s: float = DEFAULT_LEASE_TTL_S
    replicas: int = DEFAULT_REPLICAS


#: The longest lease value read: ``{"owner": ...}`` with an owner id of 256 characters, each
#: escaped to at most 12 bytes.
_MAX_VALUE_BYTES = 4096


def _encode(owner: str) -> bytes:
    return json.dumps({"owner": owner}, separators=(",", ":")).encode()


def _decode(value: bytes | None) -> str | None:
    """The owner recorded in a lease value; None for anything this module did not write."""
    if value is not None and len(value) > _MAX_VALUE_BYTES:
        return None  # not a value this module writes; a deep nesting would blow the stack
    try:
        owner = json.loads(value or b"null")["owner"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    return owner if isinstance(owner, str) else None


class JetStreamLeaseStore:
    """:class:`LeaseStore` on a JetStream KV bucket whose ``max_age`` is the lease TTL.

    Call :meth:`bind_bucket` first. The bucket is the operator's (its ``max_age`` is the TTL,
    see poker.servicekit.provisioning); nothing here creates or changes it.
    """

    def __init__(
        self,
        js: JetStreamContext,
        settings: LeaseSettings | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._js = js
        self.settings = settings or LeaseSettings()
        self._clock = clock
        self._kv: KeyValue | None = None

    @property
    def ttl_s(self) -> float:
        """See :attr:`LeaseStore.ttl_s`."""
        return self.settings.ttl_s

    async def bind_bucket(self) -> bool:
        """Bind to the bucket, never creating or changing it (the operator provisions it with
        the TTL; the services check it first); returns whether it exists. Retried while
        JetStream does not answer, up to :data:`~poker.eventstore.api.START_BUDGET_S`."""
        return await retry_while_unavailable(self._bind_once)

    async def _bind_once(self) -> bool:
        self._kv = await bind_existing(self._js, self.settings.bucket)
        return self._kv is not None

    @property
    def _bucket(self) -> KeyValue:
        if self._kv is None:
            raise RuntimeError("call bind_bucket() before using the lease store")
        return self._kv

    async def acquire(self, name: str, owner: str) -> Lease | None:
        """See :meth:`LeaseStore.acquire`."""
        verify_key(name)
        _verify_owner(owner)
        with unavailable_on_transient(f"acquiring the lease on {name!r}"):
            sent_at = self._clock()
            try:
                revision = await self._bucket.create(name, _encode(owner))
            except nats.js.errors.KeyWrongLastSequenceError:
                return await self._reacquire_own(name, owner)
        return Lease(name, owner, revision, sent_at + self.ttl_s)

    async def _reacquire_own(self, name: str, owner: str) -> Lease | None:
        """The key is taken: ours (renew it) or someone else's (None)."""
        current = await self._current(name)
        if current is None or current[0] != owner:
            # Absent here means it expired between our create and this read: report it as
            # taken rather than loop; the caller's next attempt will find it free.
            return None
        try:
            return await self._write(name, owner, revision=current[1])
        except nats.js.errors.KeyWrongLastSequenceError:
            return None

    async def renew(self, lease: Lease) -> Lease:
        """See :meth:`LeaseStore.renew`."""
        with unavailable_on_transient(f"renewing the lease on {lease.name!r}"):
            try:
                return await self._write(lease.name, lease.owner, revision=lease.revision)
            except nats.js.errors.KeyWrongLastSequenceError:
                pass
            # The revision moved. If the value still names us, a renew of ours whose reply was
            # lost landed: owner ids are unique per process, so nobody else wrote our name.
            current = await self._current(lease.name)
            if current is None or current[0] != lease.owner:
                raise LeaseLost(lease.name, lease.owner, current[0] if current else None)
            try:
                return await self._write(lease.name, lease.owner, revision=current[1])
            except nats.js.errors.KeyWrongLastSequenceError:
                raise LeaseLost(lease.name, lease.owner, await self.owner_of(lease.name)) from None

    async def release(self, lease: Lease) -> None:
        """See :meth:`LeaseStore.release`; a delete marker conditional on our revision."""
        with unavailable_on_transient(f"releasing the lease on {lease.name!r}"):
            try:
                await self._bucket.delete(lease.name, last=lease.revision)
            except nats.js.errors.APIError as error:
                if not is_wrong_last_sequence(error):
                    raise
                # Someone else's now, or expired: nothing of ours left to release.

    async def owner_of(self, name: str) -> str | None:
        """See :meth:`LeaseStore.owner_of`."""
        verify_key(name)
        with unavailable_on_transient(f"reading the lease on {name!r}"):
            current = await self._current(name)
        return None if current is None else current[0]

    async def _current(self, name: str) -> tuple[str | None, int] | None:
        """The owner named by the live value of ``name`` and its revision, or None if free."""
        try:
            entry = await self._bucket.get(name)
        except nats.js.errors.KeyNotFoundError:  # absent, expired, or released (deleted)
            return None
        if entry.revision is None:
            return None
        return _decode(entry.value), entry.revision

    async def _write(self, name: str, owner: str, *, revision: int) -> Lease:
        sent_at = self._clock()
        new_revision = await self._bucket.update(name, _encode(owner), last=revision)
        return Lease(name, owner, new_revision, sent_at + self.ttl_s)


# --- keeping a lease ------------------------------------------------------------------------


class LeaseKeeper:
    """Renews a held lease in the background until stopped, and says when it is lost.

    >>> # async with LeaseKeeper(store, lease) as keeper:
    >>> #     while keeper.holds(): ...  # act as owner
    >>> #     # or: await keeper.lost.wait()

    A renew that fails for a transient reason is retried at the next tick; the lease counts as
    lost once it is refused (:class:`LeaseLost`) or its holder-side deadline passes.
    """

    def __init__(
        self,
        store: LeaseStore,
        lease: Lease,
        *,
        interval_s: float | None = None,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self._store = store
        self._lease = lease
        self._interval_s = interval_s if interval_s is not None else store.ttl_s / 3
        self._clock = clock
        self._rng = rng or random.Random()
        self._task: asyncio.Task[None] | None = None
        #: Set once the lease is lost; never cleared.
        self.lost = asyncio.Event()

    @property
    def lease(self) -> Lease:
        """The latest renewal of the lease."""
        return self._lease

    def holds(self) -> bool:
        """Whether the holder may act as owner right now."""
        return not self.lost.is_set() and self._lease.is_valid(self._clock)

    def start(self) -> None:
        """Start renewing in the background."""
        if self._task is None:
            self._task = asyncio.create_task(self._renew_until_lost(), name="lease-keeper")

    async def stop(self, *, release: bool = True) -> None:
        """Stop renewing and, unless told otherwise or already lost, release the lease."""
        if self._task is not None:
            await cancel_and_wait(self._task)  # again if a renewal's reply dropped the cancel
            self._task = None
        if release and not self.lost.is_set():
            with contextlib.suppress(StoreUnavailable):
                await self._store.release(self._lease)
            self.lost.set()

    async def __aenter__(self) -> LeaseKeeper:
        self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    def next_wait(self) -> float:
        """Seconds until the next renewal: 0.8-1.2 intervals, drawn afresh each time.

        Leases taken in one burst (a dealer that starts, or takes over hundreds of tables at
        once) would otherwise be renewed in one burst every interval, for as long as they are
        held, and hold up the commands queued behind them. The longest wait, 1.2 x TTL/3 by
        default, still leaves 60 % of the TTL.
        """
        return self._interval_s * self._rng.uniform(0.8, 1.2)

    async def _renew_until_lost(self) -> None:
        while not self.lost.is_set():
            await asyncio.sleep(self.next_wait())
            try:
                self._lease = await self._store.renew(self._lease)
            except LeaseLost as error:
                _log.warning("lease_lost", lease=self._lease.name, reason=str(error))
                self.lost.set()
            except StoreUnavailable as error:
                if not self._lease.is_valid(self._clock):
                    _log.warning("lease_expired", lease=self._lease.name, reason=str(error))
                    self.lost.set()
                else:
                    _log.info("lease_renew_retry", lease=self._lease.name, reason=str(error))
