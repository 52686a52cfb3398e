"""Sealing and checking the table log's batches: who may write what (both services use it).

The MACs and signatures are :mod:`poker.eventstore.sealing`'s; this adds the table log's policy
on top:

- Each writer signs with its own Ed25519 key and holds only the other's public key (an HMAC key
  is accepted below the keyring's ``hmac_below`` only: logs sealed before the signatures), and
  a reader verifies the signature of the head of each run of linked records, which vouches for
  the run (:class:`TableSeals`, :class:`SealRun`).
- A dealer key may seal any batch.
- A wallet key may seal one thing only: the wallet's own close of an abandoned table
  (:mod:`poker.wallet.reaper`): a batch whose command id starts with :data:`WALLET_CLOSE_PREFIX`,
  made only of the events ``CloseTable`` decides (the void of a running hand and its deck's
  reveal, cash-outs, the next-hand schedule the void emits) and ending with ``TableClosed``.
  Anything else under a wallet key is refused
  (:attr:`~poker.eventstore.sealing.Refusal.WRONG_WRITER`): a leaked wallet key cannot deal
  hands or settle pots.
- A wallet close is accepted only for a table its log shows abandoned
  (:func:`premature_close`, :attr:`~poker.eventstore.sealing.Refusal.PREMATURE_CLOSE`): taken by
  the store no earlier than the table's previous record, and at least its limit after it
  (:func:`close_limit_ms`). The lease the reaper checks is not in the log, but the times are:
  JetStream stamps every message with the server's time when it stores it
  (``Record.stored_at``), the same for every reader and chosen by no writer. So every reader
  (the dealer's rebuild, the wallet's consumer and Audit, ``pokerctl verify``) applies the same
  rule to the same times and reaches the same answer, and a holder of the wallet key cannot
  date its close later than it is. A record without a stored time (one built by hand; the
  dealer's own appends, whose time it reads back when a close follows them) counts with the
  time its events claim (:func:`~poker.tablelog.chain.rule_time`).
- **The limit.** A close states one in its command id (``wallet-close-v<N>-idle<ms>``, covered
  by the seal: the wallet's ``--abandon-after``), never below :data:`MIN_CLOSE_IDLE_MS`; a close
  stating none (written before the rule) gets that floor. That is all for a table with no hand
  running at its previous record: such a close voids nothing, it refunds idle seats. A close of
  a table *with a hand running* voids that hand, and the holder of the wallet key chooses the
  stated limit; so it is also held to a bound no live dealer ever meets, from the log alone:
  the hand's longest turn (:func:`longest_turn_ms`: its action timer, or in a draw game the
  larger of it and the draw timer, both recorded in ``HandStarted``) plus
  :data:`CLOSE_GRACE_MS`. While a hand runs someone is always asked to act by a deadline the
  log records, at most the longest turn after the record that asked him; when it passes, the
  dealer's clock (:func:`poker.dealer.clock.next_wake`) times him out and writes a record.
  Nothing else delays that record: the room has no time banks, the disconnection protection
  is decided at the time-out itself (the artificial all-in, a draw's pat), and the gathering
  delay and the pause between hands run only while no hand does. So a live dealer writes at
  least once every longest turn (plus its own delays: the grace) while a hand runs, and a
  close the rule accepts finds a dealer that is gone. The readers know whether a hand runs
  and its timers from the table folded up to the previous record (the engine's table,
  :func:`running_turn_ms`, for the dealer and the reaper; the hands' events,
  :func:`running_turn_after`, for the wallet's consumer and Audit and ``pokerctl verify``). The
  reaper writes a close only once the rule holds with
  :data:`CLOSE_CLOCK_MARGIN_MS` to spare (its clock is not the server's).

>>> close = pb.TableEventBatch(command_id=close_command_id(7, 60_000), events=[
...     pb.TableEvent(version=8, occurred_at=1_000_000, table_closed=pb.TableClosed())])
>>> print(premature_close(close, previous_at=990_000, running_turn_ms=None))
decided 10000 ms after the table's previous record, before its idle limit of 60000 ms
>>> premature_close(close, previous_at=940_000, running_turn_ms=None) is None
True
>>> print(premature_close(close, previous_at=940_000, running_turn_ms=None, stored_at=960_000))
decided 20000 ms after the table's previous record, before its idle limit of 60000 ms
>>> print(premature_close(close, previous_at=940_000, running_turn_ms=45_000))  # a hand runs
decided 60000 ms after the table's previous record, before its idle limit of 75000 ms (a hand \
runs: its longest turn 45000 ms and the grace 30000 ms)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from google.protobuf.message import DecodeError

from poker.engine.betting import DRAW_TIMER_MS
from poker.engine.games import GAMES
from poker.engine.table import TableState
from poker.eventstore.api import Record
from poker.eventstore.sealing import (
    SEAL_HEADER,
    TABLE_LOG_WRITERS,
    BatchSeal,
    Keyring,
    LogKey,
    Refusal,
    SealRefused,
    Writer,
    WriterKey,
    read_batch_seal,
    refuse_bad_proof,
    refuse_foreign_writer,
    refuse_misplaced,
    seal_batch,
)
from poker.v1 import events_pb2 as pb

#: The command ids of the wallet's closes start with this (:func:`close_command_id`).
WALLET_CLOSE_PREFIX: Final = "wallet-close-"
_CLOSE_BODIES: Final = frozenset(
    # deck_revealed: the void of a hand dealt from a committed deck ends with its reveal.
    {"hand_voided", "deck_revealed", "player_cashed_out", "next_hand_scheduled", "table_closed"}
)


#: The least idle time a wallet close may state, and the limit of a close that states none (one
#: written before closes stated theirs). The wallet refuses an ``--abandon-after`` below it.
MIN_CLOSE_IDLE_MS: Final = 1_000
#: What a close of a table with a hand running must wait past the hand's longest turn (see the
#: module): the most a live dealer's time-out record may land after the deadline it answers.
#: It covers, with room to spare, the dealer's own delays: its timer wakes 5 ms late and runs
#: the time-out as a command of the table (behind any command in progress, under event-loop
#: lag), whose append may time out (2 s) and is retried every second while the store is
#: unavailable (a JetStream leader election takes seconds); a dealer that died is replaced by
#: another once its lease expires (10 s by default) and that one times the player out at once;
#: and the difference between the clock of the dealer that set the deadline and the one that
#: answers it (NTP keeps hosts within milliseconds). 30 s is three lease lifetimes and fifteen
#: append timeouts: beyond that the dealer is gone, which is what the close is for.
CLOSE_GRACE_MS: Final = 30_000
#: What the reaper adds to a close's idle limit before it writes: its clock against the
#: server's, which stamps the close (a close the readers would refuse stops the table).
CLOSE_CLOCK_MARGIN_MS: Final = 2_000
_STATED_IDLE: Final = re.compile(r"wallet-close-v[0-9]{1,19}-idle([0-9]{1,12})")


def close_command_id(version: int, idle_ms: int) -> str:
    """The command id of the wallet's close of a table at ``version``, stating the idle limit
    ``idle_ms`` its readers hold it to (the reaper's ``--abandon-after``)."""
    return f"{WALLET_CLOSE_PREFIX}v{version}-idle{idle_ms}"


def close_idle_limit_ms(command_id: str) -> int:
    """The idle limit a close with ``command_id`` states: the one in it, never below
    :data:`MIN_CLOSE_IDLE_MS` (that floor for a close stating none)."""
    stated = _STATED_IDLE.fullmatch(command_id)
    return max(MIN_CLOSE_IDLE_MS, int(stated[1]) if stated else 0)


def longest_turn_ms(game: str, action_timer_ms: int, draw_timer_ms: int) -> int:
    """The longest turn of a hand of ``game`` dealt with these timers (unix ms; a time-out at
    each deadline, :mod:`poker.engine.hand.decide`): its action timer (a bet, a stud game's
    bring-in, 32-Card Draw's split offer), and in a draw game the draw timer if longer (the
    larger of the two in every round: the bound reads the hand, not its phase). A game this
    room does not know counts as a draw game (the larger bound); a draw timer of 0 is the
    default one, as the hand's rules read it (:data:`~poker.engine.betting.DRAW_TIMER_MS`)."""
    definition = GAMES.get(game)
    action = max(action_timer_ms, 0)
    if definition is not None and not definition.is_draw_game:
        return action
    return max(action, draw_timer_ms or DRAW_TIMER_MS)


def started_turn_ms(started: pb.HandStarted) -> int:
    """:func:`longest_turn_ms` of the hand ``started`` deals (its game and rules, as recorded)."""
    rules = started.rules
    return longest_turn_ms(started.game, rules.action_timer_ms, rules.draw_timer_ms)


def running_turn_ms(table: TableState | None) -> int | None:
    """:func:`longest_turn_ms` of the hand running at ``table`` (None: no hand runs). The hand's
    setup is built from its ``HandStarted`` alone, so this is :func:`started_turn_ms`
    of that event: what the readers that fold no table (the wallet's) find."""
    if table is None or not table.hand_running:
        return None
    assert table.hand is not None
    config = table.hand.setup.config
    rules = config.rules
    return longest_turn_ms(config.game, rules.action_timer_ms, rules.draw_timer_ms)


#: The events that start or end a hand, for :func:`running_turn_after`.
_HAND_BOUNDS: Final = frozenset({"hand_started", "hand_ended", "hand_voided", "table_closed"})


def running_turn_after(batch: pb.TableEventBatch, before: int | None) -> int | None:
    """:func:`running_turn_ms` of the table after ``batch``, given its value before it
    (``before``): the last event of the batch that starts a hand (its timer) or ends one
    (None) decides, else it is unchanged. For the readers that fold no engine table."""
    for event in reversed(batch.events):
        body = event.WhichOneof("body")
        if body in _HAND_BOUNDS:
            return started_turn_ms(event.hand_started) if body == "hand_started" else None
    return before


def close_limit_ms(command_id: str, running_turn: int | None) -> int:
    """The least time a close with ``command_id`` must come after the table's previous record,
    whose state runs a hand with the longest turn ``running_turn`` (None: no hand runs): its
    stated limit (:func:`close_idle_limit_ms`), and while a hand runs never less than that turn
    and :data:`CLOSE_GRACE_MS` (see the module)."""
    stated = close_idle_limit_ms(command_id)
    return stated if running_turn is None else max(stated, running_turn + CLOSE_GRACE_MS)


def _limit_note(command_id: str, running_turn: int | None) -> str:
    """Why the limit is what it is, when a running hand sets it."""
    if running_turn is None or close_limit_ms(command_id, running_turn) == close_idle_limit_ms(
        command_id
    ):
        return ""
    return f" (a hand runs: its longest turn {running_turn} ms and the grace {CLOSE_GRACE_MS} ms)"


def idle_rule(close_at: int, previous_at: int | None, limit_ms: int, note: str = "") -> str | None:
    """Why a close decided at unix-ms ``close_at`` is premature for a table whose previous
    record's last event happened at ``previous_at`` (None: unknown, not checked), held to
    ``limit_ms`` (``note``: why that limit, appended to the sentence), or None."""
    if previous_at is None:
        return None
    if close_at < previous_at:
        return f"decided at {close_at}, before the table's previous record ({previous_at})"
    idle = close_at - previous_at
    if idle < limit_ms:
        return (
            f"decided {idle} ms after the table's previous record, before its idle limit of "
            f"{limit_ms} ms{note}"
        )
    return None


def premature_close(
    batch: pb.TableEventBatch,
    previous_at: int | None,
    *,
    running_turn_ms: int | None,
    stored_at: int | None = None,
) -> str | None:
    """Why the close ``batch`` does not close an abandoned table (see the module), or None.

    ``running_turn_ms`` is the longest turn of the hand running at the table's previous record
    (:func:`running_turn_ms`; None: no hand runs). The close's time is when the store took
    it (``stored_at``, the server's time), or for a record without one, its earliest event's
    (the reaper stamps them all with the moment it decided).
    """
    if not batch.events:
        return "a close without events"
    close_at = stored_at if stored_at is not None else min(e.occurred_at for e in batch.events)
    command_id = batch.command_id
    return idle_rule(
        close_at,
        previous_at,
        close_limit_ms(command_id, running_turn_ms),
        _limit_note(command_id, running_turn_ms),
    )


def last_event_at(batch: pb.TableEventBatch) -> int | None:
    """When ``batch``'s last event happened (unix ms), None for a batch without events."""
    return batch.events[-1].occurred_at if batch.events else None


def is_wallet_close(data: bytes) -> bool:
    """Whether ``data`` is a batch the wallet may write: its close of an abandoned table. It
    carries no sealed secrets: the wallet holds no deck key (:mod:`poker.tablelog.secrets`), so
    secrets under its seal could only be forged ones."""
    try:
        batch = pb.TableEventBatch.FromString(data)
    except DecodeError:
        return False
    bodies = [event.WhichOneof("body") for event in batch.events]
    return (
        batch.command_id.startswith(WALLET_CLOSE_PREFIX)
        and bool(bodies)
        and bodies[-1] == "table_closed"
        and all(body in _CLOSE_BODIES for body in bodies)
        and not batch.sealed_secrets
    )


@dataclass(frozen=True, slots=True)
class Deferred:
    """A dealer record whose seal was read and placed but whose signature is not verified yet:
    the head of its run vouches for it (:meth:`TableSeals.vouch`)."""

    table_id: str
    position: int
    seal: BatchSeal
    msg_id: str
    data: bytes


class RecordRefused(SealRefused):
    """A refused seal, with the position of the record that carries it."""

    def __init__(self, position: int, refused: SealRefused) -> None:
        super().__init__(refused.reason, refused.message)
        self.position = position


#: A run settles early when this many signatures wait (the memory a long replay holds).
MAX_DEFERRED: Final = 4096


class TableSeals:
    """Seals the batches this service writes (as ``writer``) and checks any batch read.

    **What a check costs, and the run.** An HMAC seal costs under a microsecond to check; an
    Ed25519 signature 100-250 µs, which on every record would make a rebuild 5-10 times slower.
    The hash chain makes most of them unneeded: each record carries the hash of the exact bytes
    of the record before it, and a writer appends only after records it verified, so a valid
    dealer signature on the *last* record of a run of linked records vouches for every record
    back to the run's anchor (the table's genesis, a verified snapshot, or a verified record).
    So a reader *screens* each record (:meth:`screen`: the seal parses, names a known key of a
    writer allowed to write this, at this place; HMAC seals and the wallet's signatures are
    verified at once: the wallet's key must never vouch for a dealer's record), checks the chain
    on each, and verifies only the head's signature (:meth:`vouch`: and when that fails, each
    record's, to name the first bad one). A record is never acted on (money moved, a state
    served, an event shown) before its run's head is verified.
    """

    def __init__(self, keyring: Keyring, writer: Writer) -> None:
        self.keyring = keyring
        self.writer = writer
        # Looked up at the first seal: a service that only reads (an audit, a tool holding the
        # public keys) has no private key.
        self._key: LogKey | None = None

    def headers(
        self, table_id: str, expected_position: int, msg_id: str, data: bytes
    ) -> dict[str, str]:
        """The headers to append ``data`` with (its seal)."""
        if self._key is None:
            self._key = self.keyring.signer(self.writer)
        return {SEAL_HEADER: seal_batch(self._key, table_id, expected_position, msg_id, data)}

    def screen(
        self,
        table_id: str,
        position: int,
        *,
        previous_position: int,
        msg_id: str,
        data: bytes,
        headers: Mapping[str, str],
    ) -> tuple[Writer, Deferred | None]:
        """The writer of the batch at ``position`` (the table's previous record being at
        ``previous_position``), and the dealer signature left to verify (None: verified here,
        or nothing to verify); :class:`~poker.eventstore.sealing.SealRefused` for what is
        refused without it: no seal, a malformed one, an unknown key, an HMAC seal at or past
        ``hmac_below``, a seal made for another place, a wallet seal on anything but its close,
        and any MAC or wallet signature that does not match."""
        seal = read_batch_seal(
            self.keyring, headers.get(SEAL_HEADER), log_key=table_id, position=position
        )
        if seal is None:
            return Writer.DEALER, None  # unsealed, below the migration mark
        # A ledger key (the wallet's journal) never seals a table batch.
        refuse_foreign_writer(seal, table_id, position, TABLE_LOG_WRITERS)
        key = seal.key
        hmac_below = self.keyring.hmac_below
        if isinstance(key, WriterKey) and hmac_below is not None and position >= hmac_below:
            raise SealRefused(
                Refusal.RETIRED_HMAC,
                f"the record at position {position} of {table_id!r} is sealed with HMAC key "
                f"{key.id!r} at or past position {hmac_below}, where only signatures count",
            )
        if seal.writer is Writer.WALLET and not is_wallet_close(data):
            raise SealRefused(
                Refusal.WRONG_WRITER,
                f"the record at position {position} of {table_id!r} is sealed by a wallet key "
                "but is not the wallet's close of an abandoned table",
            )
        deferred = Deferred(table_id, position, seal, msg_id, data)
        if (
            isinstance(key, WriterKey)
            or seal.writer is not Writer.DEALER
            or seal.previous != previous_position
        ):
            self._verify(deferred)  # cheap, never vouched for, or refused: the reason is exact
            refuse_misplaced(seal, table_id, position, previous_position)
            return seal.writer, None
        return seal.writer, deferred

    def screen_record(
        self, record: Record, previous_position: int
    ) -> tuple[Writer, Deferred | None]:
        """:meth:`screen` of one record read from the table's log."""
        return self.screen(
            record.key,
            record.position,
            previous_position=previous_position,
            msg_id=record.msg_id,
            data=record.data,
            headers=record.headers,
        )

    def deferred(self, record: Record) -> Deferred | None:
        """The dealer signature :meth:`screen` left unverified on ``record`` (which it
        accepted), for the run's head to vouch for; None if there is none."""
        try:
            seal = read_batch_seal(
                self.keyring,
                record.headers.get(SEAL_HEADER),
                log_key=record.key,
                position=record.position,
            )
        except SealRefused as refused:  # not screened: refused the same way
            raise RecordRefused(record.position, refused) from refused
        if seal is None or isinstance(seal.key, WriterKey) or seal.writer is not Writer.DEALER:
            return None
        return Deferred(record.key, record.position, seal, record.msg_id, record.data)

    @staticmethod
    def _verify(deferred: Deferred) -> None:
        if not deferred.seal.matches(
            log_key=deferred.table_id, msg_id=deferred.msg_id, data=deferred.data
        ):
            raise refuse_bad_proof(deferred.table_id, deferred.position)

    def vouch(self, run: Sequence[Deferred]) -> None:
        """Verify the signature of the last record of ``run`` (linked records, in log order,
        whose chain the caller checked): it vouches for the others. If it fails, each one's is
        verified in order and :class:`RecordRefused` names the first that fails."""
        if not run:
            return
        try:
            self._verify(run[-1])
        except SealRefused as head_refused:
            for deferred in run[:-1]:
                try:
                    self._verify(deferred)
                except SealRefused as refused:
                    raise RecordRefused(deferred.position, refused) from refused
            raise RecordRefused(run[-1].position, head_refused) from head_refused

    def check(
        self,
        table_id: str,
        position: int,
        *,
        previous_position: int,
        msg_id: str,
        data: bytes,
        headers: Mapping[str, str],
    ) -> Writer:
        """The writer of the batch at ``position`` (the table's previous record being at
        ``previous_position``); :class:`~poker.eventstore.sealing.SealRefused` unless a known key
        sealed exactly these bytes there and its writer may write them: every check, the
        signature included (a record acted on alone: a followed record, a consumed batch)."""
        writer, deferred = self.screen(
            table_id,
            position,
            previous_position=previous_position,
            msg_id=msg_id,
            data=data,
            headers=headers,
        )
        if deferred is not None:
            self._verify(deferred)
        return writer

    def writer_of(self, headers: Mapping[str, str]) -> Writer | None:
        """The writer of the key a seal names (None: no seal, or an unknown key). Says nothing
        about the proof: for a record :meth:`screen` already accepted."""
        key_id = (headers.get(SEAL_HEADER) or "").partition(":")[0]
        key = self.keyring.key(key_id)
        return None if key is None else key.writer

    def check_close(
        self,
        table_id: str,
        position: int,
        *,
        writer: Writer | None,
        batch: pb.TableEventBatch,
        previous_at: int | None,
        running_turn_ms: int | None,
        stored_at: int | None = None,
    ) -> None:
        """Raise :class:`~poker.eventstore.sealing.SealRefused` (``premature_close``) if the
        batch at ``position``, sealed by ``writer`` and taken by the store at ``stored_at``
        (None: unknown, its claimed time counts), is a wallet close of a table its log does not
        show abandoned (its previous record's time at ``previous_at``, None if unknown:
        :func:`~poker.tablelog.chain.rule_time`; the longest turn of the hand running there
        ``running_turn_ms``, None if none runs: :func:`running_turn_ms`): where the batch is
        applied, with the state before it."""
        if writer is not Writer.WALLET:
            return
        why = premature_close(
            batch, previous_at, running_turn_ms=running_turn_ms, stored_at=stored_at
        )
        if why is not None:
            raise SealRefused(
                Refusal.PREMATURE_CLOSE,
                f"the wallet's close at position {position} of {table_id!r} is premature: {why}",
            )

    def check_record(self, record: Record, previous_position: int) -> Writer:
        """:meth:`check` of one record read from the table's log."""
        return self.check(
            record.key,
            record.position,
            previous_position=previous_position,
            msg_id=record.msg_id,
            data=record.data,
            headers=record.headers,
        )


class SealRun:
    """The records of one table read in order, screened, their dealer signatures deferred to
    the run's head (:class:`TableSeals`). :meth:`add` each record's deferral (with whether it
    carries a chain link: a record without one is vouched for by nobody and verified at once),
    :meth:`settle` before acting on anything added."""

    def __init__(self, seals: TableSeals, table_id: str) -> None:
        self._seals = seals
        self.table_id = table_id
        self.pending: list[Deferred] = []

    def add(self, deferred: Deferred | None, *, linked: bool) -> None:
        """Take one screened record's deferred signature (None: nothing to verify)."""
        if deferred is None:
            return
        if not linked:
            self._seals.vouch([deferred])
            return
        self.pending.append(deferred)
        if len(self.pending) >= MAX_DEFERRED:
            self.settle()

    def settle(self) -> None:
        """Verify the head of what was added (:meth:`TableSeals.vouch`); empty afterwards."""
        run, self.pending = self.pending, []
        self._seals.vouch(run)
