"""The cost of the table log's seals: HMAC-SHA256 and Ed25519 sealing and checking of real
dealer batches.

The batches are those of real 6-max Hold'em hands played by the engine (one record per command,
as the dealer appends them). Per batch: sealing (what the dealer adds to every append), checking
a dealer's seal (what a reader adds per record it verifies alone), and checking the wallet's
close (its seal plus the protobuf parse of the writer rule), each next to decoding the batch's
protobuf, a per-record cost every reader already pays; for Ed25519 also *screening* (the seal
read, its key, writer and place checked, its signature left to the run's head: what a rebuild
pays per record, :class:`~poker.tablelog.seals.TableSeals`).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bench.harness import Result, rates
from bench.services import engine_table, play_hands
from poker.eventstore.sealing import Writer, new_keyring, new_service_keyrings
from poker.tablelog.seals import TableSeals
from poker.v1 import events_pb2 as pb

HANDS = 200
SEED = 20261201


def _costs(
    dealer: TableSeals, wallet: TableSeals, reader: TableSeals, records: list[tuple[str, bytes]]
) -> dict[str, float]:
    """µs per batch of sealing, checking, screening, checking the wallet's close, decoding."""
    sealed = [
        (n, msg_id, data, dealer.headers("bench-seal", n, msg_id, data))
        for n, (msg_id, data) in enumerate(records)
    ]
    close = pb.TableEventBatch(
        command_id="wallet-close-v9",
        events=[pb.TableEvent(version=9, table_closed=pb.TableClosed(reason="abandoned"))],
    ).SerializeToString()
    close_headers = wallet.headers("bench-seal", 8, "wallet-close-v9", close)

    def seal() -> int:
        for n, msg_id, data, _ in sealed:
            dealer.headers("bench-seal", n, msg_id, data)
        return len(sealed)

    def check() -> int:
        for n, msg_id, data, headers in sealed:
            reader.check(
                "bench-seal", n + 1, previous_position=n, msg_id=msg_id, data=data, headers=headers
            )
        return len(sealed)

    def screen() -> int:
        for n, msg_id, data, headers in sealed:
            reader.screen(
                "bench-seal", n + 1, previous_position=n, msg_id=msg_id, data=data, headers=headers
            )
        return len(sealed)

    def check_close() -> int:
        for _ in range(len(sealed)):
            reader.check(
                "bench-seal",
                9,
                previous_position=8,
                msg_id="wallet-close-v9",
                data=close,
                headers=close_headers,
            )
        return len(sealed)

    def decode() -> int:
        for _, _, data, _ in sealed:
            pb.TableEventBatch.FromString(data)
        return len(sealed)

    batches: dict[str, Callable[[], int]] = {
        "seal": seal,
        "check": check,
        "screen": screen,
        "check_close": check_close,
        "decode": decode,
    }
    return {name: 1e6 / rate for name, rate in rates(batches).items()}


def run() -> list[Result]:
    """Seal and check every batch of :data:`HANDS` hands; µs per batch."""
    table = engine_table("bench-seal", 6)
    play_hands(table, HANDS, random.Random(SEED))
    records = [(f"c{n}", data) for n, (_, data) in enumerate(table.records)]
    keyring = new_keyring("bench")
    hmac = TableSeals(keyring, Writer.DEALER)
    micro = _costs(hmac, TableSeals(keyring, Writer.WALLET), hmac, records)
    room = new_service_keyrings("bench")
    signed = _costs(
        TableSeals(room.dealer, Writer.DEALER),
        TableSeals(room.wallet, Writer.WALLET),
        TableSeals(room.public, Writer.DEALER),
        records[: len(records) // 4],  # a quarter: verifying is 100x the MAC's cost
    )
    mean_bytes = sum(len(data) for _, data in records) / len(records)
    decode = ("protobuf decode", micro["decode"])
    return [
        Result("sealing.mean_batch", mean_bytes, "bytes"),
        Result("sealing.seal", micro["seal"], "µs/batch", *decode),
        Result("sealing.check", micro["check"], "µs/batch", *decode),
        Result("sealing.check_wallet_close", micro["check_close"], "µs/batch", *decode),
        Result("sealing.seal_and_check", micro["seal"] + micro["check"], "µs/batch"),
        Result("sealing.ed25519.seal", signed["seal"], "µs/batch", *decode),
        Result("sealing.ed25519.check", signed["check"], "µs/batch", *decode),
        Result("sealing.ed25519.screen", signed["screen"], "µs/batch", *decode),
        Result("sealing.ed25519.check_wallet_close", signed["check_close"], "µs/batch", *decode),
    ]
