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
"""

from __future__ import annotations

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

#: The command ids of the wallet's closes start with this (the reaper's ``wallet-close-v<N>``).
WALLET_CLOSE_PREFIX: Final = "wallet-close-"
_CLOSE_BODIES: Final = frozenset(
    # deck_revealed: the void of a hand dealt from a committed deck ends with its reveal.
    {"hand_voided", "deck_revealed", "player_cashed_out", "next_hand_scheduled", "table_closed"}
)


def is_wallet_close(data: bytes) -> bool:
    """Whether ``data`` is a batch the wallet may write: its close of an abandoned table."""
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
