"""``pokerctl log remove-record``: the operator's one repair of the table log itself (NATS, the
admin user; no dealer). Whether a record may go is :func:`poker.tools.logtools.judge_removal`'s
verdict; this module reads the record and deletes it."""

from __future__ import annotations

import contextlib
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


#: The log-repair group, as :mod:`poker.tools.pokerctl.cli` adds them.
COMMANDS: tuple[click.Command, ...] = (log_group,)
