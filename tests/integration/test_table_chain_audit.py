"""The wallet's Audit reports a table log whose hash chain breaks (poker/tablelog/chain.py), on
a real nats-server with the dealer and the wallet over real gRPC: a batch appended past the
dealer, sealed with a dealer key (an insider), but without its link to the batch before it."""

from __future__ import annotations

from poker.eventstore.sealing import SEAL_HEADER
from poker.testing.dealer import harness_seals
from poker.testing.wallet import eventually
from poker.v1 import events_pb2 as pb
from tests.integration.test_log_trust import Room, last_record, room

__all__ = ["room"]  # the fixture, shared


async def test_the_audit_names_a_batch_that_breaks_the_tables_chain(room: Room) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    report = await room.operator.audit()
    assert not [b for b in report.breaches if b.kind == "broken_chain"]
    position, version = await last_record(room, table_id)
    injected = pb.TableEventBatch(
        command_id="insider",
        events=[
            pb.TableEvent(
                table_id=table_id, version=version + 1, player_sat_out=pb.PlayerSatOut(seat=1)
            )
        ],
    ).SerializeToString()
    headers = harness_seals().headers(table_id, position, "insider", injected)
    assert SEAL_HEADER in headers
    at = await room.table_log.append(
        table_id, injected, expected_position=position, msg_id="insider", headers=headers
    )
    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "broken_chain" for b in r.breaches)
    )
    broken = [b for b in report.breaches if b.kind == "broken_chain"]
    assert [b.subject for b in broken] == [table_id]
    # The deep audit (every table's log re-read from its first record) finds the same break.
    deep = await room.operator.audit(deep=True)
    assert [(b.subject, b.message) for b in deep.breaches if b.kind == "broken_chain"] == [
        (b.subject, b.message) for b in broken
    ]
    assert broken[0].message == (
        f"table {table_id}: the batch of version {version + 1} (position {at}) has no link to the"
        " batch before it, after the chain began: it was injected, or its link stripped"
    )
