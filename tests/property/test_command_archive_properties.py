"""The command index's runs stored beside the snapshot (:mod:`poker.tablelog.command_archive`).

Any sequence of new commands, repeats, archive stores (as before a snapshot), snapshot round
trips and restarts from snapshot + tail, with a tiny recent dict (ids move to the archive and
its runs merge all the time): every earlier id, however old, is answered with its first outcome,
nothing is appended twice, and the snapshot's index stays the same size whatever the history.
A stored run that is altered, removed or replaced is refused, never taken for "no such id".
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poker.eventstore.snapshots import BESIDE
from poker.tablelog.command_archive import RefusedArchive
from poker.tablelog.command_ids import CommandIndex, Outcome, payload_digest
from tests.property.test_command_id_properties import TABLE, Table, colliding_hash

Step = (
    st.tuples(st.just("new"), st.integers(1, 30))
    | st.tuples(st.just("repeat"), st.integers(0, 10_000))
    | st.tuples(st.just("store"), st.just(0))
    | st.tuples(st.just("restart"), st.integers(0, 3))
)


async def store_and_snapshot(table: Table) -> None:
    """What a dealer does before its snapshot: the runs stored, then the index encoded."""
    await table.repository.archive.store(TABLE, table.index)
    table.snapshot = (table.index.to_bytes(), table.position)


async def run(steps: list[tuple[str, int]], recent: int) -> None:
    table = Table(recent)
    first: dict[str, Outcome] = {}
    order: list[str] = []
    for number, (kind, argument) in enumerate(steps):
        if kind == "new":
            for n in range(argument):
                command_id = f"c{number}-{n}"
                first[command_id] = await table.command(command_id, payload_digest("a", n), 1)
                order.append(command_id)
        elif kind == "repeat" and order:
            command_id = order[argument % len(order)]
            n = int(command_id.rsplit("-", 1)[1])
            again = await table.command(command_id, payload_digest("a", n), 1)
            assert again[:3] == first[command_id][:3]
        elif kind == "store":
            await store_and_snapshot(table)
            # Stored runs travel as references: the index's bytes are bounded by the recent
            # dict plus a few dozen bytes a run, runs O(log n).
            stored = table.index.stored()
            assert not table.index.unstored()
            assert len(table.index.to_bytes()) <= 40 + 64 * (recent + table.index.slack) + 57 * (
                len(stored)
            )
        elif kind == "restart":
            await table.restart(argument)
        assert len([r async for r in table.store.read(TABLE)]) == len(order)
        assert len(table.index) == len(order)
    # Finally every id, from a restart on the last snapshot: its first outcome.
    await store_and_snapshot(table)
    await table.restart(0)
    for command_id in order:
        n = int(command_id.rsplit("-", 1)[1])
        again = await table.command(command_id, payload_digest("a", n), 1)
        assert again[:3] == first[command_id][:3]
    assert len([r async for r in table.store.read(TABLE)]) == len(order)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(Step, max_size=40), recent=st.integers(1, 4), collide=st.booleans())
def test_any_earlier_id_is_answered_with_its_first_outcome(
    steps: list[tuple[str, int]], recent: int, collide: bool
) -> None:
    with colliding_hash(collide):
        asyncio.run(run(steps, recent))


def test_the_snapshots_index_stays_small_however_long_the_history() -> None:
    """Ten times the commands: the index the snapshot carries grows by a few run references
    (O(log n)), not by 16 bytes a command."""

    async def size_after(commands: int) -> tuple[int, int]:
        table = Table(recent=64)
        for n in range(commands):
            await table.command(f"id-{n}", b"", 1)
        await store_and_snapshot(table)
        return len(table.index.to_bytes()), table.index.runs

    async def both() -> None:
        small, small_runs = await size_after(1_000)
        large, large_runs = await size_after(10_000)
        assert large_runs <= small_runs + 8
        assert large - small <= 57 * (large_runs - small_runs) + 64 * 8

    asyncio.run(both())


async def _archived_table() -> tuple[Table, str]:
    table = Table(recent=2)
    for n in range(40):
        await table.command(f"old-{n}", payload_digest("a", n), 1)
    await store_and_snapshot(table)
    await table.restart(0)
    return table, "old-3"


def _stored_keys(table: Table) -> list[str]:
    inner = table.repository.archive._snapshots._inner  # type: ignore[attr-defined]
    return [key for key in inner._snapshots if BESIDE in key]


@pytest.mark.parametrize("part", ["-f", "-d"])
def test_a_tampered_run_is_refused_not_taken_for_a_new_id(part: str) -> None:
    async def scenario() -> None:
        table, old = await _archived_table()
        inner = table.repository.archive._snapshots._inner  # type: ignore[attr-defined]
        key = next(k for k in _stored_keys(table) if k.endswith(part))
        stored = inner._snapshots[key]
        # One byte flipped: the dealer's seal no longer matches.
        inner._snapshots[key] = type(stored)(
            stored.position, stored.data[:-1] + bytes([stored.data[-1] ^ 1])
        )
        with pytest.raises(RefusedArchive):
            for n in range(40):
                await table.command(f"old-{n}", payload_digest("a", n), 1)
        assert len([r async for r in table.store.read(TABLE)]) == 40
        assert old

    asyncio.run(scenario())


def test_a_removed_run_is_refused() -> None:
    async def scenario() -> None:
        table, _ = await _archived_table()
        inner = table.repository.archive._snapshots._inner  # type: ignore[attr-defined]
        for key in _stored_keys(table):
            del inner._snapshots[key]
        with pytest.raises(RefusedArchive):
            await table.command("brand-new", b"", 1)
        assert len([r async for r in table.store.read(TABLE)]) == 40

    asyncio.run(scenario())


def test_a_run_sealed_by_a_dealer_for_another_snapshot_is_refused() -> None:
    """A dealer-sealed run of another table (or another content) swapped in: its digest is
    not the snapshot's reference."""

    async def scenario() -> None:
        table, _ = await _archived_table()
        index = CommandIndex.from_bytes(table.snapshot[0], recent=2)  # type: ignore[index]
        other = Table(recent=2)
        for n in range(40):
            await other.command(f"else-{n}", b"", 1)
        await other.repository.archive.store(TABLE, other.index)
        mine = table.repository.archive._snapshots._inner  # type: ignore[attr-defined]
        theirs = other.repository.archive._snapshots._inner  # type: ignore[attr-defined]
        victim = index.stored()[0].ref
        assert victim is not None
        donor = other.index.stored()[0].ref
        assert donor is not None
        for part in ("-f", "-d"):
            mine._snapshots[f"{TABLE}{BESIDE}{victim.name}{part}"] = theirs._snapshots[
                f"{TABLE}{BESIDE}{donor.name}{part}"
            ]
        with pytest.raises(RefusedArchive):
            await table.command("brand-new", b"", 1)

    asyncio.run(scenario())
