"""Command ids at the dealer's application service (in-memory stores, the default bound of
2,048 recent ids): first outcomes forever, other payloads refused, logs written before digests,
old snapshots, and seats only against an open hold."""

from __future__ import annotations

import io
import pickle
from dataclasses import replace

import pytest

from poker.dealer.tables import TableService
from poker.dealer.wallet_port import HeldFunds, HoldRefused, HoldState, InMemoryWallet
from poker.engine.table import CreateTable, execute
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.command_ids import DEFAULT_RECENT, CommandIdReused, CommandIndex, Outcome
from poker.tablelog.repository import TableLog, TableRepository
from poker.tablelog.snapshot_codec import FINGERPRINT, decode_table
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.v1 import events_pb2 as pb
from tests.table_support import STILL_NL as CONFIG
from tests.unit.test_dealer_service import Parts, seated


async def sit_out_and_in(service: TableService, player: str, seat: int, count: int) -> None:
    for n in range(count):
        if n % 2 == 0:
            await service.sit_out("t1", f"out-{n}", player, seat)
        else:
            await service.sit_in("t1", f"in-{n}", player, seat, post_blinds=False)


async def log_length(parts: Parts) -> int:
    return len([record async for record in parts.store.read("t1")])


async def test_a_seat_id_reused_after_more_than_2048_commands_answers_its_first_outcome() -> None:
    parts = Parts(every=500)
    service = await seated(parts)
    first = await service.table("t1")
    await sit_out_and_in(service, "ann", 1, DEFAULT_RECENT + 300)
    index = service.served.owned["t1"].state.commands
    assert index.recent_outcome("sit-ann") is None and index.archived > 200
    length = await log_length(parts)

    again = await service.sit_down("t1", "sit-ann", "ann", 1, 100)

    assert again.repeated and again.events == 1 and again.version <= first.version
    assert await log_length(parts) == length
    assert parts.wallet.holds.keys() == {"sit-ann", "sit-bob"}
    with pytest.raises(CommandIdReused, match="command id sit-ann was already used"):
        await service.sit_down("t1", "sit-ann", "ann", 1, 101)
    # A rebuild (snapshot + tail) knows the archived id too, and nothing was appended.
    rebuilt = parts.service()
    assert (await rebuilt.sit_down("t1", "sit-ann", "ann", 1, 100)).repeated
    assert await log_length(parts) == length


async def test_every_kind_of_command_is_refused_under_another_commands_id() -> None:
    parts = Parts()
    service = await seated(parts)
    await service.sit_out("t1", "out", "ann", 1)
    length = await log_length(parts)
    refusals = [
        service.sit_in("t1", "out", "ann", 1, post_blinds=False),
        service.sit_out("t1", "out", "bob", 2),  # another player under ann's id
        service.stand_up("t1", "out", "ann", 1),
        service.top_up("t1", "out", "ann", 1, 10),
        service.close_table("t1", "out", "no"),
        service.create_table("t1", "out", CONFIG),
    ]
    for refusal in refusals:
        with pytest.raises(CommandIdReused):
            await refusal
    assert await log_length(parts) == length
    assert (await service.sit_out("t1", "out", "ann", 1)).repeated


async def test_a_log_written_before_digests_still_compares_seats_and_top_ups() -> None:
    """Batches without a digest: a seat's PlayerSeated records every field of its request (its
    hold id is the command id), so another buy-in under its id is still refused."""
    parts = Parts()
    await seated(parts)
    # The log as the dealer before digests wrote it: no command_digest anywhere.
    parts.store = await without_digests(parts.store)
    parts.repository = TableRepository(
        parts.store,
        InMemorySnapshotStore(),
        parts.metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    rebuilt = parts.service()
    assert (await rebuilt.sit_down("t1", "sit-ann", "ann", 1, 100)).repeated
    with pytest.raises(CommandIdReused):
        await rebuilt.sit_down("t1", "sit-ann", "ann", 1, 150)
    with pytest.raises(CommandIdReused):
        await rebuilt.sit_down("t1", "sit-ann", "ann", 3, 100)
    # What the events cannot tell (a sit-out) is answered with its first outcome, as before.
    await rebuilt.sit_out("t1", "legacy-out", "ann", 1)
    parts.store = await without_digests(parts.store)
    parts.repository = TableRepository(
        parts.store,
        InMemorySnapshotStore(),
        parts.metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    again = parts.service()
    assert (await again.sit_out("t1", "legacy-out", "ann", 1)).repeated
    assert (await again.sit_out("t1", "legacy-out", "bob", 2)).repeated


async def without_digests(store: InMemoryEventStore) -> InMemoryEventStore:
    """A copy of ``store``'s table log with the digests stripped from every batch (and the
    hash chain's links, which came later still: the bytes they hash change here)."""
    copy = InMemoryEventStore()
    position = 0
    async for record in store.read("t1"):
        batch = pb.TableEventBatch.FromString(record.data)
        batch.ClearField("command_digest")
        batch.ClearField("previous_batch_hash")
        data = batch.SerializeToString()
        # Sealed again as the dealer of that time would have: only the digest is taken away.
        headers = harness_seals().headers("t1", position, record.msg_id, data)
        position = await copy.append(
            "t1", data, expected_position=position, msg_id=record.msg_id, headers=headers
        )
    return copy


async def test_a_snapshot_that_kept_only_the_recent_ids_is_replaced_by_a_full_replay() -> None:
    """A snapshot of the dealer before this index (its ids a dict of the recent ones) would
    hide every older id: it is ignored, and the whole log is replayed."""
    state, _ = execute(None, CreateTable(CONFIG, now=0))
    buffer = io.BytesIO()
    buffer.write(FINGERPRINT)
    pickle.Pickler(buffer, protocol=5).dump((state, {"c1": (1, 1)}))
    with pytest.raises(ValueError, match="only the recent command ids"):
        decode_table(buffer.getvalue())
    parts = Parts(every=1000)
    service = await seated(parts)
    await parts.snapshots.save("t1", 2, buffer.getvalue())
    rebuilt = await parts.repository.load("t1")
    assert rebuilt.snapshot_mark == 0 and len(rebuilt.state.commands) == 3
    assert rebuilt.state.table == await service.table("t1")


def test_a_damaged_index_is_refused() -> None:
    index = CommandIndex(recent=1, slack=0)
    for n in range(1, 6):
        index.add(f"c{n}", Outcome(n, n, n, b"d"))
    data = index.to_bytes()
    for broken in (data[:-1], data + b"\x00", b"XXXX" + data[4:]):
        with pytest.raises(ValueError):
            CommandIndex.from_bytes(broken)


class PostingWallet(InMemoryWallet):
    """A wallet whose every hold is answered as it is after the seat it paid for was posted."""

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> HeldFunds:
        held = await super().place_hold(
            player_id, amount, hold_id=hold_id, ttl_s=ttl_s, table_id=table_id
        )
        return replace(held, state=self.answer_state, player_id=self.answer_player or player_id)

    answer_state = HoldState.POSTED
    answer_player = ""


@pytest.mark.parametrize(
    ("state", "player", "refusal"),
    [
        (HoldState.POSTED, "", "is posted, not open"),
        (HoldState.VOIDED, "", "is voided, not open"),
        (HoldState.EXPIRED, "", "is expired, not open"),
        (HoldState.UNKNOWN, "", "is unknown, not open"),
        (HoldState.OPEN, "bob", "of player bob"),
    ],
)
async def test_a_seat_is_granted_only_against_an_open_hold_of_that_player(
    state: HoldState, player: str, refusal: str
) -> None:
    parts = Parts()
    service = await seated(parts)
    wallet = PostingWallet({"cat": 1_000, "ann": 1_000})
    wallet.answer_state, wallet.answer_player = state, player
    parts.wallet = wallet
    strict = parts.service()
    length = await log_length(parts)
    with pytest.raises(HoldRefused, match=refusal):
        await strict.sit_down("t1", "sit-cat", "cat", 3, 100)
    with pytest.raises(HoldRefused, match=refusal):
        await strict.top_up("t1", "top-ann", "ann", 1, 10)
    assert await log_length(parts) == length
    assert wallet.voided == []  # not the dealer's hold to void
    assert (await service.table("t1")).seat(3) is None


async def test_a_dealer_that_forgot_an_id_still_cannot_seat_on_its_posted_hold() -> None:
    parts = Parts()
    service = await seated(parts)
    parts.wallet.post("sit-ann")
    await service.stand_up("t1", "leave", "ann", 1)
    length = await log_length(parts)
    loaded = service.served.owned["t1"]
    service.served.owned["t1"] = replace(loaded, state=TableLog(loaded.state.table, CommandIndex()))
    with pytest.raises(HoldRefused, match="is posted"):
        await service.sit_down("t1", "sit-ann", "ann", 1, 100)
    assert await log_length(parts) == length


def test_an_archived_run_out_of_order_is_refused_at_its_first_lookup() -> None:
    """A snapshot's runs are read without a step per id (a rebuild's cost does not grow with
    the table's history); their order is checked when a lookup first bisects them, so a
    damaged run can never hide an id."""
    index = CommandIndex(recent=1, slack=0)
    for n in range(1, 6):
        index.add(f"c{n}", Outcome(n, n, n, b"d"))
    data = bytearray(index.to_bytes())
    first_run = index._runs[0].hashes
    assert first_run is not None and len(first_run) >= 2
    at = data.find(first_run.tobytes())
    data[at : at + 16] = data[at + 8 : at + 16] + data[at : at + 8]  # its two first swapped
    restored = CommandIndex.from_bytes(bytes(data), recent=1, slack=0)
    with pytest.raises(ValueError, match="not sorted"):
        restored.candidates("c1")
    assert CommandIndex.from_bytes(index.to_bytes(), recent=1, slack=0).candidates("c1") == [1]
