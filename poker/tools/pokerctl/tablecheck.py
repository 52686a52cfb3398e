"""One table checked against its log for ``pokerctl verify`` (:func:`verify_table`): from its
checkpoint (:mod:`poker.tools.logtools.checkpoints`) or its first record, the dealer's snapshot
compared in the same pass, the live dealer and the wallet asked; and a rebuilt table as data
(:func:`state_data`, ``replay``'s too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
from nats.js import JetStreamContext

from poker.engine.table import live_stack
from poker.eventstore.jetstream import JetStreamEventStore
from poker.eventstore.sealing import Keyring, SealedSnapshotStore
from poker.servicekit.tokens import Role
from poker.tablelog.chain import record_hash
from poker.tablelog.secrets import DeckKeys
from poker.tools import logtools
from poker.tools.pokerctl.common import Ctl, wallet_call, with_dealer
from poker.tools.pokerctl.snapshots import start_of
from poker.v1 import wallet_pb2 as wpb

__all__ = ["Keys", "print_report", "state_data", "verify_table"]


def state_data(replayed: logtools.Replayed) -> dict[str, Any]:
    state = replayed.state
    seats = []
    if state is not None:
        for number in state.occupied():
            seat = state.seats[number - 1]
            assert seat is not None
            seats.append(
                {
                    "seat": number,
                    "player_id": seat.player_id,
                    "stack": live_stack(state, number),
                    "sitting_out": seat.sitting_out,
                }
            )
    return {
        "table_id": replayed.table_id,
        "version": replayed.version,
        "records": replayed.records,
        "hands_started": state.hands_started if state is not None else 0,
        "hand_running": state.hand_running if state is not None else False,
        "closed": state.closed if state is not None else False,
        "seats": seats,
        "chain_breaks": [broken.message for broken in replayed.breaks],
    }


async def _live_differences(ctl: Ctl, replayed: logtools.Replayed) -> list[str]:
    """Where the live dealer's and the wallet's view of the table differ from the rebuild."""
    state = replayed.state
    if state is None:
        return []
    differences: list[str] = []
    rebuilt = {seat["player_id"]: seat["stack"] for seat in state_data(replayed)["seats"]}

    async def compare(channel: grpc.aio.Channel) -> None:
        view = await ctl.dealer(channel, "operator", Role.OPERATOR).table(replayed.table_id)
        if view.version != replayed.version:
            differences.append(
                f"the dealer is at version {view.version}, the log at {replayed.version}"
            )
        live = {seat.player_id: seat.stack for seat in view.seats if seat.player_id}
        if live != rebuilt:
            differences.append(f"the dealer's stacks {live} are not the log's {rebuilt}")

    await with_dealer(ctl, compare)
    if not state.hand_running:
        reply = await wallet_call(
            ctl, "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=replayed.table_id)
        )
        escrow = {line.player_id: line.amount for line in reply.escrow if line.amount}
        if escrow != {player: stack for player, stack in rebuilt.items() if stack}:
            differences.append(f"the wallet's escrow {escrow} is not the log's stacks {rebuilt}")
    return differences


@dataclass(frozen=True, slots=True)
class Keys:
    """What a verify checks with: the deck keys (the decks), the log keys (the seals)."""

    deck: DeckKeys | None
    log: Keyring | None


async def _record_count(js: JetStreamContext, stream: str, subject: str) -> int:
    """How many records ``subject`` holds now (one stream info, filtered to that subject)."""
    info = await js.stream_info(stream, subjects_filter=subject)
    return (info.state.subjects or {}).get(subject, 0)


async def _resumable(
    store: JetStreamEventStore,
    name: str,
    checkpoint: logtools.Checkpoint,
    snapshot: logtools.Start | None,
    problems: list[str],
) -> bool:
    """Whether ``name``'s verify may resume at ``checkpoint``: the record there is still the
    one it verified (one direct get; if not, the prefix was altered: a problem) and the
    dealer's snapshot, if it stands before it, is the one compared then."""
    head = await store.read_at(name, checkpoint.position)
    if head is None or record_hash(head.data) != checkpoint.chain.last_hash:
        problems.append(
            f"table {name}: the record at position {checkpoint.position} is not the one verified"
            " there (removed, or the stream replaced): the log before it was altered"
        )
        return True  # the verdict stands; the tail is still checked from there
    if snapshot is None or snapshot.state.version > checkpoint.state.version:
        return True
    return snapshot.state.version == checkpoint.snapshot_version


async def verify_table(
    ctl: Ctl,
    store: JetStreamEventStore,
    js: JetStreamContext,
    name: str,
    *,
    keys: Keys,
    snapshots: SealedSnapshotStore | None,
    checkpoints: logtools.CheckpointStore | None,
    no_live: bool,
) -> dict[str, Any]:
    """One table's report: its log checked from its checkpoint (or its first record), the
    dealer's snapshot compared in the same pass, its checkpoint moved on when it checks out.
    Memory: the table's records after the checkpoint and its hands, never another table's."""
    problems: list[str] = []
    snapshot = await start_of(snapshots, name, None, keys.deck)
    checkpoint = checkpoints.load(name) if checkpoints is not None else None
    if checkpoint is not None and not (
        checkpoint.covers(decks=keys.deck is not None, seals=keys.log is not None)
        and await _resumable(store, name, checkpoint, snapshot, problems)
    ):
        checkpoint = None
    after = checkpoint.position if checkpoint is not None else 0
    log_records = [record async for record in store.read(name, after)]
    start = None
    if checkpoint is not None:
        start = logtools.Start(
            checkpoint.state,
            checkpoint.chain,
            checkpoint.position,
            checkpoint.announced,
            checkpoint.running,
        )
    base = start.state.version if start is not None else 0
    capture = snapshot.state.version if snapshot is not None else None
    capture = capture if capture is not None and capture > base else None
    replayed = logtools.replay_records(
        name, log_records, start=start, deck_keys=keys.deck, capture_version=capture
    )
    problems += logtools.verify_replayed(replayed)
    if keys.log is not None:
        problems += logtools.seal_problems(name, log_records, keys.log, previous=after)
    if snapshot is not None and capture is not None and replayed.captured != snapshot.state:
        problems.append(
            f"table {name}: the snapshot at version {capture} is not the table its log"
            " rebuilds there"
        )
    records = replayed.records + (checkpoint.records if checkpoint is not None else 0)
    if checkpoint is not None:
        held = await _record_count(js, store.settings.stream, store.subject(name))
        if held < records:
            problems.append(
                f"table {name}: its log holds {held} records, {records} were verified: records"
                f" were removed (before position {checkpoint.position})"
            )
    if not records:
        problems.append(f"there is no table {name} in the log")
    elif not no_live:
        problems += await _live_differences(ctl, replayed)
    hands = len(replayed.hands) + (checkpoint.hands if checkpoint is not None else 0)
    encrypted = replayed.sealed_hands + (checkpoint.encrypted_hands if checkpoint else 0)
    if checkpoints is not None and not problems and records and replayed.state is not None:
        _save_checkpoint(
            ctl,
            checkpoints,
            _next_checkpoint(
                name,
                replayed,
                position=log_records[-1].position if log_records else after,
                records=records,
                hands=hands,
                encrypted=encrypted,
                keys=keys,
                snapshot=snapshot,
            ),
        )
    return {
        "table_id": name,
        "version": replayed.version,
        "ok": not problems,
        "hands": hands,
        "encrypted_hands": encrypted,
        "records_read": replayed.records,
        "problems": problems,
    }


def _next_checkpoint(
    name: str,
    replayed: logtools.Replayed,
    *,
    position: int,
    records: int,
    hands: int,
    encrypted: int,
    keys: Keys,
    snapshot: logtools.Start | None,
) -> logtools.Checkpoint:
    """The checkpoint after ``replayed`` (checked out): at its last record, the hand running
    there carried with its events (counted then, not now)."""
    state = replayed.state
    assert state is not None and replayed.chain is not None
    running = replayed.hands[-1] if state.hand_running and replayed.hands else None
    if running is not None:
        hands -= 1
        encrypted -= 1 if running.sealed else 0
    return logtools.Checkpoint(
        name,
        position,
        records,
        replayed.chain,
        state,
        replayed.announced,
        running,
        hands,
        encrypted,
        keys.deck is not None,
        keys.log is not None,
        snapshot.state.version if snapshot is not None else 0,
    )


def _save_checkpoint(
    ctl: Ctl, checkpoints: logtools.CheckpointStore, checkpoint: logtools.Checkpoint
) -> None:
    """Save ``checkpoint``; a failure is one line on stderr (the next verify reads more)."""
    try:
        checkpoints.save(checkpoint)
    except (OSError, ValueError) as error:
        ctl.err.print(f"pokerctl: the checkpoint of {checkpoint.table_id} not saved: {error}")


def print_report(report: dict[str, Any]) -> None:
    verdict = "ok" if report["ok"] else f"{len(report['problems'])} problems"
    print(
        f"{report['table_id']}: {verdict} (version {report['version']},"
        f" {report['hands']} hands)"
        + (
            f"; {report['encrypted_hands']} hands' decks not checked: encrypted (give --deck-key)"
            if report["encrypted_hands"]
            else ""
        ),
        flush=True,
    )
    for problem in report["problems"]:
        print(f"  - {problem}")
