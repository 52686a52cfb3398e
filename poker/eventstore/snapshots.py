"""Snapshots of aggregate state, so a rebuild reads a snapshot and only the events after it.

A snapshot is the state folded up to a log position, as opaque bytes. The store keeps one per key
and never lets an older snapshot replace a newer one: two writers (a dealer that lost its lease
and the one that took it over) may save concurrently, and the greater position wins whatever the
order the saves arrive in. A snapshot is an optimization: losing one costs a longer replay, never
correctness, so callers may treat a failed save as a warning. On JetStream a snapshot larger than
one bucket value is stored in chunks under the key's head, which is written last (see
:class:`JetStreamSnapshotStore`): a growing state never outgrows its snapshots.

>>> import asyncio
>>> store = InMemorySnapshotStore()
>>> asyncio.run(store.save("t1", 10, b"state@10"))
True
>>> asyncio.run(store.save("t1", 7, b"state@7"))  # a stale writer changes nothing
False
>>> asyncio.run(store.load("t1"))
Snapshot(position=10, data=b'state@10')
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
import struct
from dataclasses import dataclass
from typing import Protocol

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from poker.eventstore.api import (
    EventStoreError,
    retry_while_unavailable,
    verify_key,
)
from poker.eventstore.buckets import bind_existing
from poker.eventstore.defaults import DEFAULT_REPLICAS, DEFAULT_SNAPSHOT_BUCKET
from poker.eventstore.nats_errors import unavailable_on_transient

#: Value layout: a format byte, the position as an unsigned 64-bit big-endian int, then the data.
_HEADER = struct.Struct(">BQ")
_FORMAT_V1 = 1
#: A chunked snapshot's head: the header (format 2), then the chunk count, the data's length, its
#: SHA-256 and the save's own tag; the data is in the values ``<key>.p<position>.<tag>.<index>``
#: (the tag keeps two writers of one position from mixing or deleting each other's chunks).
_FORMAT_CHUNKED = 2
_MANIFEST = struct.Struct(">IQ32s8s")

#: Every failed compare-and-set means another writer saved in between; a save gives up after this
#: many, which takes a storm of concurrent writers on one key that the design never produces.
MAX_SAVE_ATTEMPTS = 16


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state of one aggregate folded up to and including log ``position``."""

    position: int
    data: bytes


class SnapshotConflict(EventStoreError):
    """A save lost its compare-and-set :data:`MAX_SAVE_ATTEMPTS` times in a row."""


class CorruptSnapshot(EventStoreError):
    """A stored value is not in a format this code wrote; rebuild from the log instead."""


class SnapshotStore(Protocol):
    """One snapshot per key; a save never replaces a snapshot of a greater or equal position."""

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """Store ``data`` as the snapshot of ``key`` at ``position`` unless the stored one is at
        ``position`` or later. Returns whether this snapshot is now the stored one."""
        ...

    async def load(self, key: str) -> Snapshot | None:
        """The stored snapshot of ``key``, or None if there is none."""
        ...


def encode_snapshot(snapshot: Snapshot) -> bytes:
    """The stored form of ``snapshot``: header (format, position) then data."""
    return _HEADER.pack(_FORMAT_V1, snapshot.position) + snapshot.data


def decode_snapshot(value: bytes) -> Snapshot:
    """The snapshot stored as ``value``; raises :class:`CorruptSnapshot` on a foreign format."""
    if len(value) < _HEADER.size:
        raise CorruptSnapshot(f"a stored snapshot of {len(value)} bytes has no header")
    version, position = _HEADER.unpack_from(value)
    if version != _FORMAT_V1:
        raise CorruptSnapshot(f"stored snapshot format {version} is unknown")
    return Snapshot(position=position, data=value[_HEADER.size :])


def _verify_head(value: bytes) -> None:
    """Raise :class:`CorruptSnapshot` unless ``value`` is a head this code wrote."""
    if len(value) < _HEADER.size:
        raise CorruptSnapshot(f"a stored snapshot of {len(value)} bytes has no header")
    version = value[0]
    if version == _FORMAT_CHUNKED and len(value) != _HEADER.size + _MANIFEST.size:
        raise CorruptSnapshot("a chunked snapshot's head has the wrong size")
    if version not in (_FORMAT_V1, _FORMAT_CHUNKED):
        raise CorruptSnapshot(f"stored snapshot format {version} is unknown")


def _head_position(value: bytes) -> int:
    position: int = _HEADER.unpack_from(value)[1]
    return position


def _chunk_name(key: str, position: int, tag: bytes, index: int) -> str:
    return f"{key}.p{position}.{tag.decode()}.{index}"


#: What separates a log's key from the name of a value kept beside its snapshot (say, a
#: command index's archived runs: ``<key>.a.<name>``). A log key holds no dot, so these never
#: meet a snapshot's key, nor its chunks' (``<key>.p<position>...``).
BESIDE: str = ".a."
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def beside(key: str, name: str) -> str:
    """The store key of the value ``name`` kept beside the snapshot of log ``key``.

    >>> beside("t1", "cix-40-00ff")
    't1.a.cix-40-00ff'
    """
    verify_key(key)
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a valid name: use 1-64 letters, digits, '-' and '_'.")
    return f"{key}{BESIDE}{name}"


def _verify_store_key(key: str) -> None:
    """Raise ValueError unless ``key`` is a log's key or a value's beside it (:func:`beside`)."""
    log_key, separator, name = key.partition(BESIDE)
    verify_key(log_key)
    if separator and not _NAME.fullmatch(name):
        raise ValueError(f"{key!r} is not a valid snapshot key")


def _verify_position(position: int) -> None:
    if not 0 < position < 2**64:
        raise ValueError(f"a snapshot position must be a positive 64-bit integer, not {position}")


class InMemorySnapshotStore:
    """:class:`SnapshotStore` in a dict, for unit tests and tools."""

    def __init__(self) -> None:
        self._snapshots: dict[str, Snapshot] = {}

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """See :meth:`SnapshotStore.save`."""
        _verify_store_key(key)
        _verify_position(position)
        current = self._snapshots.get(key)
        if current is not None and current.position >= position:
            return False
        self._snapshots[key] = Snapshot(position, bytes(data))
        return True

    async def load(self, key: str) -> Snapshot | None:
        """See :meth:`SnapshotStore.load`."""
        _verify_store_key(key)
        return self._snapshots.get(key)


@dataclass(frozen=True, slots=True)
class SnapshotSettings:
    """The KV bucket that holds snapshots; one value per key, no expiry."""

    bucket: str = DEFAULT_SNAPSHOT_BUCKET
    replicas: int = DEFAULT_REPLICAS
    max_value_bytes: int = 1024 * 1024
    #: Larger snapshots are stored in chunks of this size (below the bucket's value limit and
    #: NATS's default 1 MB message limit).
    chunk_bytes: int = 512 * 1024


class JetStreamSnapshotStore:
    """:class:`SnapshotStore` on a JetStream Key-Value bucket, saved by compare-and-set.

    A save reads the stored revision, and writes with ``kv.update(last=revision)`` (or
    ``kv.create`` when the key is absent); JetStream refuses the write if anyone wrote the key in
    between, and the save starts over from the fresh read. Call :meth:`bind_bucket` first.

    A snapshot above ``chunk_bytes`` goes in chunks: they are written first, under names that
    carry the position and a tag of the save (``<key>.p<position>.<tag>.<index>``), then the
    key's head - the position, the chunk count, the length, the SHA-256 of the whole and the tag -
    by the same compare-and-set. A reader never sees a head whose chunks are not all there; the
    chunks of a replaced head (and of a save that lost) are deleted afterwards. A head whose
    chunks went missing or do not match the digest is reported as :class:`CorruptSnapshot` (the
    caller rebuilds from the log).
    """

    def __init__(self, js: JetStreamContext, settings: SnapshotSettings | None = None) -> None:
        self._js = js
        self.settings = settings or SnapshotSettings()
        self._kv: KeyValue | None = None

    async def bind_bucket(self) -> bool:
        """Bind to the bucket if it exists, never creating or changing it (the operator
        provisions it, see poker.servicekit.provisioning); returns whether it exists. Retried
        while JetStream does not answer, up to :data:`~poker.eventstore.api.START_BUDGET_S`."""
        return await retry_while_unavailable(self._bind_once)

    async def _bind_once(self) -> bool:
        self._kv = await bind_existing(self._js, self.settings.bucket)
        return self._kv is not None

    @property
    def _bucket(self) -> KeyValue:
        if self._kv is None:
            raise RuntimeError("call bind_bucket() before using the snapshot store")
        return self._kv

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """See :meth:`SnapshotStore.save`; raises :class:`SnapshotConflict` or
        :class:`~poker.eventstore.api.StoreUnavailable`."""
        _verify_store_key(key)
        _verify_position(position)
        chunk = self.settings.chunk_bytes
        with unavailable_on_transient(f"saving the snapshot of {key!r}"):
            if _HEADER.size + len(data) <= chunk:
                value = encode_snapshot(Snapshot(position, data))
            else:
                value = await self._write_chunks(key, position, data)
            for _ in range(MAX_SAVE_ATTEMPTS):
                current = await self._entry(key)
                if current is None:
                    written = await self._try_write(key, value, revision=None)
                elif _head_position(current[0]) >= position:
                    await self._delete_chunks(key, value)  # ours, never to be read
                    return False
                else:
                    written = await self._try_write(key, value, revision=current[1])
                if written:
                    if current is not None:
                        await self._delete_chunks(key, current[0])
                    return True
            await self._delete_chunks(key, value)  # never named by the head
        raise SnapshotConflict(
            f"the snapshot of {key!r} kept changing under {MAX_SAVE_ATTEMPTS} save attempts"
        )

    async def _write_chunks(self, key: str, position: int, data: bytes) -> bytes:
        """Store ``data`` in chunks; the head value that names them."""
        size = self.settings.chunk_bytes
        count = (len(data) + size - 1) // size
        tag = secrets.token_hex(4).encode()
        for index in range(count):
            await self._bucket.put(
                _chunk_name(key, position, tag, index), data[index * size : (index + 1) * size]
            )
        manifest = _MANIFEST.pack(count, len(data), hashlib.sha256(data).digest(), tag)
        return _HEADER.pack(_FORMAT_CHUNKED, position) + manifest

    async def _delete_chunks(self, key: str, head: bytes) -> None:
        """Delete the chunks ``head`` names, if it is a chunked head (best effort: a leftover
        chunk costs space, never a wrong snapshot)."""
        if head[:1] != bytes([_FORMAT_CHUNKED]):
            return
        _, position = _HEADER.unpack_from(head)
        count, _, _, tag = _MANIFEST.unpack_from(head, _HEADER.size)
        for index in range(count):
            with contextlib.suppress(nats.js.errors.KeyNotFoundError):
                await self._bucket.delete(_chunk_name(key, position, tag, index))

    async def load(self, key: str) -> Snapshot | None:
        """See :meth:`SnapshotStore.load`."""
        _verify_store_key(key)
        with unavailable_on_transient(f"loading the snapshot of {key!r}"):
            for _ in range(MAX_SAVE_ATTEMPTS):
                entry = await self._entry(key)
                if entry is None:
                    return None
                head = entry[0]
                if head[:1] != bytes([_FORMAT_CHUNKED]):
                    return decode_snapshot(head)
                data = await self._read_chunks(key, head)
                if data is not None:
                    return Snapshot(_head_position(head), data)
                # A chunk is gone: a newer save replaced this head meanwhile; read it again.
        raise CorruptSnapshot(f"the chunks of the snapshot of {key!r} are missing")

    async def _read_chunks(self, key: str, head: bytes) -> bytes | None:
        """The data a chunked head names, checked against its digest; None if a chunk is gone."""
        position = _head_position(head)
        count, length, digest, tag = _MANIFEST.unpack_from(head, _HEADER.size)
        parts = []
        for index in range(count):
            try:
                entry = await self._bucket.get(_chunk_name(key, position, tag, index))
            except nats.js.errors.KeyNotFoundError:
                return None
            parts.append(entry.value or b"")
        data = b"".join(parts)
        if len(data) != length or hashlib.sha256(data).digest() != digest:
            raise CorruptSnapshot(f"the snapshot of {key!r} does not match its digest")
        return data

    async def _entry(self, key: str) -> tuple[bytes, int] | None:
        """The stored head value of ``key`` (checked) and its KV revision, or None."""
        try:
            entry = await self._bucket.get(key)
        except nats.js.errors.KeyNotFoundError:  # also raised for a deleted key
            return None
        if entry.value is None or entry.revision is None:
            return None
        _verify_head(entry.value)
        return entry.value, entry.revision

    async def _try_write(self, key: str, value: bytes, *, revision: int | None) -> bool:
        """One compare-and-set; False if another writer got there first."""
        try:
            if revision is None:
                await self._bucket.create(key, value)
            else:
                await self._bucket.update(key, value, last=revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            return False
        return True
