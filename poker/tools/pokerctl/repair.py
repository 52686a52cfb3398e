"""``pokerctl log remove-record``: the operator's one repair of the table log itself (NATS, the
admin user; no dealer). Whether a record may go is :func:`poker.tools.logtools.judge_removal`'s
verdict; this module reads the record and deletes it."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import click
import nats
import nats.errors
import nats.js.errors
from nats.js import JetStreamContext

from poker.eventstore.api import Record
from poker.eventstore.jetstream import JetStreamEventStore, writer_headers
from poker.eventstore.sealing import (
    Writer,
)
from poker.servicekit import flags
from poker.tablelog.feed import JetStreamFeed, is_table_id
from poker.tablelog.seals import TableSeals
from poker.tools import ctlconfig, logtools
from poker.tools.ctlconfig import CtlError
from poker.tools.logtools import archive as _archive  # noqa: F401 - logtools.archive below
from poker.tools.pokerctl.common import (
    Ctl,
    json_option,
    run,
)
from poker.tools.pokerctl.logaccess import (
    log_keyring_of,
    nats_options,
    with_log,
)


@click.group("log")
def log_group() -> None:
    """The operator's repairs of the table log itself (NATS, the admin user; no dealer)."""


async def _stream_message(js: JetStreamContext, stream: str, position: int) -> Any:
    """The message at ``position`` of ``stream`` (any subject), or None."""
    try:
        return await js.get_msg(stream, position)
    except nats.js.errors.NotFoundError:
        return None


@log_group.command("remove-record")
@click.option(
    "--table",
    required=True,
    help="The table whose log holds the record (for a subject that is no table's, the"
    " subject's tail after the prefix: 0.t-1 for poker.table.0.t-1).",
)
@click.option(
    "--position", type=click.IntRange(1), required=True, help="The record's stream position."
)
@ctlconfig.option(
    flags.LOG_KEYS,
    detail="Here: to check the record's seal (else var/log-keys.json of the home).",
)
@nats_options
@json_option
@run
async def remove_record(ctl: Ctl, *, table: str, position: int, log_keys: str, **log: str) -> None:
    """Delete one record of the tables stream that the checks refuse, so that its table is
    served again: only a record on a subject that is no table's, or the first record of the
    table's log that a rebuild refuses (its seal, its bytes, the hash chain); anything else is
    refused, nothing deleted. Needs the operator's NATS user (the services may not delete)."""
    keyring = log_keyring_of(ctl, log_keys)
    seals = TableSeals(keyring, Writer.DEALER) if keyring is not None else None  # reads only
    result: dict[str, Any] = {}

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        stream = log["table_stream"]
        message = await _stream_message(js, stream, position)
        if message is None:
            raise CtlError(f"There is no record at position {position} of {stream}.")
        headers = dict(message.headers or {})
        subject = str(message.subject)
        before: list[Record] = []
        if is_table_id(table):
            async with contextlib.aclosing(store.read(table)) as records:  # type: ignore[type-var]
                async for earlier in records:
                    if earlier.position >= position:
                        break
                    before.append(earlier)
        record = Record(
            table,
            position,
            str(headers.get("Nats-Msg-Id", "")).removeprefix(f"{table}:"),
            message.data or b"",
            writer_headers(headers),
        )
        verdict = logtools.judge_removal(
            table,
            position,
            subject,
            subject_prefix=log["table_subject_prefix"],
            before=before,
            record=record,
            seals=seals,
        )
        if not verdict.allowed:
            raise CtlError(f"Not removed: {verdict.why}.")
        try:
            # The server's default no_erase=false: the message's bytes are overwritten too.
            await js.delete_msg(stream, position)
        except nats.js.errors.APIError as error:
            raise CtlError(f"JetStream refused to delete it: {error.description}") from None
        result.update(
            {
                "removed": True,
                "stream": stream,
                "position": position,
                "subject": subject,
                "why": verdict.why,
            }
        )

    await with_log(ctl, log, body)
    ctl.emit(
        result,
        lambda: print(
            f"removed the record at position {position} of {result['stream']}"
            f" ({result['subject']}): {result['why']}"
        ),
    )


@log_group.command("archive")
@ctlconfig.option(flags.ARCHIVE_RETENTION)
@ctlconfig.option(flags.ARCHIVE_CONSUMER)
@ctlconfig.option(
    flags.LOG_KEYS,
    detail="Here: the public keyring every seal of a table is checked with before and after"
    " its copy (else var/log-keys-public.json of the home; required).",
)
@nats_options
@json_option
@run
async def archive(
    ctl: Ctl,
    *,
    retention: str,
    wallet_consumer: str,
    log_keys: str,
    **log: str,
) -> None:
    """Move the logs of tables closed longer ago than --retention out of the hot table stream
    into its archive stream (POKER_TABLES_ARCHIVE, subjects poker.archive.<table>, provisioned
    by python -m poker.servicekit.provision; pokerctl verify/export --archive read them
    there): a table leaves only once the wallet has acknowledged its last record and its copy
    checks out like its log (chain and seals); open tables and tables within the retention
    are left alone. Idempotent: a run cut short is completed by the next. Needs the operator's
    NATS user."""
    try:
        retention_s = logtools.archive.parse_retention(retention)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--retention") from None
    keyring = log_keyring_of(ctl, log_keys)
    if keyring is None:
        raise CtlError("Archiving checks every seal: give --log-keys (the room's public ring).")
    outcomes: list[logtools.archive.ArchiveOutcome] = []

    async def body(store: JetStreamEventStore, feed: JetStreamFeed, js: JetStreamContext) -> None:
        archived = logtools.archive.ArchivedLog(js, store.settings)
        try:
            outcomes.extend(
                await logtools.archive.archive_closed_tables(
                    js,
                    store,
                    archived,
                    await feed.table_ids(),
                    consumer=wallet_consumer,
                    keyring=keyring,
                    now_ms=int(time.time() * 1000),
                    retention_ms=int(retention_s * 1000),
                )
            )
        except nats.js.errors.NotFoundError as error:
            raise CtlError(f"Not provisioned: {error.description}") from None

    await with_log(ctl, log, body)
    data = {
        "tables": [
            {"table_id": o.table_id, "action": o.action, "why": o.why, "records": o.records}
            for o in outcomes
        ],
        "archived": sum(o.action == "archived" for o in outcomes),
    }

    def human() -> None:
        for o in outcomes:
            note = f": {o.why}" if o.why else f" ({o.records} records)"
            print(f"{o.table_id} {o.action}{note}")
        print(f"{data['archived']} tables archived")

    ctl.emit(data, human)
    if any(o.action == "refused" for o in outcomes):
        raise SystemExit(1)


#: The log-repair group, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (log_group,)
