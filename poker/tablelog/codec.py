"""The table log's codec: what its records and snapshots hold, and the checks a record passes.

A table's log is one subject of the tables stream; each record is one
:class:`poker.v1.events_pb2.TableEventBatch`: every event one command caused, in order, with the
command id and the digest of the command's payload, sealed by its writer
(:class:`poker.tablelog.seals.TableSeals`: a signature over the table id, the expected previous
position, the command id and the exact bytes). :class:`TableCodec` is the
:class:`~poker.eventstore.aggregate.LogCodec` the generic aggregate loads, appends and
snapshots the tables with (:class:`poker.tablelog.repository.TableRepository` wires it): its
state is a :class:`TableLog` (the table and the index of every command id of its log), folded by
the engine's :class:`~poker.engine.table.evolve.Fold` (the handlers the live path's ``evolve``
uses), each record checked first (:class:`UntrustedRecord` for one no trusted writer sealed
there: it is never folded; the dealer signatures of a catch-up are verified once per batch
read, at its head, before the state after it is returned); snapshots are the engine's pickled
state and the index's bytes (:mod:`poker.tablelog.snapshot_codec`), counted in events.

**Secrets.** A codec holding the dealers' deck keys (:class:`~poker.tablelog.secrets.DeckKeys`)
writes every batch with its decks, seeds and private cards encrypted into
``sealed_secrets`` (cleared in the stored events), puts them back before a batch is folded or
read (:meth:`TableCodec.open_batch`), and encrypts its snapshots whole. A codec without them (the
wallet's) folds every batch *without* its secrets (those a log written before the encryption
holds in clear are dropped too: its state never holds one), never writes one, and cannot read
the dealers' encrypted snapshots (it replays the log). Nothing the seals or the hash chain
cover changes: they are computed over the stored bytes, and a batch's secrets are opened only
once its seal is verified (the fold's second pass).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import structlog
from google.protobuf.message import DecodeError

from poker.engine.table import TableEventBody, TableState, envelopes
from poker.engine.table.evolve import Fold
from poker.eventstore.aggregate import Loaded
from poker.eventstore.api import Record
from poker.eventstore.sealing import Keyring, Refusal, SealRefused
from poker.servicekit.errors import RuleViolation
from poker.tablelog.chain import UNKNOWN, ChainBreak, ChainState, advance, rule_time
from poker.tablelog.command_ids import CommandIndex, Outcome
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.seals import (
    WALLET_CLOSE_PREFIX,
    Deferred,
    RecordRefused,
    SealRun,
    TableSeals,
    running_turn_after,
    running_turn_ms,
)
from poker.tablelog.secrets import (
    SNAPSHOT_MAGIC,
    DeckKeys,
    SecretsRefusal,
    SecretsRefused,
    has_secrets,
    strip_batch,
)
from poker.tablelog.snapshot_codec import decode_table_and_chain, encode_table
from poker.v1 import events_pb2 as pb

_log = structlog.get_logger(__name__)


class RefusedRecord(RuleViolation):
    """A record of the table's log that the checks refuse (its seal, its bytes, the hash
    chain): the table is not served until an operator looked at it (a rule broken:
    FAILED_PRECONDITION at the edge). ``position`` is the record's, ``cause`` a short,
    bounded name of why (a metric label, a log field). Raised as one of its subclasses."""

    REASON = "REFUSED_RECORD"

    def __init__(self, message: str, *, table_id: str, position: int, cause: str) -> None:
        super().__init__(message)
        self.table_id = table_id
        self.position = position
        self.cause = cause


class UntrustedRecord(RefusedRecord):
    """A record of the table's log that no trusted writer sealed there."""

    REASON = "UNTRUSTED_RECORD"

    def __init__(self, table_id: str, position: int, reason: Refusal | SecretsRefusal) -> None:
        super().__init__(
            f"Table {table_id} cannot be served: the record at position {position} of its log "
            f"was not written by a trusted writer ({reason.value}); an operator must look at it.",
            table_id=table_id,
            position=position,
            cause=reason.value,
        )
        self.reason = reason


class BrokenChain(RefusedRecord):
    """The table's hash chain breaks (:mod:`poker.tablelog.chain`): a batch was edited,
    removed or injected."""

    REASON = "BROKEN_CHAIN"

    def __init__(self, broken: ChainBreak) -> None:
        super().__init__(
            f"Table {broken.table_id} cannot be served: its log's hash chain breaks at version "
            f"{broken.version} ({broken.message}); an operator must look at it.",
            table_id=broken.table_id,
            position=broken.position,
            cause="broken_chain",
        )
        self.broken = broken


class UnreadableRecord(RefusedRecord):
    """A record of the table's log whose bytes are not a table batch (sealed or not: a
    dealer never writes one)."""

    REASON = "UNREADABLE_RECORD"

    def __init__(self, table_id: str, position: int) -> None:
        super().__init__(
            f"Table {table_id} cannot be served: the record at position {position} of its log "
            "is not a table batch; an operator must look at it.",
            table_id=table_id,
            position=position,
            cause="undecodable",
        )


@dataclass(frozen=True, slots=True)
class TableLog:
    """The aggregate's state: the table (None before its first record), the index of every
    command id of its log, and its hash chain after the last record folded (unknown when the
    state was built some other way: its next batch then carries no link)."""

    table: TableState | None
    commands: CommandIndex
    chain: ChainState = UNKNOWN

    @property
    def version(self) -> int:
        """The version of the table's last event (0 for no table)."""
        return 0 if self.table is None else self.table.version


#: A table folded up to a log position (0: an empty log); its ``snapshot_mark`` is the version
#: of the last snapshot loaded or scheduled (snapshots count events).
LoadedTable = Loaded[TableLog]


@dataclass(frozen=True, slots=True)
class TableAppend:
    """What one command appends: its ``events``, decided at unix-ms ``now``, as the batch of
    ``command_id`` with the ``digest`` of its payload (empty for the dealer's timed steps)."""

    table_id: str
    command_id: str
    events: Sequence[TableEventBody]
    now: int
    digest: bytes = b""


def decode_batch(record: Record) -> pb.TableEventBatch:
    """The batch one record holds (:class:`UnreadableRecord` for bytes that are not one)."""
    try:
        return pb.TableEventBatch.FromString(record.data)
    except DecodeError:
        raise UnreadableRecord(record.key, record.position) from None


class TableCodec:
    """The table log's :class:`~poker.eventstore.aggregate.LogCodec`: sealed
    ``TableEventBatch`` records, folded by the engine's :class:`~poker.engine.table.evolve.Fold`,
    a :class:`TableLog` as the state, snapshots counted in events."""

    def __init__(
        self,
        seals: TableSeals,
        metrics: TableLogMetrics,
        *,
        recent_commands: int,
        deck_keys: DeckKeys | None,
    ) -> None:
        """``deck_keys``: the dealers' (they seal and open every batch's secrets), None for a
        reader and writer that must never see one (the wallet)."""
        self._seals = seals
        self._metrics = metrics
        self._recent_commands = recent_commands
        self._deck_keys = deck_keys
        #: (table, position) -> the stored time of that record, read back by the repository
        #: when a wallet close follows a record whose stored time the state does not know.
        self.stored_times: dict[tuple[str, int], int | None] = {}
        # What check() screened, for the fold() of the same records that the aggregate runs
        # right after it with no await between (:meth:`Aggregate.catch_up`): the signature each
        # left to verify, so the fold does not parse every seal a second time (2.8 µs a
        # record). Holding the records keeps their ids unique while the fold looks them up.
        self._screened: list[tuple[Record, Deferred | None]] = []

    @property
    def reads_secrets(self) -> bool:
        """Whether this codec holds the deck keys (folds and reads the secrets)."""
        return self._deck_keys is not None

    def open_batch(self, record: Record) -> pb.TableEventBatch:
        """The batch ``record`` holds as this codec may read it: with its secrets (deck keys
        held; :class:`UntrustedRecord` when they do not open), else without any. For a record
        whose seal was verified: the secrets are opened, never checked, before."""
        return self.reveal(record, pb.TableEventBatch.FromString(record.data))

    def reveal(self, record: Record, batch: pb.TableEventBatch) -> pb.TableEventBatch:
        """``batch`` (``record``'s, decoded from its stored bytes) as this codec may read it:
        see :meth:`open_batch`."""
        if self._deck_keys is None:
            return strip_batch(batch)
        if not batch.sealed_secrets:
            return batch
        try:
            return self._deck_keys.open_batch(record.key, batch)
        except SecretsRefused as refused:
            self._metrics.records_refused.labels(reason=refused.reason.value).inc()
            _log.warning(
                "table_record_refused",
                table_id=record.key,
                position=record.position,
                reason=refused.reason.value,
                error=refused.message,
            )
            raise UntrustedRecord(record.key, record.position, refused.reason) from refused

    def empty(self, key: str) -> TableLog:
        """A table before its first record, with this log's command index bound."""
        return TableLog(None, CommandIndex(recent=self._recent_commands), ChainState.start(key))

    def check(self, record: Record, previous_position: int) -> None:
        """Raise :class:`UntrustedRecord` unless ``record``'s seal passes its screening there
        (:meth:`~poker.tablelog.seals.TableSeals.screen`): a dealer's signature is verified in
        :meth:`fold`, at the head of the records folded, before anything of them is returned."""
        try:
            _, deferred = self._seals.screen_record(record, previous_position)
        except SealRefused as refused:
            self._screened.clear()  # the fold of these records will not come
            raise self._refused(record.key, record.position, refused) from refused
        self._screened.append((record, deferred))

    def take_screened(self) -> dict[int, tuple[Record, Deferred | None]]:
        """What :meth:`check` screened since the last fold (or take), by the record's id (each
        entry holds its record, so no other live record can have its id); a reader that checks
        records without folding them takes it after each check (:meth:`defer`'s ``screened``)."""
        screened = {id(record): (record, deferred) for record, deferred in self._screened}
        self._screened = []
        return screened

    def verify(self, record: Record, previous_position: int) -> None:
        """Raise :class:`UntrustedRecord` unless a trusted writer sealed ``record`` there,
        its signature verified: for a record acted on alone (a followed one)."""
        try:
            self._seals.check_record(record, previous_position)
        except SealRefused as refused:
            raise self._refused(record.key, record.position, refused) from refused

    def _refused(self, table_id: str, position: int, refused: SealRefused) -> UntrustedRecord:
        self._metrics.records_refused.labels(reason=refused.reason.value).inc()
        _log.warning(
            "table_record_refused",
            table_id=table_id,
            position=position,
            reason=refused.reason.value,
            error=refused.message,
        )
        return UntrustedRecord(table_id, position, refused.reason)

    def vouch(self, run: SealRun) -> None:
        """:meth:`~poker.tablelog.seals.SealRun.settle`, a refusal as :class:`UntrustedRecord`
        naming the first record that fails."""
        try:
            run.settle()
        except RecordRefused as refused:
            table_id = run.table_id
            raise self._refused(table_id, refused.position, refused) from refused

    def broken(self, broken: ChainBreak) -> BrokenChain:
        """The refusal of a record where the chain breaks, counted and logged."""
        self._metrics.records_refused.labels(reason="broken_chain").inc()
        _log.warning(
            "table_chain_broken",
            table_id=broken.table_id,
            position=broken.position,
            error=broken.message,
        )
        return BrokenChain(broken)

    def blame(self, run: SealRun, record: Record) -> None:
        """Where the chain breaks at ``record``: the signatures ``run`` holds, then
        ``record``'s own, verified first, so that a forged record is refused as one
        (:class:`UntrustedRecord` naming it) rather than as the break it causes, which names the
        record before it (a copy of a real batch breaks the chain there)."""
        self.vouch(run)
        self.defer(run, record, linked=False)

    def run(self, table_id: str) -> SealRun:
        """A fresh run of ``table_id``'s records, for a reader that checks the chain itself."""
        return SealRun(self._seals, table_id)

    def defer(
        self,
        run: SealRun,
        record: Record,
        *,
        linked: bool,
        screened: Mapping[int, tuple[Record, Deferred | None]] | None = None,
    ) -> None:
        """Add ``record`` (checked, its chain link too: ``linked`` if it carries one) to
        ``run``; :class:`UntrustedRecord` if it must be verified now and fails. ``screened``:
        what :meth:`check` left to verify of it, if it screened this very record."""
        entry = screened.get(id(record)) if screened is not None else None
        try:
            deferred = entry[1] if entry is not None else self._seals.deferred(record)
            run.add(deferred, linked=linked)
        except RecordRefused as refused:
            raise self._refused(record.key, refused.position, refused) from refused

    @property
    def keyring(self) -> Keyring:
        """The keys the records are checked with."""
        return self._seals.keyring

    def _check_close(
        self,
        record: Record,
        batch: pb.TableEventBatch,
        chain: ChainState,
        running_turn: int | None,
    ) -> None:
        """Raise :class:`UntrustedRecord` (``premature_close``) if ``batch`` is the wallet's close
        of a table the log before it (``chain``, and the longest turn of the hand running there,
        ``running_turn``: None if none runs) does not show abandoned."""
        previous_at = rule_time(chain)
        if chain.last_stored_at is None:
            # The record before is one this process appended: its stored time, read back.
            read_back = self.stored_times.pop((record.key, chain.position), None)
            previous_at = read_back if read_back is not None else previous_at
        try:
            self._seals.check_close(
                record.key,
                record.position,
                writer=self._seals.writer_of(record.headers),
                batch=batch,
                previous_at=previous_at,
                running_turn_ms=running_turn,
                stored_at=record.stored_at,
            )
        except SealRefused as refused:
            raise self._refused(record.key, record.position, refused) from refused

    @staticmethod
    def _running_turn(table: TableState | None, before: Sequence[pb.TableEventBatch]) -> int | None:
        """The longest turn of the hand running after ``before`` (the batches of this fold
        before a close, not folded yet) on ``table`` (None: none runs). Read from the events,
        only at a close (rare): the engine folds nothing its signatures did not vouch for."""
        running = running_turn_ms(table)
        for batch in before:
            running = running_turn_after(batch, running)
        return running

    def fold(self, state: TableLog, records: Sequence[Record], *, private: bool) -> TableLog:
        """``state`` after the events of ``records``: into one folding table (rebuilt around
        the hand only at the end) and one command index: ``state``'s own when it is
        ``private`` (a catch-up's second batch on: the index is the copy the first one made),
        else a copy (``state`` may still be read elsewhere: a view, a retry's start). One copy
        per catch-up, not one per record or per batch.

        A wallet close is held to the abandoned-table rule here, where the time of the record
        before it and the hand running there are known
        (:meth:`~poker.tablelog.seals.TableSeals.check_close`): refused, it raises
        :class:`UntrustedRecord` and nothing of ``records`` is folded.

        The dealer signatures :meth:`check` deferred are verified here, at the head of
        ``records`` (each record's chain link checked on the way), before anything of them
        reaches the engine's fold: a forgery anywhere among them raises
        :class:`UntrustedRecord` naming it, and the engine never reads bytes no signature
        vouched for (two passes over the decoded batches: check, then fold; the second opens
        each batch's secrets, or drops them for a codec without the deck keys, before folding
        it: :meth:`reveal`). Bytes that are not a table batch raise :class:`UnreadableRecord`,
        secrets that do not open :class:`UntrustedRecord` (``bad_secrets``)."""
        chain = state.chain
        decode = pb.TableEventBatch.FromString
        screened = self.take_screened()
        run = SealRun(self._seals, records[0].key) if records else None
        batches: list[pb.TableEventBatch] = []
        for record in records:
            try:
                batch = decode(record.data)
            except DecodeError:
                self._metrics.records_refused.labels(reason="undecodable").inc()
                _log.warning(
                    "table_record_unreadable", table_id=record.key, position=record.position
                )
                raise UnreadableRecord(record.key, record.position) from None
            events = batch.events
            # The versions the batch spans (0, 0: none), read once for the chain.
            span = (events[0].version, events[-1].version) if events else (0, 0)
            link = batch.previous_batch_hash
            if batch.command_id.startswith(WALLET_CLOSE_PREFIX):
                assert run is not None
                # The records before it first (as the wallet's consumer does): the state the
                # rule reads must be the dealer's, and a forgery among them is named as one.
                self.vouch(run)
                self._check_close(record, batch, chain, self._running_turn(state.table, batches))
            chain, broken = advance(
                chain,
                record.key,
                record.position,
                record.data,
                link=link,
                span=span,
                at=events[-1].occurred_at if events else None,
                stored_at=record.stored_at,
            )
            assert run is not None
            if broken is not None:
                self.blame(run, record)
                raise self.broken(broken)
            self.defer(run, record, linked=bool(link), screened=screened)
            batches.append(batch)
        if run is not None:
            self.vouch(run)
        folding = Fold(state.table)
        commands = state.commands if private else state.commands.copy()
        reveal = self.reveal
        for record, stored in zip(records, batches, strict=True):
            # The secrets opened (deck keys) or dropped (none) only now: the seals the first
            # pass verified cover the stored bytes, and the engine reads only what they vouch.
            batch = reveal(record, stored)
            events = batch.events
            folding.add(events)
            if events and batch.command_id:
                # outcome_of(batch, position)
                outcome = Outcome(
                    events[0].version, events[-1].version, record.position, batch.command_digest
                )
                commands.add(batch.command_id, outcome)
        after = TableLog(folding.state, commands, chain)
        self._metrics.events_replayed.inc(after.version - state.version)
        return after

    def encode(self, state: TableLog, events: TableAppend) -> bytes:
        """The batch of one command, its events enveloped on ``state``'s table."""
        wrapped = envelopes(state.table, events.events, table_id=events.table_id, now=events.now)
        batch = pb.TableEventBatch(
            command_id=events.command_id,
            events=wrapped,
            command_digest=events.digest,
            previous_batch_hash=state.chain.last_hash or b"",
        )
        if self._deck_keys is not None:
            self._deck_keys.seal_batch(events.table_id, batch)
        elif has_secrets(batch):  # a bug: this writer's state never holds one (see fold)
            raise ValueError("a writer without the deck key may not write a deck, seed or card")
        return batch.SerializeToString()

    def headers(
        self, key: str, expected_position: int, msg_id: str, data: bytes
    ) -> Mapping[str, str] | None:
        """The batch's seal, by this log's writer."""
        return self._seals.headers(key, expected_position, msg_id, data)

    def appended(
        self, before: TableLog, after: TableLog, events: TableAppend, position: int, *, data: bytes
    ) -> TableLog:
        """``after`` with the command indexed at ``position``. In place, not a copy per append:
        ``before`` is superseded by the state returned, and the index only gains commands that
        are in the log (a snapshot of an older state that encodes it holds a few ids of commands
        after it: the catch-up folds them again)."""
        assert after.table is not None
        outcome = Outcome(before.version + 1, after.table.version, position, events.digest)
        after.commands.add(events.command_id, outcome)
        link = before.chain.last_hash or b""
        span = (before.version + 1, after.table.version) if events.events else (0, 0)
        at = events.now if events.events else None
        chain, _ = advance(
            before.chain, events.table_id, position, data, link=link, span=span, at=at
        )
        return replace(after, chain=chain)

    def mark(self, state: TableLog, position: int) -> int:
        """Snapshots count events: every ``snapshot_every`` of the table's versions."""
        return state.version

    def encode_snapshot(self, state: TableLog) -> bytes:
        """:func:`~poker.tablelog.snapshot_codec.encode_table` of the table and its index."""
        assert state.table is not None  # due only once a version crossed a multiple: a table
        data = encode_table(state.table, state.commands, state.chain)
        # The state holds the running hand's deck and cards: encrypted whole (no key: no
        # snapshot is ever saved, see TableRepository).
        return data if self._deck_keys is None else self._deck_keys.seal_snapshot(data)

    def decode_snapshot(self, key: str, data: bytes) -> TableLog:
        """:func:`~poker.tablelog.snapshot_codec.decode_table` of the snapshot, decrypted (its
        errors, or a snapshot this codec cannot decrypt: the log replayed). A snapshot in clear
        (written before the encryption) is read by a dealer; never by a codec without the deck
        keys, whose state must not hold a secret."""
        if data.startswith(SNAPSHOT_MAGIC):
            if self._deck_keys is None:
                raise ValueError("the snapshot is encrypted to the dealers' deck key")
            try:
                data = self._deck_keys.open_snapshot(data)
            except SecretsRefused as refused:
                raise ValueError(refused.message) from refused
        elif self._deck_keys is None:
            raise ValueError("a snapshot in clear holds secrets this reader may not fold")
        table, commands, chain = decode_table_and_chain(data, recent_commands=self._recent_commands)
        return TableLog(table, commands, chain)


__all__ = [
    "BrokenChain",
    "LoadedTable",
    "RefusedRecord",
    "TableAppend",
    "TableCodec",
    "TableLog",
    "UnreadableRecord",
    "UntrustedRecord",
    "decode_batch",
]
