"""The table log's hash chain (poker/tablelog/chain.py) through the dealer's own path
(in-memory stores): every batch links to the bytes of the one before; an edited, an injected
and a removed batch are each found and named (table, version) on replay, even when whoever
changed the log could seal what he wrote; logs written before the chain still load."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from poker.dealer.errors import TableQuarantined
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import Refusal
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.chain import check_records, genesis, record_hash
from poker.tablelog.codec import BrokenChain, UntrustedRecord
from poker.tablelog.repository import TableRepository
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.v1 import events_pb2 as pb
from tests.unit.test_dealer_service import Parts, seated

Batches = list[pb.TableEventBatch]


async def played(parts: Parts) -> list[tuple[int, bytes]]:
    """A table with a few commands: its records (position, bytes)."""
    service = await seated(parts)
    await service.sit_out("t1", "out", "ann", 1)
    await service.sit_in("t1", "in", "ann", 1, post_blinds=False)
    await service.top_up("t1", "top", "bob", 2, 10)
    return [(record.position, record.data) async for record in parts.store.read("t1")]


async def rewritten(parts: Parts, change: Callable[[Batches], Batches]) -> Parts:
    """The log with ``change`` made to its batches, every record sealed again (the tampering
    of someone who holds a dealer key, which the seals alone cannot find)."""
    batches = [pb.TableEventBatch.FromString(data) for _, data in await played(parts)]
    store = InMemoryEventStore()
    position = 0
    for batch in change(batches):
        data = batch.SerializeToString()
        headers = harness_seals().headers("t1", position, batch.command_id, data)
        position = await store.append(
            "t1", data, expected_position=position, msg_id=batch.command_id, headers=headers
        )
    tampered = Parts()
    tampered.store = store
    tampered.repository = TableRepository(
        store,
        InMemorySnapshotStore(),
        tampered.metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    return tampered


async def refusal(parts: Parts) -> BrokenChain:
    with pytest.raises(TableQuarantined) as suspended:  # that table alone: quarantined
        await parts.service().table("t1")
    broken = suspended.value.__cause__
    assert isinstance(broken, BrokenChain)
    return broken


async def test_every_batch_links_to_the_bytes_of_the_one_before() -> None:
    records = await played(Parts())
    batches = [pb.TableEventBatch.FromString(data) for _, data in records]
    assert batches[0].previous_batch_hash == genesis("t1")
    for (_, data), batch in zip(records, batches[1:], strict=False):
        assert batch.previous_batch_hash == record_hash(data)
    assert check_records("t1", records) == []


async def test_an_edited_batch_is_named() -> None:
    def edit(batches: Batches) -> Batches:
        batches[2].events[0].player_seated.amount = 1_000  # bob bought in for more
        return batches

    broken = await refusal(await rewritten(Parts(), edit))
    assert broken.broken.kind == "edited"
    assert broken.broken.version == 3
    assert str(broken) == (
        "Table t1 cannot be served: its log's hash chain breaks at version 3 (table t1: the batch"
        " of version 3 (position 3) is not the batch the next one chains to: it was edited or"
        " replaced); an operator must look at it."
    )


async def test_an_injected_batch_is_named() -> None:
    def inject(batches: Batches) -> Batches:
        # A sit-out between the seats and ann's own sit-out, linked to the batch before it and
        # the versions after it moved on: only the batch after it still links to the old one.
        forged = pb.TableEventBatch()
        forged.CopyFrom(batches[3])
        forged.command_id = "forged"
        rest = batches[3:]
        for batch in rest:
            for event in batch.events:
                event.version += 1
        previous = batches[2].SerializeToString()
        forged.previous_batch_hash = record_hash(previous)
        return [*batches[:3], forged, *rest]

    broken = await refusal(await rewritten(Parts(), inject))
    assert broken.broken.kind == "injected"
    assert broken.broken.version == 4
    assert "the batch of version 4 (position 4) was injected" in str(broken)


async def test_a_removed_batch_is_named() -> None:
    def remove(batches: Batches) -> Batches:
        return [*batches[:3], *batches[4:]]  # ann's sit-out is gone

    broken = await refusal(await rewritten(Parts(), remove))
    assert broken.broken.kind == "removed"
    assert "the batches of versions 4 to 4 were removed before position 4" in str(broken)


async def test_a_log_written_before_the_chain_loads_and_the_chain_starts_after_it() -> None:
    def unchained(batches: Batches) -> Batches:
        for batch in batches:
            batch.ClearField("previous_batch_hash")
        return batches

    parts = await rewritten(Parts(), unchained)
    service = parts.service()
    assert (await service.table("t1")).version == 6
    await service.sit_out("t1", "later", "bob", 2)  # the first batch with a link
    records = [(record.position, record.data) async for record in parts.store.read("t1")]
    last = pb.TableEventBatch.FromString(records[-1][1])
    assert last.previous_batch_hash == record_hash(records[-2][1])
    assert check_records("t1", records) == []
    # From there on a batch without its link is refused.
    stripped = [
        *records,
        (records[-1][0] + 1, pb.TableEventBatch(command_id="x").SerializeToString()),
    ]
    assert [b.kind for b in check_records("t1", stripped)] == ["unlinked"]


async def test_a_copied_batch_under_a_forged_seal_is_named_not_the_batch_it_copies() -> None:
    """A real batch appended again under a seal of other bytes breaks the chain at the record
    it copies (its link is that record's): its own signature is verified first, so the copy is
    refused as the forgery it is and the quarantine names it, never the real history."""
    parts = Parts()
    records = await played(parts)
    last, data = records[-1]
    headers = harness_seals().headers("t1", last, "forged", b"other bytes")
    forged_at = await parts.store.append(
        "t1", data, expected_position=last, msg_id="forged", headers=headers
    )
    with pytest.raises(TableQuarantined) as suspended:
        await parts.service().table("t1")
    refused = suspended.value.__cause__
    assert isinstance(refused, UntrustedRecord)
    assert (refused.position, refused.reason) == (forged_at, Refusal.BAD_MAC)
