"""What remembering every command id costs (``python -m bench command_ids``).

- memory per remembered id: the recent dict's entries and the archive's (16 bytes: a 64-bit
  hash and a log position), measured with ``tracemalloc`` over a million ids;
- the lookup a new command pays (a miss: the dict, then one bisect per archived run) and the
  amortized cost of adding an id (sweeps into the archive and run merges included), with the
  longest single add (the largest merge);
- the dealer's in-process command path (:class:`~poker.dealer.tables.TableService` over the
  in-memory stores: sit-out / sit-in, the lightest commands, so the index's share is the
  largest it can be) in CPU microseconds per command, on a fresh table and on one whose
  archive already holds 200,000 ids.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import tracemalloc
from dataclasses import replace

import structlog
from prometheus_client import CollectorRegistry

from bench.harness import Result, gc_paused
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import SoleOwner
from poker.dealer.tables import TableService
from poker.dealer.wallet_port import DevWallet
from poker.engine.betting import Stakes, Structure
from poker.engine.table import make_config
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.command_ids import CommandIndex, Outcome
from poker.tablelog.repository import TableLog, TableRepository
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals

IDS = 1_000_000
LOOKUPS = 20_000
COMMANDS = 4_000
ARCHIVED = 200_000


def _filled(count: int) -> tuple[CommandIndex, float, float]:
    """An index of ``count`` ids; the mean and the longest add, in microseconds."""
    index = CommandIndex()
    longest = 0.0
    started = time.perf_counter()
    for n in range(1, count + 1):
        before = time.perf_counter()
        index.add(f"cmd-{n:012d}", Outcome(n, n, n, b"0123456789abcdef"))
        longest = max(longest, time.perf_counter() - before)
    return index, 1e6 * (time.perf_counter() - started) / count, 1e6 * longest


def memory() -> list[Result]:
    """Bytes per id: the whole index over a million ids, and the archive's arrays alone."""
    tracemalloc.start()
    index, _, _ = _filled(IDS)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    recent = len(index) - index.archived
    archive = index.archive_bytes()
    return [
        Result("command_ids.memory.per_id_1M", current / IDS, "bytes/id"),
        Result("command_ids.memory.archive_per_id", archive / index.archived, "bytes/id"),
        Result(
            "command_ids.memory.recent_per_id",
            (current - archive) / max(1, recent),
            "bytes/id",
        ),
        Result("command_ids.snapshot_bytes_1M", len(index.to_bytes()) / IDS, "bytes/id"),
        Result("command_ids.runs_1M", index.runs, "runs"),
    ]


def lookups() -> list[Result]:
    """A new command's miss, at 10^4 and 10^6 ids; adding an id, amortized and at worst."""
    results: list[Result] = []
    for count in (10_000, IDS):
        with gc_paused():
            index, mean_add, longest_add = _filled(count)
        wanted = [f"new-{random.getrandbits(48)}" for _ in range(LOOKUPS)]
        started = time.perf_counter()
        for command_id in wanted:
            assert index.recent_outcome(command_id) is None
            assert not index.candidates(command_id)
        miss = 1e6 * (time.perf_counter() - started) / LOOKUPS
        label = f"{count // 1000}k"
        results += [
            Result(f"command_ids.miss_{label}", miss, "µs/lookup"),
            Result(f"command_ids.add_{label}", mean_add, "µs/id"),
            Result(f"command_ids.longest_add_{label}", longest_add / 1000, "ms"),
        ]
    return results


async def _command_path(archived: int) -> float:
    """CPU µs per sit-out / sit-in on one table with ``archived`` ids in its archive."""
    metrics = DealerMetrics(CollectorRegistry())
    repository = TableRepository(
        InMemoryEventStore(),
        InMemorySnapshotStore(),
        metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
        snapshot_every=10**12,
    )
    service = TableService(repository, DevWallet(), metrics, gate=SoleOwner())
    config = make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2), real_money=False)
    await service.create_table("t1", "create", config)
    await service.sit_down("t1", "sit", "ann", 1, 100)
    service.timers.cancel("t1")
    if archived:
        loaded = service.served.owned["t1"]
        index, _, _ = _filled(archived)  # other ids: a miss never reads the log
        index.last_position = loaded.position  # the live appends come after these
        service.served.owned["t1"] = replace(loaded, state=TableLog(loaded.state.table, index))
    started = time.process_time()
    for n in range(COMMANDS):
        if n % 2 == 0:
            await service.sit_out("t1", f"o{n}", "ann", 1)
        else:
            await service.sit_in("t1", f"i{n}", "ann", 1, post_blinds=False)
    return 1e6 * (time.process_time() - started) / COMMANDS


def command_path() -> list[Result]:
    """The in-process command path, best of three, fresh and with a large archive (log lines
    filtered out: they would dwarf what is measured)."""
    results = []
    config = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        for archived in (0, ARCHIVED):
            with gc_paused():
                best = min(asyncio.run(_command_path(archived)) for _ in range(3))
            name = f"command_ids.command_path_cpu_{archived // 1000}k_archived"
            results.append(Result(name, best, "µs/cmd"))
    finally:
        structlog.configure(**config)
    return results


def run() -> list[Result]:
    """See the module docstring."""
    return [*memory(), *lookups(), *command_path()]
