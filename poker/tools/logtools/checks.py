"""What is wrong with a table log, each problem one sentence: a table rebuilt from scratch
(:func:`verify_replayed`: its hash chain, the wallet's closes, every committed deck), the seals
of its records as the services check them (:func:`seal_problems`, with the room's public keys)
and a dealer's snapshot against the table its log rebuilds (:func:`snapshot_difference`)."""

from __future__ import annotations

from collections.abc import Sequence

from poker.engine.fairness_check import HandCheck, verify_hand
from poker.eventstore.api import Record
from poker.eventstore.sealing import Keyring, Refusal, SealRefused, Writer
from poker.tablelog.seals import RecordRefused, SealRun, TableSeals
from poker.tablelog.secrets import DeckKeys
from poker.tools.logtools.replay import Replayed, Start, replay_records
from poker.v1 import events_pb2 as pb

__all__ = ["seal_problems", "snapshot_difference", "verify_replayed"]


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


def seal_problems(
    table_id: str, records: Sequence[Record], keyring: Keyring, *, previous: int = 0
) -> list[str]:
    """The records of ``table_id`` (its whole log, in order) no trusted writer sealed there, as
    the services check them: each screened, the chain followed, the signature of the head of
    each run verified (and when that fails each record's, naming the first bad one); one
    sentence each, the log's first refused record only (a service stops there). A record
    sealed with an HMAC key the keyring does not hold (a public keyring) below its
    ``hmac_below`` is not judged: only the services hold those secrets. ``previous``: the
    position of the record before the first one (0: they start the log; a verify resuming at a
    checkpoint gives its position, whose record was checked then)."""
    seals = TableSeals(keyring, Writer.DEALER)  # reads only: no key signs here
    run = SealRun(seals, table_id)
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
