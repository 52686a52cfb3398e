"""Table snapshots as bytes: the engine's state values, pickled under a strict whitelist.

The table state is a tree of frozen engine values (NamedTuples, frozen dataclasses, enums,
cards). Pickle writes such a tree faithfully and fast; three things make it safe and exact here:

- **Only engine classes load.** The unpickler refuses every global outside ``poker.engine``, so a
  tampered bucket value cannot name ``os.system``; snapshots live in a service-only KV bucket.
- **Shared singletons stay singletons.** The betting-structure strategies and game definitions
  are module constants the hand machine compares by identity; they travel as persistent ids
  (their names) and load as the very same objects.
- **A changed engine never reads an old layout.** The data starts with a fingerprint of the
  state classes' field names; a snapshot of another layout is ignored (the caller replays the
  whole log instead: a snapshot is an optimization, never the truth).

The table's command index (:class:`~poker.tablelog.command_ids.CommandIndex`: every command id
of its log) travels beside the state as the index's own bytes. A snapshot written before the
index kept every id (a dict of the recent ones only) is refused like another layout: the whole
log is replayed once, so the rebuilt table knows every id.

>>> from poker.engine.betting import Stakes, Structure
>>> from poker.engine.table import CreateTable, execute, make_config
>>> from poker.tablelog.command_ids import Outcome
>>> table, _ = execute(None, CreateTable(make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2)),
...                                     now=0))
>>> index = CommandIndex()
>>> index.add("c1", Outcome(first=1, last=1, position=1, digest=b""))
>>> state, commands = decode_table(encode_table(table, index))
>>> state == table, commands.recent_outcome("c1")
(True, Outcome(first=1, last=1, position=1, digest=b''))
"""

from __future__ import annotations

import hashlib
import io
import pickle
from typing import Any, Final

from poker.engine import betting, games
from poker.engine.betting import BettingStructure, Round, Stakes
from poker.engine.games import GameDefinition, Street
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.state import HandSetup, HandState
from poker.engine.table.config import TableConfig
from poker.engine.table.state import Seat, TableState
from poker.tablelog.chain import UNKNOWN, ChainState
from poker.tablelog.command_ids import DEFAULT_RECENT, CommandIndex

_LAYOUT_CLASSES: Final = (
    TableState,
    Seat,
    TableConfig,
    HandState,
    HandSetup,
    HandConfig,
    Round,
    Stakes,
    GameDefinition,
    Street,
)


def _fields(cls: type) -> tuple[str, ...]:
    named = getattr(cls, "_fields", None)
    if named is not None:
        return tuple(named)
    return tuple(getattr(cls, "__dataclass_fields__", {}))


#: Changes whenever a state class gains, loses or renames a field.
FINGERPRINT: Final = hashlib.sha256(
    repr([(cls.__qualname__, _fields(cls)) for cls in _LAYOUT_CLASSES]).encode()
).digest()[:8]

_STRATEGIES: Final = {strategy.structure.name: strategy for strategy in betting.STRUCTURES.values()}


class SnapshotLayoutMismatch(ValueError):
    """The snapshot was written by an engine with another state layout."""


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, BettingStructure):
            return ("structure", obj.structure.name)
        if isinstance(obj, GameDefinition):
            return ("game", obj.key)
        return None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        kind, name = pid
        if kind == "structure":
            return _STRATEGIES[name]
        if kind == "game":
            return games.get_game(name)
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")

    def find_class(self, module: str, name: str) -> Any:
        # Snapshots written before the packages moved under ``poker`` name ``engine.``: the
        # same classes, so they load in place of a full replay.
        if module.startswith("engine."):
            module = f"poker.{module}"
        if not module.startswith("poker.engine."):
            raise pickle.UnpicklingError(f"{module}.{name} may not appear in a table snapshot")
        return super().find_class(module, name)


def encode_table(
    state: TableState, commands: CommandIndex, chain: ChainState | None = None
) -> bytes:
    """The snapshot bytes of ``state``, the index of its commands and the table's hash chain
    where the snapshot stands (plain values: nothing but engine classes loads)."""
    buffer = io.BytesIO()
    buffer.write(FINGERPRINT)
    links = chain.to_tuple() if chain is not None else None
    _Pickler(buffer, protocol=5).dump((state, commands.to_bytes(), links))
    return buffer.getvalue()


def decode_table(
    data: bytes, *, recent_commands: int = DEFAULT_RECENT
) -> tuple[TableState, CommandIndex]:
    """The state and command index :func:`encode_table` wrote (the index keeping
    ``recent_commands`` ids in its dict); raises :class:`SnapshotLayoutMismatch`,
    ``pickle.UnpicklingError`` or ValueError for anything else."""
    state, commands, _ = decode_table_and_chain(data, recent_commands=recent_commands)
    return state, commands


def decode_table_and_chain(
    data: bytes, *, recent_commands: int = DEFAULT_RECENT
) -> tuple[TableState, CommandIndex, ChainState]:
    """:func:`decode_table` and the hash chain the snapshot holds (unknown in a snapshot
    written before the chain existed)."""
    if data[: len(FINGERPRINT)] != FINGERPRINT:
        raise SnapshotLayoutMismatch("the snapshot has another state layout")
    loaded = _Unpickler(io.BytesIO(data[len(FINGERPRINT) :])).load()
    if not isinstance(loaded, tuple) or len(loaded) not in (2, 3):
        raise pickle.UnpicklingError("the snapshot does not hold a table")
    state, commands = loaded[0], loaded[1]
    if isinstance(commands, dict):
        raise SnapshotLayoutMismatch("the snapshot keeps only the recent command ids")
    if not isinstance(state, TableState) or not isinstance(commands, bytes):
        raise pickle.UnpicklingError("the snapshot does not hold a table")
    chain = UNKNOWN if len(loaded) == 2 or loaded[2] is None else _chain(loaded[2])
    return state, CommandIndex.from_bytes(commands, recent=recent_commands), chain


def _chain(links: object) -> ChainState:
    # Five values in a snapshot written before the chain kept its last event's time, six before
    # it kept its last record's stored time (each unknown then).
    if not isinstance(links, tuple) or len(links) not in (5, 6, len(ChainState._fields)):
        raise pickle.UnpicklingError("the snapshot's hash chain is malformed")
    last, previous, version, started, position, *rest = links
    last_at = rest[0] if rest else None
    last_stored_at = rest[1] if len(rest) > 1 else None
    if not (
        isinstance(last, bytes | None)
        and isinstance(previous, bytes | None)
        and type(version) is int
        and type(started) is bool
        and type(position) is int
        and (last_at is None or type(last_at) is int)
        and (last_stored_at is None or type(last_stored_at) is int)
    ):
        raise pickle.UnpicklingError("the snapshot's hash chain is malformed")
    return ChainState(last, previous, version, started, position, last_at, last_stored_at)
