"""The operator's tools over the table log itself, no dealer needed: rebuild a table to any
version (``replay``), check tables against their log, the dealer and the wallet (``verify``),
and export hands as one PHH file (``export``). The replay, checks and export are
:mod:`poker.tools.logtools`'; the snapshots a replay starts from
:mod:`poker.tools.pokerctl.snapshots`'."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import grpc
from nats.js import JetStreamContext
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from poker.engine.table import live_stack
from poker.eventstore.jetstream import JetStreamEventStore
from poker.servicekit.tokens import Role
from poker.tablelog.feed import JetStreamFeed
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


@click.command()
@click.argument("tables", nargs=-1)
@click.option("--no-live", is_flag=True, help="Do not compare with the dealer and the wallet.")
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
    log_keys: str,
    table_snapshot_bucket: str,
    deck_key: str,
    **log: str,
) -> None:
    """Replay tables from scratch (default: every table): check the hash chain, every
    committed deck and (with --log-keys, the room's public keys) every seal, and compare with
    the live dealer's state and the wallet's escrow. A report per table; exit status 1 on any
    difference. The decks are checked with --deck-key (without it, the hands whose secrets are
    encrypted are counted, not checked)."""
    reports: list[dict[str, Any]] = []
    keys = deck_keys_of(ctl, deck_key)

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        names = list(tables) or await feed.table_ids()
        keyring = log_keyring_of(ctl, log_keys)
        snapshots = await snapshot_store(ctl, js, log_keys, table_snapshot_bucket)
        with _tables_progress(ctl, "verifying") as progress:
            task = progress.add_task("tables", total=len(names))
            for name in names:
                log_records = await logtools.read_log(store, name)
                records = [(record.position, record.data) for record in log_records]
                replayed = logtools.replay_records(name, log_records, deck_keys=keys)
                problems = logtools.verify_replayed(replayed)
                if keyring is not None:
                    problems += logtools.seal_problems(name, log_records, keyring)
                start = await start_of(snapshots, name, None, keys)
                if start is not None:
                    difference = logtools.snapshot_difference(name, records, start, keys)
                    problems += [difference] if difference is not None else []
                if not replayed.records:
                    problems.append(f"there is no table {name} in the log")
                elif not no_live:
                    problems += await _live_differences(ctl, replayed)
                reports.append(
                    {
                        "table_id": name,
                        "version": replayed.version,
                        "ok": not problems,
                        "hands": len(replayed.hands),
                        "encrypted_hands": replayed.sealed_hands,
                        "problems": problems,
                    }
                )
                progress.advance(task)

    await with_log(ctl, log, body)

    def human() -> None:
        for report in reports:
            verdict = "ok" if report["ok"] else f"{len(report['problems'])} problems"
            print(
                f"{report['table_id']}: {verdict} (version {report['version']},"
                f" {report['hands']} hands)"
                + (
                    f"; {report['encrypted_hands']} hands' decks not checked: encrypted"
                    " (give --deck-key)"
                    if report["encrypted_hands"]
                    else ""
                )
            )
            for problem in report["problems"]:
                print(f"  - {problem}")

    ctl.emit({"tables": reports, "ok": all(r["ok"] for r in reports)}, human)
    if not all(report["ok"] for report in reports):
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
    texts: list[str] = []
    total = 0

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        nonlocal total
        names = [table] if table else await feed.table_ids()
        with _tables_progress(ctl, "exporting") as progress:
            task = progress.add_task("tables", total=len(names))
            hands: list[logtools.HandRecord] = []
            for name in names:
                hands += logtools.replay_records(
                    name, await logtools.read_records(store, name), deck_keys=keys
                ).hands
                progress.advance(task)
        text, total = logtools.export_phhs(
            hands, player=player or None, since_ms=_ms(since), until_ms=_ms(until)
        )
        texts.append(text)

    await with_log(ctl, log, body)
    text = texts[0] if texts else ""
    if output == "-":
        ctl.emit({"hands": total, "phhs": text}, lambda: print(text))
        return
    Path(output).write_text(text, encoding="utf-8")
    ctl.emit(
        {"hands": total, "output": output}, lambda: print(f"{total} hands written to {output}")
    )


#: The log-reading commands, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (replay, verify, export)
