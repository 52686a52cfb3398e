"""The operator's tools over the table log itself, no dealer needed: rebuild a table to any
version (``replay``), check tables against their log, the dealer and the wallet (``verify``),
and export hands as one PHH file (``export``). The replay, checks and export are
:mod:`poker.tools.logtools`'; the snapshots a replay starts from
:mod:`poker.tools.pokerctl.snapshots`'."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import grpc
from nats.js import JetStreamContext
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from poker.engine.table import live_stack
from poker.eventstore.jetstream import JetStreamEventStore
from poker.eventstore.sealing import Keyring, SealedSnapshotStore
from poker.servicekit.tokens import Role
from poker.tablelog.chain import record_hash
from poker.tablelog.feed import JetStreamFeed
from poker.tablelog.secrets import DeckKeys
from poker.tools import logtools
from poker.tools.ctlconfig import CtlError
from poker.tools.pokerctl.common import (
    Ctl,
    json_option,
    run,
    wallet_call,
    with_dealer,
)
from poker.tools.pokerctl.logaccess import (
    deck_key_option,
    deck_keys_of,
    log_keyring_of,
    nats_options,
    with_log,
)
from poker.tools.pokerctl.snapshots import snapshot_options, snapshot_store, start_of
from poker.v1 import wallet_pb2 as wpb


def _tables_progress(ctl: Ctl, verb: str) -> Progress:
    """A progress bar of tables done (``verifying 3/40 tables``) on stderr, for people only: off
    with --json or when stderr is not a terminal."""
    return Progress(
        TextColumn(verb),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tables"),
        console=ctl.err,
        disable=ctl.json or not ctl.err.is_terminal,
    )


def _state_data(replayed: logtools.Replayed) -> dict[str, Any]:
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


@click.command()
@click.argument("table")
@click.option("--to-version", type=click.IntRange(1), default=None, help="Stop after this event.")
@click.option("--from-scratch", is_flag=True, help="From the first event, not the snapshot.")
@nats_options
@snapshot_options
@deck_key_option
@json_option
@run
async def replay(
    ctl: Ctl,
    table: str,
    *,
    to_version: int | None,
    from_scratch: bool,
    log_keys: str,
    table_snapshot_bucket: str,
    deck_key: str,
    **log: str,
) -> None:
    """Rebuild a table from its log on NATS (no dealer needed): from its latest snapshot (its
    seal checked with --log-keys) or its first event, to --to-version (default: now); its state
    there, the hash chain checked, and the PHH of the hands in the range (their cards read with
    --deck-key)."""
    keys = deck_keys_of(ctl, deck_key)

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        records = await logtools.read_records(store, table)
        if not records:
            raise CtlError(f"There is no table {table} in the log.")
        snapshots = (
            None if from_scratch else await snapshot_store(ctl, js, log_keys, table_snapshot_bucket)
        )
        start = await start_of(snapshots, table, to_version, keys)
        replayed = logtools.replay_records(
            table, records, to_version=to_version, start=start, deck_keys=keys
        )
        phhs, count = logtools.export_phhs(replayed.hands)
        data = {
            **_state_data(replayed),
            "from_snapshot": start.state.version if start is not None else 0,
            "hands": count,
            "encrypted_hands": replayed.sealed_hands,
            "phhs": phhs,
        }

        def human() -> None:
            ctl.out.print(
                f"table {table} at version {replayed.version} ({replayed.records} records"
                + (f" after the snapshot at {data['from_snapshot']}" if start is not None else "")
                + "):"
                f" {data['hands_started']} hands started"
                + (", a hand running" if data["hand_running"] else "")
                + (", closed" if data["closed"] else ""),
                markup=False,
            )
            for seat in data["seats"]:
                away = " (sitting out)" if seat["sitting_out"] else ""
                print(f"  seat {seat['seat']}: {seat['player_id']} {seat['stack']}{away}")
            for message in data["chain_breaks"]:
                print(f"CHAIN {message}")
            if replayed.sealed_hands:
                print(f"{replayed.sealed_hands} hands encrypted: give --deck-key to show them")
            if phhs:
                print(phhs)

        ctl.emit(data, human)

    await with_log(ctl, log, body)


async def _live_differences(ctl: Ctl, replayed: logtools.Replayed) -> list[str]:
    """Where the live dealer's and the wallet's view of the table differ from the rebuild."""
    state = replayed.state
    if state is None:
        return []
    differences: list[str] = []
    rebuilt = {seat["player_id"]: seat["stack"] for seat in _state_data(replayed)["seats"]}

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
class _Keys:
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


async def _verify_table(
    ctl: Ctl,
    store: JetStreamEventStore,
    js: JetStreamContext,
    name: str,
    *,
    keys: _Keys,
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
    keys: _Keys,
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


def _print_report(report: dict[str, Any]) -> None:
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


@click.command()
@click.argument("tables", nargs=-1)
@click.option("--no-live", is_flag=True, help="Do not compare with the dealer and the wallet.")
@click.option(
    "--from-scratch",
    is_flag=True,
    help="Read every record again, not from the checkpoints of the last verify (and write"
    " fresh ones).",
)
@click.option(
    "--checkpoint-dir",
    type=click.Path(file_okay=False),
    default="",
    help="Where the checkpoints are kept (default: var/pokerctl in the home).",
)
@click.option("--no-checkpoints", is_flag=True, help="Neither read nor write checkpoints.")
@nats_options
@snapshot_options
@deck_key_option
@json_option
@run
async def verify(
    ctl: Ctl,
    tables: tuple[str, ...],
    *,
    no_live: bool,
    from_scratch: bool,
    checkpoint_dir: str,
    no_checkpoints: bool,
    log_keys: str,
    table_snapshot_bucket: str,
    deck_key: str,
    **log: str,
) -> None:
    """Check tables against their log (default: every table): the hash chain, every committed
    deck, (with --log-keys, the room's public keys) every seal and the dealer's snapshot, and
    compare with the live dealer's state and the wallet's escrow. A report per table as it is
    done; exit status 1 on any difference. The decks are checked with --deck-key (without it,
    the hands whose secrets are encrypted are counted, not checked). Each table is read from
    where the last verify left it (a checkpoint in the home, see --checkpoint-dir) unless
    --from-scratch: the verdict is the same (poker/tools/logtools/checkpoints.py says why)."""
    reports: list[dict[str, Any]] = []
    verdict = [True]
    keys = _Keys(deck_keys_of(ctl, deck_key), log_keyring_of(ctl, log_keys))
    folder = Path(checkpoint_dir) if checkpoint_dir else ctl.settings.state_folder()

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        names = list(tables) or await feed.table_ids()
        snapshots = await snapshot_store(ctl, js, log_keys, table_snapshot_bucket)
        checkpoints = None
        if not no_checkpoints:  # --from-scratch: none read, fresh ones written
            checkpoints = logtools.CheckpointStore(
                folder, store.settings.stream, fresh=from_scratch, deck_keys=keys.deck
            )
        with _tables_progress(ctl, "verifying") as progress:
            task = progress.add_task("tables", total=len(names))
            for name in names:
                report = await _verify_table(
                    ctl,
                    store,
                    js,
                    name,
                    keys=keys,
                    snapshots=snapshots,
                    checkpoints=checkpoints,
                    no_live=no_live,
                )
                # --json: one summary at the end (a few numbers per table, no event kept);
                # for people, each table's report as soon as it is done.
                if ctl.json:
                    reports.append(report)
                else:
                    _print_report(report)
                verdict[0] = verdict[0] and report["ok"]
                progress.advance(task)

    await with_log(ctl, log, body)
    ok = verdict[0]
    if ctl.json:
        ctl.emit({"tables": reports, "ok": ok}, lambda: None)
    if not ok:
        raise SystemExit(1)


def _ms(moment: datetime | None) -> int | None:
    """A --since/--until moment as unix ms (naive: UTC)."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


@click.command()
@click.option("--table", "table", default="", show_default=False, help="This table's hands.")
@click.option("--player", "player", default="", show_default=False, help="This player's hands.")
@click.option("--since", type=click.DateTime(), default=None, help="Hands started from (UTC).")
@click.option("--until", type=click.DateTime(), default=None, help="Hands started before (UTC).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default="-", help="The file.")
@nats_options
@deck_key_option
@json_option
@run
async def export(
    ctl: Ctl,
    *,
    table: str,
    player: str,
    since: datetime | None,
    until: datetime | None,
    output: str,
    deck_key: str,
    **log: str,
) -> None:
    """The finished hands of a table or of a player (every table) as one .phhs file, read from
    the log on NATS (their cards with --deck-key: without it, hands dealt since the decks were
    encrypted are left out)."""
    if bool(table) == bool(player):
        raise click.UsageError("Give --table or --player (one of them).")
    keys = deck_keys_of(ctl, deck_key)
    # Written as each table is read: memory holds one table's records and hands, never the
    # room's. Only --json without -o holds the text (one JSON value on stdout).
    texts: list[str] = []
    total = 0
    handle = None if output == "-" else Path(output).open("w", encoding="utf-8")  # noqa: SIM115

    def write(part: str) -> None:
        if handle is not None:
            handle.write(part)
        elif ctl.json:
            texts.append(part)
        else:
            sys.stdout.write(part)

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        nonlocal total
        names = [table] if table else await feed.table_ids()
        with _tables_progress(ctl, "exporting") as progress:
            task = progress.add_task("tables", total=len(names))
            for name in names:
                hands = logtools.replay_records(
                    name, await logtools.read_records(store, name), deck_keys=keys
                ).hands
                text, count = logtools.export_phhs(
                    hands,
                    player=player or None,
                    since_ms=_ms(since),
                    until_ms=_ms(until),
                    first=total + 1,
                )
                if count:
                    write(("\n" if total else "") + text)
                total += count
                progress.advance(task)

    try:
        await with_log(ctl, log, body)
    finally:
        if handle is not None:
            handle.close()
    if output == "-":
        if ctl.json:
            ctl.emit({"hands": total, "phhs": "".join(texts)}, lambda: None)
        else:
            sys.stdout.write("\n")
        return
    ctl.emit(
        {"hands": total, "output": output}, lambda: print(f"{total} hands written to {output}")
    )


#: The log-reading commands, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (replay, verify, export)
