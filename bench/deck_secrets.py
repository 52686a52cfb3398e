"""The cost of the table log's secrets (poker/tablelog/secrets.py): AES-256-GCM of each batch's
decks, seeds and private cards, and what the wallet's decrypt-free rebuild costs.

The batches are those of real 6-max Hold'em hands played by the engine (one record per command,
as the dealer appends them). Per batch: the dealer's encode (the envelope it already serializes,
next to the same plus taking and encrypting the secrets), a reader's decode (the protobuf parse
every reader pays, next to the dealer's parse plus decryption, and the wallet's parse of a log
written before the encryption plus dropping its secrets). Per table: the dealer's full replay
through the table codec (a log in clear, as before, next to the sealed log, decrypted), and the
wallet's replay of the sealed log without the key, in events per second: the reaper rebuilds an
abandoned table from its first record (it cannot read the dealers' encrypted snapshots).

Both logs are written as the dealer writes them (:func:`_log`): each batch linked to the stored
bytes of the one before and signed with the test harness's dealer key (every record must carry
a writer's seal), and replayed as the aggregate catches up (each record screened, then one
fold that verifies the run's head); the two replays differ only by the secrets' encryption.
"""

from __future__ import annotations

import random
import time

from prometheus_client import CollectorRegistry

from bench.harness import Result, rates
from bench.services import engine_table, play_hands
from poker.eventstore.api import Record
from poker.eventstore.sealing import Writer
from poker.tablelog.chain import genesis, record_hash
from poker.tablelog.codec import TableCodec
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.seals import TableSeals
from poker.tablelog.secrets import DeckKeys, strip_batch
from poker.testing.dealer import harness_seals
from poker.v1 import events_pb2 as pb

HANDS = 200
SEED = 20261207
TABLE = "bench-secrets"


def _log(batches: list[pb.TableEventBatch], seals: TableSeals) -> list[Record]:
    """``batches`` as the dealer's log holds them: each linked to the stored bytes of the one
    before it (the encrypted bytes, for an encrypted log: the dealer links what it stores) and
    sealed by ``seals`` at its position, the one before it being the previous position."""
    records = []
    previous: bytes | None = None
    for position, batch in enumerate(batches, start=1):
        linked = pb.TableEventBatch()
        linked.CopyFrom(batch)
        linked.previous_batch_hash = genesis(TABLE) if previous is None else record_hash(previous)
        data = linked.SerializeToString()
        msg_id = batch.command_id
        headers = seals.headers(TABLE, position - 1, msg_id, data)
        records.append(Record(TABLE, position, msg_id, data, headers))
        previous = data
    return records


def _replay_s(codec: TableCodec, records: list[Record]) -> float:
    """Best of three full replays of ``records`` through ``codec`` (seconds), as the aggregate
    catches up: each record's seal screened, then the fold (the run head's signature verified,
    the secrets opened or dropped, the events folded)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        previous = 0
        for record in records:
            codec.check(record, previous)
            previous = record.position
        codec.fold(codec.empty(TABLE), records, private=False)
        best = min(best, time.perf_counter() - start)
    return best


def run() -> list[Result]:
    """Seal and open every batch of :data:`HANDS` hands (µs per batch); replay them (events/s)."""
    table = engine_table(TABLE, 6)
    play_hands(table, HANDS, random.Random(SEED))
    keys = DeckKeys.generate("bench")
    clear = [data for _, data in table.records]
    parsed = [pb.TableEventBatch.FromString(data) for data in clear]
    sealed = []
    for batch in parsed:
        copy = pb.TableEventBatch()
        copy.CopyFrom(batch)
        keys.seal_batch(TABLE, copy)
        sealed.append(copy.SerializeToString())

    def encode_clear() -> int:
        for batch in parsed:
            batch.SerializeToString()
        return len(parsed)

    def encode_sealed() -> int:
        for batch in parsed:
            copy = pb.TableEventBatch()
            copy.CopyFrom(batch)
            keys.seal_batch(TABLE, copy)
            copy.SerializeToString()
        return len(parsed)

    def copy_only() -> int:  # what encode_sealed's copy costs (the dealer builds, not copies)
        for batch in parsed:
            pb.TableEventBatch().CopyFrom(batch)
        return len(parsed)

    def decode_clear() -> int:
        for data in clear:
            pb.TableEventBatch.FromString(data)
        return len(clear)

    def decode_open() -> int:
        for data in sealed:
            keys.open_batch(TABLE, pb.TableEventBatch.FromString(data))
        return len(sealed)

    def decode_strip() -> int:
        for data in clear:
            strip_batch(pb.TableEventBatch.FromString(data))
        return len(clear)

    per_second = rates(
        {
            "encode_clear": encode_clear,
            "encode_sealed": encode_sealed,
            "copy_only": copy_only,
            "decode_clear": decode_clear,
            "decode_open": decode_open,
            "decode_strip": decode_strip,
        }
    )
    micro = {name: 1e6 / rate for name, rate in per_second.items()}
    dealer_seals = harness_seals(Writer.DEALER)

    def codec(deck_keys: DeckKeys | None) -> TableCodec:
        metrics = TableLogMetrics(CollectorRegistry(), prefix="bench")
        # The dealer reads with its keys, the wallet (no deck key) with its own keyring.
        seals = dealer_seals if deck_keys is not None else harness_seals(Writer.WALLET)
        return TableCodec(seals, metrics, recent_commands=2048, deck_keys=deck_keys)

    events = sum(len(batch.events) for batch in parsed)
    # Both logs signed alike: the replays differ by the secrets' encryption, not by the seal.
    clear_log = _log(parsed, dealer_seals)  # secrets in clear: as every log was before
    sealed_log = _log([pb.TableEventBatch.FromString(data) for data in sealed], dealer_seals)
    before = _replay_s(codec(keys), clear_log)
    after = _replay_s(codec(keys), sealed_log)
    wallet = _replay_s(codec(None), sealed_log)
    sealed_bytes = sum(map(len, sealed)) / len(sealed)
    clear_bytes = sum(map(len, clear)) / len(clear)
    return [
        Result("deck_secrets.mean_batch", sealed_bytes, "bytes", "in clear", clear_bytes),
        Result(
            "deck_secrets.encode",
            micro["encode_sealed"] - micro["copy_only"],
            "µs/batch",
            "in clear",
            micro["encode_clear"],
        ),
        Result(
            "deck_secrets.open", micro["decode_open"], "µs/batch", "decode", micro["decode_clear"]
        ),
        Result(
            "deck_secrets.strip_legacy",
            micro["decode_strip"],
            "µs/batch",
            "decode",
            micro["decode_clear"],
        ),
        Result(
            "deck_secrets.dealer_replay", events / after, "events/s", "in clear", events / before
        ),
        Result("deck_secrets.wallet_replay", events / wallet, "events/s", "dealer", events / after),
        Result("deck_secrets.wallet_replay_100k_events", 1e5 / (events / wallet), "s"),
    ]
