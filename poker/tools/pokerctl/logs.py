"""The operator's tools over the table log itself, no dealer needed: rebuild a table to any
version (``replay``), check tables against their log, the dealer and the wallet (``verify``),
and export hands as one PHH file (``export``). The replay, checks and export are
:mod:`poker.tools.logtools`'; the snapshots a replay starts from
:mod:`poker.tools.pokerctl.snapshots`'; one table's verify
:mod:`poker.tools.pokerctl.tablecheck`'s."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from nats.js import JetStreamContext
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from poker.eventstore.jetstream import JetStreamEventStore
from poker.tablelog.feed import JetStreamFeed
from poker.tools import logtools
from poker.tools.ctlconfig import CtlError
from poker.tools.logtools import archive as _archive  # noqa: F401 - logtools.archive
from poker.tools.pokerctl.common import (
    Ctl,
    F,
    json_option,
    run,
)
from poker.tools.pokerctl.logaccess import (
    deck_key_option,
    deck_keys_of,
    log_keyring_of,
    nats_options,
    with_log,
)
from poker.tools.pokerctl.snapshots import snapshot_options, snapshot_store, start_of
from poker.tools.pokerctl.tablecheck import Keys, print_report, state_data, verify_table


def archive_option(function: F) -> F:
    """``--archive``: read the archived tables (``pokerctl log archive``) instead of the hot
    table stream."""
    return click.option(
        "--archive",
        is_flag=True,
        help="Read the tables `pokerctl log archive` moved to the archive stream of"
        " --table-stream (POKER_TABLES_ARCHIVE by default) instead of the hot table stream.",
    )(function)


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
            **state_data(replayed),
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
@archive_option
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
    archive: bool,
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
    keys = Keys(deck_keys_of(ctl, deck_key), log_keyring_of(ctl, log_keys))
    folder = Path(checkpoint_dir) if checkpoint_dir else ctl.settings.state_folder()

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        if archive:  # the archived tables, read as their hot logs were
            archived = logtools.archive.ArchivedLog(js, store.settings)
            store, names = archived, list(tables) or await archived.table_ids()
        else:
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
                report = await verify_table(
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
                    print_report(report)
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
@archive_option
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
    archive: bool,
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
        if archive:  # the archived tables, read as their hot logs were
            archived = logtools.archive.ArchivedLog(js, store.settings)
            store = archived
            names = [table] if table else await archived.table_ids()
        else:
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
