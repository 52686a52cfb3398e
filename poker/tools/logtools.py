"""The operator's tools over the table log itself, no dealer needed: rebuild a table to any
version, check it (the hash chain, every committed deck), and export its hands as PHH.

Everything here works on records as they are stored, ``(position, bytes)`` in log order
(:func:`read_records` reads them from JetStream with the operator's NATS connection); the fold
is the engine's own (:class:`~poker.engine.table.evolve.Fold`, the handlers of the live path),
the chain :mod:`poker.tablelog.chain`'s and the deck check
:mod:`poker.engine.fairness_check`'s. The chain is what anyone holding the log checks; with the
room's public keys (``log-keys-public.json``: no private key, no secret) :func:`seal_problems`
checks the seals too, the way the services do (every record screened, the signature of each
run's head verified, each record's when that fails). The decks, seeds and private cards are
encrypted to the dealers' deck key (:mod:`poker.tablelog.secrets`): with it (``deck_keys``)
every hand is rebuilt whole and its deck checked; without it the money still folds, and the
hands whose secrets stay sealed are marked (``HandRecord.sealed``): their decks are not checked
and they are not exported.

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from poker.engine.fairness_check import HandCheck, verify_hand
from poker.engine.phh import export_hand
from poker.engine.table import TableState
from poker.engine.table.evolve import Fold
from poker.eventstore.api import EventStore, Record
from poker.eventstore.sealing import Keyring, Refusal, SealRefused, Writer
from poker.eventstore.snapshots import SnapshotStore
from poker.tablelog.chain import ChainBreak, ChainState, advance, advance_batch, rule_time, versions
from poker.tablelog.feed import is_table_id
from poker.tablelog.seals import (
    RecordRefused,
    SealRun,
    TableSeals,
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
    "Removal",
    "Replayed",
    "Start",
    "export_phhs",
    "judge_removal",
    "latest_snapshot",
    "read_log",
    "read_records",
    "replay_records",
    "seal_problems",
    "snapshot_difference",
    "verify_replayed",
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
    there and the log position it stands for."""

    state: TableState
    chain: ChainState
    position: int


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


def snapshot_difference(
    table_id: str,
    records: Sequence[tuple[int, bytes]],
    start: Start,
    deck_keys: DeckKeys | None = None,
) -> str | None:
    """Why the snapshot ``start`` is not the table the log rebuilds at its version, or None."""
    rebuilt = replay_records(table_id, records, to_version=start.state.version, deck_keys=deck_keys)
    if rebuilt.state != start.state:
        return (
            f"table {table_id}: the snapshot at version {start.state.version} is not the table"
            " its log rebuilds there"
        )
    return None


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
    #: The batches whose sealed secrets did not open with the deck keys given (a sentence each).
    refused: list[str] = field(default_factory=list)

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


def seal_problems(table_id: str, records: Sequence[Record], keyring: Keyring) -> list[str]:
    """The records of ``table_id`` (its whole log, in order) no trusted writer sealed there, as
    the services check them: each screened, the chain followed, the signature of the head of
    each run verified (and when that fails each record's, naming the first bad one); one
    sentence each, the log's first refused record only (a service stops there). A record
    sealed with an HMAC key the keyring does not hold (a public keyring) below its
    ``hmac_below`` is not judged: only the services hold those secrets."""
    seals = TableSeals(keyring, Writer.DEALER)  # reads only: no key signs here
    run = SealRun(seals, table_id)
    previous = 0
    hmac_below = keyring.hmac_below or 0
    try:
        for record in records:
            try:
                seals.screen_record(record, previous)
            except SealRefused as refused:
                if not (refused.reason is Refusal.UNKNOWN_KEY and record.position < hmac_below):
                    raise RecordRefused(record.position, refused) from refused
            else:
                batch = pb.TableEventBatch.FromString(record.data)
                run.add(seals.deferred(record), linked=bool(batch.previous_batch_hash))
            previous = record.position
        run.settle()
    except RecordRefused as refused:
        return [
            f"table {table_id}: the record at position {refused.position} was not written by a"
            f" trusted writer ({refused.reason.value}): {refused.message}"
        ]
    return []


def replay_records(
    table_id: str,
    records: Iterable[tuple[int, bytes] | Record],
    *,
    to_version: int | None = None,
    start: Start | None = None,
    deck_keys: DeckKeys | None = None,
) -> Replayed:
    """Fold ``records`` (``(position, bytes)``, or whole records: then the wallet-close rule
    reads their stored times) from the table's first one (or from the snapshot ``start``) up
    to event ``to_version`` (None: all), checking the hash chain of every record read, each
    batch's secrets opened with ``deck_keys`` (without them, or when they do not open, its
    hands are marked ``sealed``). The hands are those that start in the range."""
    folding = Fold(start.state if start is not None else None)
    chain = start.chain if start is not None else ChainState.start(table_id)
    breaks: list[ChainBreak] = []
    premature: list[str] = []
    hands: dict[str, HandRecord] = {}
    players: dict[int, str] = {}
    if start is not None:
        players = {n: s.player_id for n, s in enumerate(start.state.seats, 1) if s is not None}
    announced = [b""]  # the next hand's commitment as announced so far (unknown after a start)
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
        folding.add(events)
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


def verify_replayed(replayed: Replayed) -> list[str]:
    """What is wrong with a table rebuilt from scratch: its chain's breaks and every problem of
    a hand dealt from a committed deck (one sentence each; none: the log checks out)."""
    problems = [broken.message for broken in replayed.breaks] + replayed.premature
    problems += replayed.refused
    for hand in replayed.hands:
        if not hand.events or not hand.events[0].hand_started.deck_commitment or hand.sealed:
            continue  # no committed deck, or its secrets not read (no deck key given)
        if hand.announced and hand.announced != hand.events[0].hand_started.deck_commitment:
            problems.append(
                f"Hand {hand.hand_id} was not dealt from the seed committed before it: its"
                " commitment is not the one announced at the table's creation or the hand"
                " before it."
            )
        if not any(event.HasField("deck_revealed") for event in hand.events):
            continue  # the running hand: nothing is revealed yet
        check: HandCheck = verify_hand(hand.events)
        problems += check.problems
    return problems


def export_phhs(
    hands: Sequence[HandRecord],
    *,
    player: str | None = None,
    since_ms: int | None = None,
    until_ms: int | None = None,
) -> tuple[str, int]:
    """The finished hands (of ``player``'s, started in ``[since_ms, until_ms)``) as one
    ``.phhs`` text (``[1]``, ``[2]``, ... tables, the form PokerKit writes) and how many; a hand
    whose secrets stayed encrypted (its cards unknown) is left out."""
    parts: list[str] = []
    for hand in hands:
        if not hand.finished or hand.sealed or (player is not None and not hand.dealt_in(player)):
            continue
        if since_ms is not None and hand.started_at < since_ms:
            continue
        if until_ms is not None and hand.started_at >= until_ms:
            continue
        parts.append(f"[{len(parts) + 1}]\n{export_hand(hand.events).strip()}\n")
    return "\n".join(parts), len(parts)


@dataclass(frozen=True, slots=True)
class Removal:
    """Whether the record asked for may be removed from the table stream, and why (a
    sentence for the operator)."""

    allowed: bool
    why: str


class _Unjudged(Exception):
    """A record whose seal the keyring given cannot check (see :func:`_refused_why`)."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def _refused_why(
    seals: TableSeals, chain: ChainState, record: Record, previous_position: int
) -> tuple[str | None, ChainState]:
    """Why the checks of a rebuild refuse ``record`` (None: they pass), and the chain after
    it: its seal (a trusted writer's, for this table and place), its bytes (a table batch), its
    link in the hash chain, in the order a rebuild checks them."""
    try:
        seals.check_record(record, previous_position)
    except SealRefused as refused:
        hmac_below = seals.keyring.hmac_below or 0
        if refused.reason is Refusal.UNKNOWN_KEY and record.position < hmac_below:
            # An HMAC seal of before the signatures, whose secret a public keyring lacks: not
            # judged, so that real history is never taken for a forgery.
            raise _Unjudged(record.position) from refused
        return f"its seal is refused ({refused.reason.value}: {refused.message})", chain
    try:
        batch = pb.TableEventBatch.FromString(record.data)
    except DecodeError:
        return "its bytes are not a table batch", chain
    span = versions(batch)
    link = batch.previous_batch_hash
    chain, broken = advance(chain, record.key, record.position, record.data, link=link, span=span)
    if broken is not None:
        return f"it breaks the hash chain ({broken.message})", chain
    return None, chain


def judge_removal(
    table: str,
    position: int,
    subject: str,
    *,
    subject_prefix: str,
    before: Sequence[Record],
    record: Record,
    seals: TableSeals | None,
) -> Removal:
    """Whether ``pokerctl log remove-record --table TABLE --position POSITION`` may delete the
    message at stream ``position`` (on ``subject``; ``record`` is it as the table's, ``before``
    the table's records before it, in order), so that an operator cannot delete real history
    with it: only a message on a subject that is no table's (``table`` is then that subject's
    tail, ``0.t-1`` for ``poker.table.0.t-1``), or the *first* record of ``table``'s log that
    the checks of a rebuild refuse (its seal, its bytes, the hash chain; every record before it
    must pass, since a record's seal names its predecessor's position: after a forged record,
    the next real one would look misplaced too). ``seals`` (the log keys) are needed for a
    table's record."""
    where = f"{subject_prefix}.{table}"
    if subject != where:
        return Removal(
            False, f"the message at position {position} is on {subject!r}, not {where!r}"
        )
    if not is_table_id(table):
        return Removal(True, f"{subject!r} is no table's subject (a table id is one token)")
    if seals is None:
        return Removal(False, "checking a table's record needs the log keys (--log-keys)")
    try:
        return _judged(table, position, before, record, seals)
    except _Unjudged as unjudged:
        return Removal(
            False,
            f"the record at position {unjudged.position} is sealed with a key this keyring does"
            " not hold, below its hmac_below (an HMAC seal of before the signatures): give"
            " --log-keys a keyring holding the services' old HMAC keys",
        )


def _judged(
    table: str, position: int, before: Sequence[Record], record: Record, seals: TableSeals
) -> Removal:
    chain = ChainState.start(table)
    previous = 0
    for earlier in before:
        why, chain = _refused_why(seals, chain, earlier, previous)
        if why is not None:
            return Removal(
                False,
                f"the record at position {earlier.position}, before it, is refused first ({why}):"
                " remove that one first",
            )
        previous = earlier.position
    why, _ = _refused_why(seals, chain, record, previous)
    if why is None:
        return Removal(
            False,
            f"the record at position {position} of table {table} passes every check (a trusted"
            " writer's seal, a table batch, the hash chain): it is the table's history, not"
            " removed",
        )
    return Removal(True, f"the record at position {position} of table {table} is refused: {why}")
