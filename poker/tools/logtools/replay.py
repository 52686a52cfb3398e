"""A table rebuilt from its log, to any version (:func:`replay_records`): the engine's own fold
(:class:`~poker.engine.table.evolve.Fold`, the handlers of the live path) over the records as
they are stored, ``(position, bytes)`` in log order (:func:`read_records`, :func:`read_log` read
them), the hash chain (:mod:`poker.tablelog.chain`) checked on the way, each batch's secrets
opened with the dealers' deck keys when given, and the hands in the range collected; or from a
dealer's snapshot (:func:`latest_snapshot`, a :class:`Start`).

>>> from poker.engine.betting import Stakes, Structure
>>> from poker.engine.table import CreateTable, envelopes, execute, make_config
>>> from poker.tablelog.chain import genesis
>>> state, events = execute(None, CreateTable(make_config("holdem", Structure.NO_LIMIT,
...                                                       Stakes(1, 2)), now=0))
>>> data = pb.TableEventBatch(command_id="c1", events=envelopes(None, events, table_id="t",
...                           now=0), previous_batch_hash=genesis("t")).SerializeToString()
>>> rebuilt = replay_records("t", [(1, data)])
>>> rebuilt.version, rebuilt.breaks, rebuilt.state == state
(1, [], True)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from poker.engine.table import TableState
from poker.engine.table.evolve import Fold
from poker.eventstore.api import EventStore, Record
from poker.eventstore.snapshots import SnapshotStore
from poker.tablelog.chain import ChainBreak, ChainState, advance_batch, rule_time, versions
from poker.tablelog.seals import (
    is_wallet_close,
    premature_close,
    running_turn_after,
    running_turn_ms,
)
from poker.tablelog.secrets import SNAPSHOT_MAGIC, DeckKeys, SecretsRefused
from poker.tablelog.snapshot_codec import decode_table_and_chain
from poker.v1 import events_pb2 as pb

__all__ = [
    "HandRecord",
    "Replayed",
    "Start",
    "latest_snapshot",
    "read_log",
    "read_records",
    "replay_records",
]


@dataclass(slots=True)
class HandRecord:
    """One hand of the log: its events, and who sat in each seat when it was dealt."""

    hand_id: str
    events: list[pb.TableEvent] = field(default_factory=list)
    players: dict[int, str] = field(default_factory=dict)
    #: The commitment announced for it before it started (b"": none, or not read).
    announced: bytes = b""
    #: Some of its secrets stayed encrypted (no deck key, or they did not open): its deck
    #: cannot be checked nor the hand exported.
    sealed: bool = False

    @property
    def started_at(self) -> int:
        """Unix ms of its HandStarted."""
        return self.events[0].hand_started.started_at if self.events else 0

    @property
    def finished(self) -> bool:
        """Whether it ended with a result (voided hands have no history)."""
        return any(event.HasField("hand_ended") for event in self.events)

    def dealt_in(self, player_id: str) -> bool:
        """Whether ``player_id`` was dealt into it."""
        if not self.events:
            return False
        seats = {entry.seat for entry in self.events[0].hand_started.seats}
        return any(self.players.get(seat) == player_id for seat in seats)


@dataclass(frozen=True, slots=True)
class Start:
    """Where a replay may start instead of the first record: a snapshot's table, the hash chain
    there and the log position it stands for; from a verify checkpoint
    (:mod:`~poker.tools.logtools.checkpoints`) also the commitment announced for the next hand
    and the hand running there (its events so far), so that the replay checks what one from
    the first record would."""

    state: TableState
    chain: ChainState
    position: int
    #: The next hand's commitment as announced before ``position`` (b"": unknown).
    announced: bytes = b""
    #: The hand running at ``position``, its events up to there (None: none, or unknown).
    running: HandRecord | None = None


async def latest_snapshot(
    snapshots: SnapshotStore, table_id: str, deck_keys: DeckKeys | None = None
) -> Start | None:
    """The table's stored snapshot as a :class:`Start` (None without one, or when it is
    encrypted and ``deck_keys`` cannot open it). ``snapshots`` must check the seals (a
    :class:`~poker.eventstore.sealing.SealedSnapshotStore`): nothing is unpickled that a dealer
    did not seal."""
    snapshot = await snapshots.load(table_id)
    if snapshot is None:
        return None
    data = snapshot.data
    if data.startswith(SNAPSHOT_MAGIC):
        if deck_keys is None:
            return None
        try:
            data = deck_keys.open_snapshot(data)
        except SecretsRefused:
            return None  # the log is the truth: replayed from its first record
    state, _, chain = decode_table_and_chain(data)
    return Start(state, chain, snapshot.position)


@dataclass(slots=True)
class Replayed:
    """A table rebuilt from its log up to a version: the state, the hands in that range, the
    breaks of its hash chain and how many records were read."""

    table_id: str
    state: TableState | None
    version: int
    hands: list[HandRecord]
    breaks: list[ChainBreak]
    records: int
    #: Every wallet close the log does not show was of an abandoned table (a sentence each).
    premature: list[str] = field(default_factory=list)
    #: The batches whose sealed secrets did not open with the deck keys given, or whose events
    #: do not fold (a version missing): a sentence each.
    refused: list[str] = field(default_factory=list)
    #: The hash chain after the last record read (where a later replay may resume).
    chain: ChainState | None = None
    #: The next hand's commitment as announced by the last record read (b"": unknown).
    announced: bytes = b""
    #: The table at ``capture_version`` (see :func:`replay_records`; None: not reached).
    captured: TableState | None = None

    @property
    def sealed_hands(self) -> int:
        """How many of its hands kept secrets encrypted (no deck key given)."""
        return sum(1 for hand in self.hands if hand.sealed)


async def read_records(store: EventStore, table_id: str) -> list[tuple[int, bytes]]:
    """Every record of ``table_id``'s log now, ``(position, bytes)`` in order."""
    return [(record.position, record.data) async for record in store.read(table_id)]


async def read_log(store: EventStore, table_id: str) -> list[Record]:
    """Every record of ``table_id``'s log now, whole (its seal, its stored time), in order."""
    return [record async for record in store.read(table_id)]


def replay_records(
    table_id: str,
    records: Iterable[tuple[int, bytes] | Record],
    *,
    to_version: int | None = None,
    start: Start | None = None,
    deck_keys: DeckKeys | None = None,
    capture_version: int | None = None,
) -> Replayed:
    """Fold ``records`` (``(position, bytes)``, or whole records: then the wallet-close rule
    reads their stored times) from the table's first one (or from the snapshot ``start``) up
    to event ``to_version`` (None: all), checking the hash chain of every record read, each
    batch's secrets opened with ``deck_keys`` (without them, or when they do not open, its
    hands are marked ``sealed``). The hands are those that start in the range (and the hand
    ``start`` says was running). ``capture_version``: keep the table as it was at that event
    too (:attr:`Replayed.captured`; a dealer's snapshot is compared with it in the same pass).
    ``records`` is read once, in order, and not kept: it may be a generator."""
    folding = Fold(start.state if start is not None else None)
    chain = start.chain if start is not None else ChainState.start(table_id)
    breaks: list[ChainBreak] = []
    premature: list[str] = []
    hands: dict[str, HandRecord] = {}
    players: dict[int, str] = {}
    if start is not None:
        players = {n: s.player_id for n, s in enumerate(start.state.seats, 1) if s is not None}
    # The next hand's commitment as announced so far (unknown after a snapshot's start).
    announced = [start.announced if start is not None else b""]
    if start is not None and start.running is not None:
        hands[start.running.hand_id] = start.running
    captured = start.state if start is not None and start.state.version == capture_version else None
    # The longest turn of the hand running (None: none), for the wallet-close rule.
    running_turn = running_turn_ms(start.state if start is not None else None)
    read = 0
    refused: list[str] = []
    for record in records:
        if isinstance(record, Record):
            position, data, stored_at = record.position, record.data, record.stored_at
        else:
            (position, data), stored_at = record, None
        if start is not None and position <= start.position:
            continue
        batch = pb.TableEventBatch.FromString(data)
        span = versions(batch)
        if to_version is not None and span[0] > to_version:
            break
        read += 1
        if is_wallet_close(data):  # judged by its shape here (see premature_close)
            why = premature_close(
                batch, rule_time(chain), running_turn_ms=running_turn, stored_at=stored_at
            )
            if why is not None:
                premature.append(
                    f"table {table_id}: the wallet's close at position {position} "
                    f"is premature: {why}"
                )
        chain, broken = advance_batch(chain, table_id, position, data, batch, stored_at=stored_at)
        if broken is not None:
            breaks.append(broken)
        running_turn = running_turn_after(batch, running_turn)
        sealed = _open(table_id, position, batch, deck_keys, refused)
        events = [e for e in batch.events if to_version is None or e.version <= to_version]
        try:
            if captured is None and capture_version is not None and span[1] >= capture_version:
                folding.add(e for e in events if e.version <= capture_version)
                captured = folding.state if folding.version == capture_version else None
                folding.add(e for e in events if e.version > capture_version)
            else:
                folding.add(events)
        except ValueError as error:  # a version missing (a record removed): nothing folds on
            refused.append(
                f"table {table_id}: the events of the batch at position {position} do not"
                f" fold: {error}"
            )
            break
        for event in events:
            _follow(event, players, hands, announced, sealed=sealed)
    return Replayed(
        table_id,
        folding.state,
        folding.version,
        list(hands.values()),
        breaks,
        read,
        premature,
        refused,
        chain,
        announced[0],
        captured,
    )


def _open(
    table_id: str,
    position: int,
    batch: pb.TableEventBatch,
    deck_keys: DeckKeys | None,
    refused: list[str],
) -> bool:
    """Put ``batch``'s secrets back (in place); whether they stay sealed (no key, or refused:
    then a sentence in ``refused``)."""
    if not batch.sealed_secrets:
        return False
    if deck_keys is None:
        return True
    try:
        deck_keys.open_batch(table_id, batch)
    except SecretsRefused as error:
        refused.append(
            f"table {table_id}: the secrets of the batch at position {position} do not open"
            f" ({error.message})"
        )
        return True
    return False


def _follow(
    event: pb.TableEvent,
    players: dict[int, str],
    hands: dict[str, HandRecord],
    announced: list[bytes],
    *,
    sealed: bool = False,
) -> None:
    """Who sits where, each hand's events (``sealed``: with secrets still encrypted), and the
    commitments announced ahead."""
    body = event.WhichOneof("body")
    if body == "table_created":
        announced[0] = event.table_created.next_deck_commitment
    elif body == "player_seated":
        players[event.player_seated.seat] = event.player_seated.player_id
    elif body == "player_cashed_out":
        players.pop(event.player_cashed_out.seat, None)
    if not event.hand_id:
        return
    hand = hands.get(event.hand_id)
    if hand is None:
        if body != "hand_started":
            return  # a hand that started before the replay's start: not in the range
        hand = hands[event.hand_id] = HandRecord(
            event.hand_id, players=dict(players), announced=announced[0]
        )
        announced[0] = event.hand_started.next_deck_commitment
    hand.events.append(event)
    hand.sealed = hand.sealed or sealed
