"""Reading the table log as a dealer does in tests: with the harness dealers' deck key."""

from __future__ import annotations

from poker.eventstore.api import Record
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import TEST_DECK_KEYS
from poker.v1 import events_pb2 as pb


def opened_batch(record: Record) -> pb.TableEventBatch:
    """The batch of ``record`` with its decks, seeds and cards back (the stored batch holds
    them encrypted to the deck key, :mod:`poker.tablelog.secrets`)."""
    return TEST_DECK_KEYS.open_batch(record.key, decode_batch(record))
