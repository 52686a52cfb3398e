"""The table log's hash chain: each batch carries the SHA-256 of the exact bytes of the table's
record before it (``TableEventBatch.previous_batch_hash``), the first one the hash of the
chain's genesis (:func:`genesis`, bound to the table id), so that an edited, removed or
injected batch is found by anyone holding the log, key or no key, and named (table, version).

Beside the writer's MAC (:mod:`poker.tablelog.seals`), which says who wrote a record, the chain
says the records are the ones written, in their order, none missing: a batch changed after the
fact breaks the link of the batch after it, one removed or put in between breaks it too.

Logs written before the chain existed still load: a batch without the field is accepted until
the first batch that has one; from there on every batch must have it (a batch without it is
refused: written past the chain, or its link stripped). After a snapshot written before the
chain existed the last hash is unknown: the next link is taken as it is, and checked from
there.

:func:`advance` is the one step, pure: the state after a record and the break it shows, if
any; :func:`check_records` runs it over a whole log for the tools and the wallet's Audit.

>>> first = pb.TableEventBatch(command_id="c1", events=[pb.TableEvent(version=1)],
...                            previous_batch_hash=genesis("t1")).SerializeToString()
>>> second = pb.TableEventBatch(command_id="c2", events=[pb.TableEvent(version=2)],
...                             previous_batch_hash=record_hash(first)).SerializeToString()
>>> check_records("t1", [(1, first), (2, second)])
[]
>>> edited = first.replace(b"c1", b"cX")
>>> [(b.kind, b.version, b.position) for b in check_records("t1", [(1, edited), (2, second)])]
[('edited', 1, 1)]
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import sha256
from typing import Final, NamedTuple

from poker.v1 import events_pb2 as pb

GENESIS_TAG: Final = b"poker.table-chain.v1.genesis"


def genesis(table_id: str) -> bytes:
    """The link of a table's first record: a hash bound to the table id."""
    tag, name = GENESIS_TAG, table_id.encode()
    return hashlib.sha256(len(tag).to_bytes(4, "big") + tag + name).digest()


def record_hash(data: bytes) -> bytes:
    """The link to a record: SHA-256 of its exact bytes."""
    return hashlib.sha256(data).digest()


class ChainState(NamedTuple):
    """The chain after some records of one table: the last record's hash (None: unknown), the
    one before (for naming an injected batch), the last event version, whether the chain began,
    the last record's position, when the last event happened (unix ms; None: no event yet, or a
    snapshot written before it was kept) and when the store took the last record (unix ms, the
    server's time; None: unknown, say a record this writer appended and has not read back),
    which the wallet-close rule reads (:func:`rule_time`,
    :func:`poker.tablelog.seals.premature_close`)."""

    last_hash: bytes | None
    previous_hash: bytes | None = None
    last_version: int = 0
    started: bool = False
    position: int = 0
    last_at: int | None = None
    last_stored_at: int | None = None

    @classmethod
    def start(cls, table_id: str) -> ChainState:
        """A table before its first record."""
        return cls(genesis(table_id))

    def to_tuple(
        self,
    ) -> tuple[bytes | None, bytes | None, int, bool, int, int | None, int | None]:
        """Plain values, for a snapshot."""
        return (
            self.last_hash,
            self.previous_hash,
            self.last_version,
            self.started,
            self.position,
            self.last_at,
            self.last_stored_at,
        )


def rule_time(chain: ChainState) -> int | None:
    """The time of the table's last record as the wallet-close rule takes it: when the store
    took it (the server's time) if known, else when its last event says it happened (its
    writer's claim; None: unknown)."""
    return chain.last_stored_at if chain.last_stored_at is not None else chain.last_at


UNKNOWN: Final = ChainState(None)

_new_chain = tuple.__new__


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """Where the chain breaks: the table, the record's position, the version named, what kind
    (``edited``, ``injected``, ``removed``, ``unlinked``), a sentence."""

    table_id: str
    position: int
    version: int
    kind: str
    message: str


def versions(batch: pb.TableEventBatch) -> tuple[int, int]:
    """The first and last event versions of ``batch`` (0, 0 for none)."""
    if not batch.events:
        return 0, 0
    return batch.events[0].version, batch.events[-1].version


def advance(
    chain: ChainState,
    table_id: str,
    position: int,
    data: bytes,
    *,
    link: bytes,
    span: tuple[int, int],
    at: int | None = None,
    stored_at: int | None = None,
) -> tuple[ChainState, ChainBreak | None]:
    """The chain after the record at ``position`` (``data``: its link, the hash it carries,
    the ``span`` of event versions it holds, ``at``, when its last event happened: None for a
    record without events, and ``stored_at``, when the store took it: None if unknown) and the
    break it shows, if any."""
    first, last = span
    broken: ChainBreak | None = None
    if link:
        if chain.last_hash is not None and link != chain.last_hash:
            broken = _classify(chain, table_id, position, link, first)
    elif chain.started:
        broken = ChainBreak(
            table_id,
            position,
            first,
            "unlinked",
            f"table {table_id}: the batch of version {first} (position {position}) has no link to"
            " the batch before it, after the chain began: it was injected, or its link stripped",
        )
    # tuple.__new__, not ChainState(...): NamedTuple's generated __new__ is a Python call, and
    # a rebuild advances the chain once per record (so is record_hash: its one line inlined).
    after = _new_chain(
        ChainState,
        (
            sha256(data).digest(),
            chain.last_hash,
            last or chain.last_version,
            chain.started or bool(link),
            position,
            chain.last_at if at is None else at,
            # The last record's own stored time, or unknown: never an older record's.
            stored_at,
        ),
    )
    return after, broken


def _classify(
    chain: ChainState, table_id: str, position: int, link: bytes, first: int
) -> ChainBreak:
    """Why the link of the record at ``position`` is not the hash of the record before it."""
    before = chain.position
    if chain.previous_hash is not None and link == chain.previous_hash:
        return ChainBreak(
            table_id,
            before,
            chain.last_version,
            "injected",
            f"table {table_id}: the batch of version {chain.last_version} (position {before}) was"
            " injected: the batch after it chains to the one before it",
        )
    if first > chain.last_version + 1:
        return ChainBreak(
            table_id,
            position,
            chain.last_version + 1,
            "removed",
            f"table {table_id}: the batches of versions {chain.last_version + 1} to {first - 1}"
            f" were removed before position {position}",
        )
    return ChainBreak(
        table_id,
        before,
        chain.last_version,
        "edited",
        f"table {table_id}: the batch of version {chain.last_version} (position {before}) is not"
        " the batch the next one chains to: it was edited or replaced",
    )


def advance_batch(
    chain: ChainState,
    table_id: str,
    position: int,
    data: bytes,
    batch: pb.TableEventBatch,
    *,
    stored_at: int | None = None,
) -> tuple[ChainState, ChainBreak | None]:
    """:func:`advance` over the record at ``position`` whose bytes ``data`` decode to
    ``batch``: its link, span and last event's time read from the batch (the codec's fold, a
    hot path, reads them once for the chain and its index and calls :func:`advance` itself)."""
    events = batch.events
    return advance(
        chain,
        table_id,
        position,
        data,
        link=batch.previous_batch_hash,
        span=(events[0].version, events[-1].version) if events else (0, 0),
        at=events[-1].occurred_at if events else None,
        stored_at=stored_at,
    )


def check_records(
    table_id: str, records: Iterable[tuple[int, bytes]], chain: ChainState | None = None
) -> list[ChainBreak]:
    """Every break of the chain over ``records`` ((position, bytes), in log order), from the
    table's first record (or from ``chain``)."""
    state = chain if chain is not None else ChainState.start(table_id)
    breaks = []
    for position, data in records:
        batch = pb.TableEventBatch.FromString(data)
        state, broken = advance_batch(state, table_id, position, data, batch)
        if broken is not None:
            breaks.append(broken)
    return breaks


__all__ = [
    "GENESIS_TAG",
    "UNKNOWN",
    "ChainBreak",
    "ChainState",
    "advance",
    "check_records",
    "genesis",
    "record_hash",
    "rule_time",
    "versions",
]
