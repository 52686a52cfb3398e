"""Sealing and checking the table log's batches: who may write what (both services use it).

The MAC itself is :mod:`poker.eventstore.sealing`'s; this adds the table log's policy on top:

- A dealer key may seal any batch.
- A wallet key may seal one thing only: the wallet's own close of an abandoned table
  (:mod:`poker.wallet.reaper`): a batch whose command id starts with :data:`WALLET_CLOSE_PREFIX`,
  made only of the events ``CloseTable`` decides (the void of a running hand and its deck's
  reveal, cash-outs, the next-hand schedule the void emits) and ending with ``TableClosed``.
  Anything else under a wallet key is refused
  (:attr:`~poker.eventstore.sealing.Refusal.WRONG_WRITER`): a leaked wallet key cannot deal
  hands or settle pots.
- A wallet close is accepted only for a table its log shows abandoned
  (:func:`premature_close`, :attr:`~poker.eventstore.sealing.Refusal.PREMATURE_CLOSE`): decided
  no earlier than the table's previous record, and at least its idle limit after it. The lease
  the reaper checks is not in the log, but the times are (every event carries its
  ``occurred_at``): so every reader (the dealer's rebuild, the wallet's consumer and Audit,
  ``pokerctl verify``) applies the same rule to the same bytes and reaches the same answer.
  The limit travels in the close's command id (``wallet-close-v<N>-idle<ms>``, covered by the
  seal), never below :data:`MIN_CLOSE_IDLE_MS`; a close stating none (written before the rule)
  gets that floor. The rule binds a writer that stamps its true time (a wallet whose lease view
  is wrong, a misconfigured or buggy reaper, a key used by the wallet's own code); the close's
  time is its writer's claim, so it is no defence against a thief of the wallet key who also
  lies about the time (see docs/security/table-log.md).

>>> close = pb.TableEventBatch(command_id=close_command_id(7, 60_000), events=[
...     pb.TableEvent(version=8, occurred_at=1_000_000, table_closed=pb.TableClosed())])
>>> print(premature_close(close, previous_at=990_000))
decided 10000 ms after the table's previous record, before its idle limit of 60000 ms
>>> premature_close(close, previous_at=940_000) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from google.protobuf.message import DecodeError

from poker.eventstore.api import Record
from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    Refusal,
    SealRefused,
    Writer,
    open_batch,
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
_STATED_IDLE: Final = re.compile(r"wallet-close-v[0-9]{1,19}-idle([0-9]{1,12})")


def close_command_id(version: int, idle_ms: int) -> str:
    """The command id of the wallet's close of a table at ``version``, stating the idle limit
    ``idle_ms`` its readers hold it to (the reaper's ``--abandon-after``)."""
    return f"{WALLET_CLOSE_PREFIX}v{version}-idle{idle_ms}"


def close_idle_limit_ms(command_id: str) -> int:
    """The idle limit a close with ``command_id`` is held to: the one it states, never below
    :data:`MIN_CLOSE_IDLE_MS` (that floor for a close stating none)."""
    stated = _STATED_IDLE.fullmatch(command_id)
    return max(MIN_CLOSE_IDLE_MS, int(stated[1]) if stated else 0)


def idle_rule(close_at: int, previous_at: int | None, limit_ms: int) -> str | None:
    """Why a close decided at unix-ms ``close_at`` is premature for a table whose previous
    record's last event happened at ``previous_at`` (None: unknown, not checked), or None."""
    if previous_at is None:
        return None
    if close_at < previous_at:
        return f"decided at {close_at}, before the table's previous record ({previous_at})"
    idle = close_at - previous_at
    if idle < limit_ms:
        return (
            f"decided {idle} ms after the table's previous record, before its idle limit of "
            f"{limit_ms} ms"
        )
    return None


def premature_close(batch: pb.TableEventBatch, previous_at: int | None) -> str | None:
    """Why the close ``batch`` does not close an abandoned table (see the module), or None.

    Its time is its earliest event's (the reaper stamps them all with the moment it decided)."""
    if not batch.events:
        return "a close without events"
    close_at = min(event.occurred_at for event in batch.events)
    return idle_rule(close_at, previous_at, close_idle_limit_ms(batch.command_id))


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


class TableSeals:
    """Seals the batches this service writes (as ``writer``) and checks any batch read."""

    def __init__(self, keyring: Keyring, writer: Writer) -> None:
        self.keyring = keyring
        self.writer = writer
        self._key = keyring.signer(writer)

    def headers(
        self, table_id: str, expected_position: int, msg_id: str, data: bytes
    ) -> dict[str, str]:
        """The headers to append ``data`` with (its seal)."""
        return {SEAL_HEADER: seal_batch(self._key, table_id, expected_position, msg_id, data)}

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
        sealed exactly these bytes there and its writer may write them."""
        writer = open_batch(
            self.keyring,
            headers.get(SEAL_HEADER),
            log_key=table_id,
            position=position,
            previous_position=previous_position,
            msg_id=msg_id,
            data=data,
        )
        if writer is Writer.WALLET and not is_wallet_close(data):
            raise SealRefused(
                Refusal.WRONG_WRITER,
                f"the record at position {position} of {table_id!r} is sealed by a wallet key "
                "but is not the wallet's close of an abandoned table",
            )
        return writer

    def writer_of(self, headers: Mapping[str, str]) -> Writer | None:
        """The writer of the key a seal names (None: no seal, or an unknown key). Says nothing
        about the MAC: for a record :meth:`check` already accepted."""
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
    ) -> None:
        """Raise :class:`~poker.eventstore.sealing.SealRefused` (``premature_close``) if the
        batch at ``position``, sealed by ``writer``, is a wallet close of a table its log does
        not show abandoned (its previous record's last event at ``previous_at``, None if
        unknown): where the batch is applied, with the state before it."""
        if writer is not Writer.WALLET:
            return
        why = premature_close(batch, previous_at)
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
