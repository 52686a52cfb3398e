"""Whether ``pokerctl log remove-record`` may delete a message of the tables stream
(:func:`judge_removal`): only one on a subject that is no table's, or the first record of a
table's log that the checks of a rebuild refuse, so that an operator cannot delete real history
with it. The command itself (reading the record, deleting it) is
:mod:`poker.tools.pokerctl.repair`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from poker.eventstore.api import Record
from poker.eventstore.sealing import Refusal, SealRefused
from poker.tablelog.chain import ChainState, advance, versions
from poker.tablelog.feed import is_table_id
from poker.tablelog.seals import TableSeals
from poker.v1 import events_pb2 as pb

__all__ = ["Removal", "judge_removal"]


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
