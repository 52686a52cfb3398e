"""Ownership that costs per owner, not per name: one heartbeat per process, and claims on names
(tables) that refer to it, written once and never renewed.

**The representation**, in one lease bucket (:class:`~poker.eventstore.leases.LeaseSettings`,
whose ``max_age`` is the TTL):

- a *heartbeat* per owner process, key ``owner.<token of the owner id>``, value
  ``{"owner": id, "epoch": E}``, renewed every ``ttl/3`` by compare-and-set on its revision,
  so it ages out (``max_age``) ``ttl`` after the owner stops renewing. ``E`` is the KV revision
  of the write that started this heartbeat: each start of a heartbeat gets a larger one (the
  bucket's sequence never goes back), so an owner that restarts - even under the same id - has
  a new epoch;
- a *claim* per name, key ``<name>`` (names have no dots: they never meet a heartbeat key),
  value ``{"owner": id, "epoch": E}``, written with ``Nats-TTL: never`` so that the bucket's
  ``max_age`` does not age it out: it is written once when the name is taken and deleted when
  it is given up, never renewed.

**A name is owned** while its claim's heartbeat is alive: the heartbeat key holds the same
owner and the same epoch. Otherwise (no heartbeat: the owner stopped renewing and it aged out;
another epoch: the owner restarted) the name is free, and anyone may take it by compare-and-set
on the claim's revision (two takers: one wins). *A restarted owner must take its names again*,
like anybody else, through the takeover path (the dealer rebuilds the table and applies the crash
rule: the process that ran its hands is gone). A claim in the old form ``{"owner": id}`` (a
per-table lease of an earlier version, which ages out with the bucket's ``max_age``) counts as
owned while it exists, so a rolling upgrade never has two owners; so does a value this module
cannot read (never free a table on a value nobody of ours wrote: it ages out with the bucket's
``max_age`` unless written to last, which only the dealers' user may do).

**A dead heartbeat stays dead.** A renewal is a compare-and-set on the revision its owner last
wrote; once the key aged out (or was rewritten by a new start), that revision is gone and no
renewal can land: the owner learns it lost everything (:class:`~poker.eventstore.leases.LeaseLost`)
and must start a new epoch. So a taker that saw the heartbeat gone (or with another epoch) may
take the name, and the old epoch can never come back to contradict it.

**The holder's side** is the same argument as the per-name lease's
(:mod:`poker.eventstore.leases`): :attr:`Heartbeat.expires_at` is the holder's monotonic clock
when it *sent* its last confirmed write, plus the TTL; the server stamps the write later, so it
cannot age the heartbeat out (and let a taker in) before that deadline passes on the holder's
clock, clocks ticking at about the same rate. A holder acts as owner of its names only while its
heartbeat is valid (:meth:`HeartbeatKeeper.holds`): a process paused (SIGSTOP, a long GC, a VM
migration) past its deadline wakes up owning nothing.

Costs: one write per owner every ``ttl/3`` whatever the number of names it holds; one write per
name taken or given up; a taker reads the claim and its heartbeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import time
from dataclasses import dataclass
from typing import Protocol

import nats.errors
import nats.js.errors
import structlog
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from poker.eventstore.api import StoreUnavailable, retry_while_unavailable, verify_key
from poker.eventstore.buckets import bind_existing
from poker.eventstore.leases import Clock, LeaseLost, LeaseSettings
from poker.eventstore.nats_errors import is_wrong_last_sequence, unavailable_on_transient
from poker.eventstore.tasks import cancel_and_wait

_log = structlog.get_logger(__name__)

#: The prefix of heartbeat keys: names (log keys) have no dot, so no name is a heartbeat key.
HEARTBEAT_PREFIX = "owner."

#: The owner named for a claim whose value this module cannot read (see the module docstring).
UNREADABLE_OWNER = "(unreadable)"

#: The longest value read; anything longer is not one this module wrote.
_MAX_VALUE_BYTES = 4096
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
#: How many heartbeat epochs a store remembers as dead or alive before it starts afresh.
_REMEMBERED = 1024


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """One start of an owner's heartbeat, as of its last confirmed write.

    ``expires_at`` is on the holder's monotonic clock; past it the holder must assume every
    claim of this epoch is gone.
    """

    owner: str
    epoch: int
    revision: int
    expires_at: float

    def is_valid(self, clock: Clock = time.monotonic) -> bool:
        """Whether the holder may still act as the owner of its claims."""
        return clock() < self.expires_at


@dataclass(frozen=True, slots=True)
class Claim:
    """``name`` taken by ``owner`` in heartbeat epoch ``epoch``, at KV revision ``revision``."""

    name: str
    owner: str
    epoch: int
    revision: int


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a heartbeat or a claim value says: its owner and epoch (None: an old per-name
    lease value, which carries no epoch)."""

    owner: str
    epoch: int | None


def heartbeat_key(owner: str) -> str:
    """The heartbeat key of ``owner``: readable, and unique per owner id (its hash)."""
    if not owner or len(owner) > 256:
        raise ValueError("an owner id must be 1-256 characters")
    digest = hashlib.blake2b(owner.encode(), digest_size=8).hexdigest()
    return f"{HEARTBEAT_PREFIX}{_UNSAFE.sub('_', owner)[:64]}.{digest}"


def encode(owner: str, epoch: int) -> bytes:
    """A heartbeat's or a claim's value."""
    return json.dumps({"owner": owner, "epoch": epoch}, separators=(",", ":")).encode()


def decode(value: bytes | None) -> Stamp | None:
    """What ``value`` says, or None for anything this module (or the per-name leases) did not
    write: a value is data from the network, checked before it is believed."""
    if not value or len(value) > _MAX_VALUE_BYTES:
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    owner, epoch = parsed.get("owner"), parsed.get("epoch")
    if not isinstance(owner, str) or not owner:
        return None
    if epoch is None:
        return Stamp(owner, None)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        return None
    return Stamp(owner, epoch)


class HeartbeatStore(Protocol):
    """Heartbeats and the claims that refer to them; see the module docstring."""

    @property
    def ttl_s(self) -> float:
        """How long a heartbeat lives after its last write."""
        ...

    async def start(self, owner: str) -> Heartbeat:
        """A new epoch of ``owner``'s heartbeat (its claims of any earlier epoch are free)."""
        ...

    async def renew(self, heartbeat: Heartbeat) -> Heartbeat:
        """Extend ``heartbeat`` by the TTL; raises :class:`LeaseLost` if it is gone."""
        ...

    async def stop(self, heartbeat: Heartbeat) -> None:
        """Delete the heartbeat: every claim of its epoch is free at once."""
        ...

    async def claim(self, name: str, heartbeat: Heartbeat) -> Claim | None:
        """Take ``name`` for ``heartbeat``'s owner and epoch if it is free (or already this
        epoch's); None while a live heartbeat owns it."""
        ...

    async def release(self, claim: Claim) -> None:
        """Give ``claim`` up; does nothing if somebody took it since."""
        ...

    async def owner_of(self, name: str) -> str | None:
        """The owner whose live heartbeat ``name``'s claim refers to, or None."""
        ...


# --- in memory ------------------------------------------------------------------------------


class InMemoryHeartbeatStore:
    """:class:`HeartbeatStore` in dicts with an injectable clock, for unit tests."""

    def __init__(self, ttl_s: float, clock: Clock = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._beats: dict[str, tuple[int, int, float]] = {}  # owner: epoch, revision, expiry
        self._claims: dict[str, Claim] = {}
        self._revision = 0

    @property
    def ttl_s(self) -> float:
        """See :attr:`HeartbeatStore.ttl_s`."""
        return self._ttl_s

    def _next(self) -> int:
        self._revision += 1
        return self._revision

    def _alive(self, owner: str, epoch: int) -> bool:
        beat = self._beats.get(owner)
        return beat is not None and beat[0] == epoch and self._clock() < beat[2]

    async def start(self, owner: str) -> Heartbeat:
        """See :meth:`HeartbeatStore.start`."""
        heartbeat_key(owner)  # the same checks as the store's
        epoch = self._next()
        now = self._clock()
        self._beats[owner] = (epoch, epoch, now + self._ttl_s)
        return Heartbeat(owner, epoch, epoch, now + self._ttl_s)

    async def renew(self, heartbeat: Heartbeat) -> Heartbeat:
        """See :meth:`HeartbeatStore.renew`."""
        beat = self._beats.get(heartbeat.owner)
        if beat is None or beat[1] != heartbeat.revision or self._clock() >= beat[2]:
            raise LeaseLost(heartbeat_key(heartbeat.owner), heartbeat.owner, None)
        revision, now = self._next(), self._clock()
        self._beats[heartbeat.owner] = (heartbeat.epoch, revision, now + self._ttl_s)
        return Heartbeat(heartbeat.owner, heartbeat.epoch, revision, now + self._ttl_s)

    async def stop(self, heartbeat: Heartbeat) -> None:
        """See :meth:`HeartbeatStore.stop`."""
        beat = self._beats.get(heartbeat.owner)
        if beat is not None and beat[1] == heartbeat.revision:
            del self._beats[heartbeat.owner]

    async def claim(self, name: str, heartbeat: Heartbeat) -> Claim | None:
        """See :meth:`HeartbeatStore.claim`."""
        verify_key(name)
        held = self._claims.get(name)
        if held is not None:
            if (held.owner, held.epoch) == (heartbeat.owner, heartbeat.epoch):
                return held
            if self._alive(held.owner, held.epoch):
                return None
        claim = self._claims[name] = Claim(name, heartbeat.owner, heartbeat.epoch, self._next())
        return claim

    async def release(self, claim: Claim) -> None:
        """See :meth:`HeartbeatStore.release`."""
        if self._claims.get(claim.name) == claim:
            del self._claims[claim.name]

    async def owner_of(self, name: str) -> str | None:
        """See :meth:`HeartbeatStore.owner_of`."""
        verify_key(name)
        held = self._claims.get(name)
        return held.owner if held is not None and self._alive(held.owner, held.epoch) else None


# --- JetStream ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    """A key's live value and revision (``stamp`` None: a value nobody of ours wrote), or,
    for a key deleted or never written, ``stamp`` None and the revision to write over."""

    stamp: Stamp | None
    revision: int
    present: bool


class JetStreamHeartbeatStore:
    """:class:`HeartbeatStore` on a lease bucket (``max_age`` = the TTL; per-message TTLs
    allowed, as :func:`poker.servicekit.provisioning.lease_bucket` makes it).

    Call :meth:`bind_bucket` first. Nothing here creates or changes the bucket. A reader with
    read rights only (the wallet's reaper) uses :meth:`owner_of` alone.
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
        #: Epochs seen dead: a dead heartbeat never comes back (module docstring), so a
        #: taker never reads it again (forgotten past :data:`_REMEMBERED` epochs).
        self._dead: set[tuple[str, int]] = set()
        #: Epochs seen alive, until when (local monotonic): a scan that meets thousands of
        #: another dealer's tables reads its heartbeat once per tenth of the TTL, not once per
        #: table. Believing it alive a little longer only delays a takeover, never allows one.
        self._alive_until: dict[tuple[str, int], float] = {}

    @property
    def ttl_s(self) -> float:
        """See :attr:`HeartbeatStore.ttl_s`."""
        return self.settings.ttl_s

    async def bind_bucket(self, *, patient: bool = True) -> bool:
        """Bind to the bucket, never creating it; whether it exists. ``patient``: retried while
        JetStream does not answer, like
        :meth:`~poker.eventstore.leases.JetStreamLeaseStore.bind_bucket` (a service's start);
        else one try (a periodic reader, which tries again at its next round)."""
        if patient:
            return await retry_while_unavailable(self._bind_once)
        return await self._bind_once()

    async def _bind_once(self) -> bool:
        self._kv = await bind_existing(self._js, self.settings.bucket)
        return self._kv is not None

    @property
    def _bucket(self) -> KeyValue:
        if self._kv is None:
            raise RuntimeError("call bind_bucket() before using the heartbeat store")
        return self._kv

    async def _entry(self, key: str) -> _Entry:
        try:
            entry = await self._bucket.get(key)
        except nats.js.errors.KeyNotFoundError as gone:
            # Never written or aged out (no entry: write on revision 0), or deleted: nats-py
            # reports a delete marker as not found with the marker as its entry, and a write
            # must name the marker's revision.
            marker = gone.entry
            return _Entry(None, (marker.revision or 0) if marker is not None else 0, False)
        return _Entry(decode(entry.value), entry.revision or 0, True)

    async def _write(self, key: str, value: bytes, last: int, *, forever: bool) -> int | None:
        """Compare-and-set ``key`` on revision ``last`` (0: absent); its new revision, or None
        when the revision moved. ``forever``: exempt from the bucket's ``max_age``."""
        headers = {"Nats-Expected-Last-Subject-Sequence": str(last)}
        if forever:
            headers["Nats-TTL"] = "never"
        try:
            ack = await self._js.publish(
                f"$KV.{self.settings.bucket}.{key}", value, headers=headers
            )
        except nats.js.errors.APIError as error:
            if is_wrong_last_sequence(error):
                return None
            raise
        return ack.seq

    async def start(self, owner: str) -> Heartbeat:
        """See :meth:`HeartbeatStore.start`: two writes, the second naming the epoch (the
        revision of the first), each over whatever the key held."""
        key = heartbeat_key(owner)
        with unavailable_on_transient(f"starting the heartbeat of {owner!r}"):
            for _ in range(5):
                current = await self._entry(key)
                epoch = await self._write(key, encode(owner, 0), current.revision, forever=False)
                if epoch is None:
                    continue
                sent_at = self._clock()
                revision = await self._write(key, encode(owner, epoch), epoch, forever=False)
                if revision is not None:
                    return Heartbeat(owner, epoch, revision, sent_at + self.ttl_s)
        raise StoreUnavailable(f"the heartbeat key of {owner!r} kept changing under its start")

    async def renew(self, heartbeat: Heartbeat) -> Heartbeat:
        """See :meth:`HeartbeatStore.renew`."""
        key, owner, epoch = heartbeat_key(heartbeat.owner), heartbeat.owner, heartbeat.epoch
        with unavailable_on_transient(f"renewing the heartbeat of {owner!r}"):
            sent_at = self._clock()
            revision = await self._write(
                key, encode(owner, epoch), heartbeat.revision, forever=False
            )
            if revision is None:
                # A renewal whose reply was lost may have landed: the value still names this
                # epoch. Anything else (gone, another epoch) is the end of this epoch.
                current = await self._entry(key)
                if current.stamp != Stamp(owner, epoch):
                    raise LeaseLost(key, owner, None if current.stamp is None else "a new epoch")
                sent_at = self._clock()
                revision = await self._write(
                    key, encode(owner, epoch), current.revision, forever=False
                )
                if revision is None:
                    raise LeaseLost(key, owner, None)
        return Heartbeat(owner, epoch, revision, sent_at + self.ttl_s)

    async def stop(self, heartbeat: Heartbeat) -> None:
        """See :meth:`HeartbeatStore.stop` (a delete marker on our revision; it ages out)."""
        with unavailable_on_transient(f"stopping the heartbeat of {heartbeat.owner!r}"):
            try:
                await self._bucket.delete(heartbeat_key(heartbeat.owner), last=heartbeat.revision)
            except nats.js.errors.APIError as error:
                if not is_wrong_last_sequence(error):
                    raise

    async def _alive(self, stamp: Stamp) -> bool:
        """Whether the heartbeat a claim names is alive (an old per-name lease: yes, while its
        key exists, which the caller has just read)."""
        if stamp.epoch is None:
            return True
        epoch = (stamp.owner, stamp.epoch)
        if epoch in self._dead:
            return False
        now = self._clock()
        if self._alive_until.get(epoch, now) > now:
            return True
        alive = (await self._entry(heartbeat_key(stamp.owner))).stamp == stamp
        if len(self._dead) + len(self._alive_until) >= _REMEMBERED:
            self._dead.clear()
            self._alive_until.clear()
        if alive:
            self._alive_until[epoch] = now + self.ttl_s / 10
        else:
            self._alive_until.pop(epoch, None)
            self._dead.add(epoch)
        return alive

    async def claim(self, name: str, heartbeat: Heartbeat) -> Claim | None:
        """See :meth:`HeartbeatStore.claim`."""
        verify_key(name)
        mine = Stamp(heartbeat.owner, heartbeat.epoch)
        with unavailable_on_transient(f"claiming {name!r}"):
            current = await self._entry(name)
            if current.stamp == mine:
                return Claim(name, heartbeat.owner, heartbeat.epoch, current.revision)
            if current.present and (current.stamp is None or await self._alive(current.stamp)):
                return None
            value = encode(heartbeat.owner, heartbeat.epoch)
            revision = await self._write(name, value, current.revision, forever=True)
        if revision is None:
            return None  # another taker wrote first
        return Claim(name, heartbeat.owner, heartbeat.epoch, revision)

    async def release(self, claim: Claim) -> None:
        """See :meth:`HeartbeatStore.release` (a delete marker on our revision; it ages out)."""
        with unavailable_on_transient(f"releasing {claim.name!r}"):
            try:
                await self._bucket.delete(claim.name, last=claim.revision)
            except nats.js.errors.APIError as error:
                if not is_wrong_last_sequence(error):
                    raise

    async def owner_of(self, name: str) -> str | None:
        """See :meth:`HeartbeatStore.owner_of`: read-only (two key reads; a heartbeat seen
        alive is believed for a tenth of the TTL more, so an owner gone just now may still be
        named that long)."""
        verify_key(name)
        with unavailable_on_transient(f"reading the owner of {name!r}"):
            current = await self._entry(name)
            if not current.present:
                return None
            if current.stamp is None:
                return UNREADABLE_OWNER
            if not await self._alive(current.stamp):
                return None
        return current.stamp.owner


# --- keeping a heartbeat --------------------------------------------------------------------


class HeartbeatKeeper:
    """Renews one heartbeat every ``interval_s`` (default ``ttl/3``) until stopped, and says when
    it is lost: refused (:class:`LeaseLost`), or its holder-side deadline passed while the
    store did not answer. A renewal that fails for a transient reason is retried sooner
    (``interval_s / 3``): one heartbeat carries every claim."""

    def __init__(
        self,
        store: HeartbeatStore,
        heartbeat: Heartbeat,
        *,
        interval_s: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._store = store
        self._heartbeat = heartbeat
        self._interval_s = interval_s if interval_s is not None else store.ttl_s / 3
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        #: Set once the heartbeat is lost; never cleared.
        self.lost = asyncio.Event()

    @property
    def heartbeat(self) -> Heartbeat:
        """The latest confirmed renewal."""
        return self._heartbeat

    def holds(self) -> bool:
        """Whether the holder may act as owner right now: not lost, and its own deadline (the
        last confirmed write's send time plus the TTL, on the local monotonic clock) not passed."""
        return not self.lost.is_set() and self._heartbeat.is_valid(self._clock)

    def start(self) -> None:
        """Start renewing in the background."""
        if self._task is None:
            self._task = asyncio.create_task(self._renew_until_lost(), name="heartbeat-keeper")

    async def stop(self, *, release: bool = True) -> None:
        """Stop renewing; unless told otherwise or already lost, delete the heartbeat."""
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
        if release and not self.lost.is_set():
            with contextlib.suppress(StoreUnavailable):
                await self._store.stop(self._heartbeat)
        self.lost.set()

    async def _renew_until_lost(self) -> None:
        wait = self._interval_s
        while not self.lost.is_set():
            await asyncio.sleep(wait)
            wait = self._interval_s
            try:
                self._heartbeat = await self._store.renew(self._heartbeat)
            except LeaseLost as error:
                _log.warning("heartbeat_lost", owner=self._heartbeat.owner, reason=str(error))
                self.lost.set()
            except (StoreUnavailable, nats.errors.Error) as error:
                if not self._heartbeat.is_valid(self._clock):
                    _log.warning(
                        "heartbeat_expired", owner=self._heartbeat.owner, reason=str(error)
                    )
                    self.lost.set()
                else:
                    _log.info(
                        "heartbeat_renew_retry", owner=self._heartbeat.owner, reason=str(error)
                    )
                    wait = self._interval_s / 3


__all__ = [
    "HEARTBEAT_PREFIX",
    "UNREADABLE_OWNER",
    "Claim",
    "Heartbeat",
    "HeartbeatKeeper",
    "HeartbeatStore",
    "InMemoryHeartbeatStore",
    "JetStreamHeartbeatStore",
    "Stamp",
    "decode",
    "encode",
    "heartbeat_key",
]
