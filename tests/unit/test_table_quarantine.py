"""One refused record costs one table: the table id filter of every listing, the quarantine's
state, the dealer's service serving the other tables (commands, reads, ListTables, the takeover
scan) and the operator's removal refusing to delete good history."""

from __future__ import annotations

from typing import cast

import pytest
from structlog.testing import capture_logs

from poker.dealer import queries
from poker.dealer.errors import TableQuarantined
from poker.dealer.ownership import LeaseOwnership, SoleOwner, TakeoverScanner
from poker.dealer.pages import ListFilter
from poker.dealer.quarantine import Quarantine
from poker.dealer.replies import table_summary
from poker.dealer.tables import TableService
from poker.engine.table import execute
from poker.eventstore.api import Record
from poker.eventstore.sealing import SEAL_HEADER, Keyring, Writer, new_keyring
from poker.tablelog.codec import UnreadableRecord
from poker.tablelog.feed import ForeignSubjects, InMemoryFeed, is_table_id
from poker.tablelog.seals import TableSeals
from poker.testing.dealer import TEST_KEYRINGS, harness_seals
from poker.tools.logtools import judge_removal
from tests.table_support import STILL_NL as CONFIG
from tests.unit.test_dealer_service import Parts, seated


def test_only_one_token_subjects_are_tables() -> None:
    assert is_table_id("t-1") and is_table_id("T_2")
    assert not any(is_table_id(name) for name in ("0.t-1", "", "t 1", "*", ">", "t" * 129))


def test_foreign_subjects_are_skipped_counted_and_logged_once() -> None:
    counts: list[int] = []
    foreign = ForeignSubjects(on_count=counts.append)
    listing = {"poker.table.t1": 4, "poker.table.0.t1": 1, "poker.table.t2": 2}
    with capture_logs() as logs:
        assert foreign.split("poker.table.", listing) == {"t1": 4, "t2": 2}
        assert foreign.split("poker.table.", listing) == {"t1": 4, "t2": 2}
    assert foreign.current == ("poker.table.0.t1",)
    assert counts == [1, 1]
    assert [line["subject"] for line in logs if line["event"] == "table_log_foreign_subject"] == [
        "poker.table.0.t1"
    ]
    foreign.split("poker.table.", {"poker.table.t1": 4})
    assert counts[-1] == 0


def test_the_quarantine_is_judged_again_only_when_the_log_changes() -> None:
    counted: list[int] = []
    quarantine = Quarantine(on_count=counted.append)
    with capture_logs() as logs:
        entry = quarantine.add(UnreadableRecord("t-1", 7))
        assert (entry.position, entry.cause, counted) == (7, "undecodable", [1])
        assert "t-1" in quarantine
        assert quarantine.retry_due("t-1", 3)  # no scan judged it yet: once more
        quarantine.add(UnreadableRecord("t-1", 7))  # refused again: not logged again
        quarantine.judged("t-1", 3)
        assert not quarantine.retry_due("t-1", 3)  # the same log: no reload
        assert quarantine.retry_due("t-1", 2)  # one record less: judged again
        quarantine.lift("t-1")
    assert "t-1" not in quarantine and counted[-1] == 0
    quarantine.add(UnreadableRecord("t-2", 3))
    assert quarantine.retry_due("t-2", 9)
    quarantine.judged("t-2", 9)  # not loaded here (another dealer holds it): not counted
    assert "t-2" not in quarantine and counted[-1] == 0
    events = [line["event"] for line in logs]
    assert events == ["table_quarantined", "table_quarantine_lifted"]
    assert logs[0]["position"] == 7 and logs[0]["reason"] == "undecodable"


async def forge(
    parts: Parts, table_id: str, data: bytes | None = None, *, sealed: bool = False
) -> int:
    """Append a record nobody trusted wrote (or, ``sealed``, under a valid seal: a leaked key)."""
    last = await parts.store.last_position(table_id)
    payload = data if data is not None else b"\x08\x01"
    headers = {SEAL_HEADER: "v1 forged"}
    if sealed:
        headers = harness_seals().headers(table_id, last, "forged", payload)
    return await parts.store.append(
        table_id, payload, expected_position=last, msg_id="forged", headers=headers
    )


def with_feed(parts: Parts) -> TableService:
    """A service that lists tables from the log (as ListTables does), t1 and t2 known."""
    feed = InMemoryFeed(parts.store)
    feed.register("t1")
    feed.register("t2")
    return TableService(
        parts.repository,
        parts.wallet,
        parts.metrics,
        gate=SoleOwner(),
        feed=feed,
        clock_ms=lambda: parts.now,
    )


async def test_a_forged_record_quarantines_its_table_and_the_others_go_on() -> None:
    parts = Parts()
    service = with_feed(parts)
    await service.create_table("t1", "create", CONFIG)
    await service.sit_down("t1", "sit-ann", "ann", 1, 100)
    await service.create_table("t2", "create-2", CONFIG)
    service.timers.cancel("t1")
    service.timers.cancel("t2")
    before = await service.table("t1")
    position = await forge(parts, "t1")
    with pytest.raises(TableQuarantined, match="suspended: its log holds a record that failed"):
        await service.sit_out(
            "t1", "ann-out", "ann", 1
        )  # the append conflicts, the catch-up refuses
    with pytest.raises(TableQuarantined):
        await service.table("t1")
    await service.sit_down("t2", "sit-ann-2", "ann", 1, 100)  # another table goes on
    assert parts.registry.get_sample_value("poker_dealer_tables_quarantined") == 1
    page, _ = await queries.list_tables(service, ListFilter(), "", 100)
    listed = {entry.table_id: entry for entry in page}
    assert sorted(listed) == ["t1", "t2"]
    entry = listed["t1"]
    assert entry.quarantine is not None and entry.quarantine.position == position
    assert entry.listing is not None
    assert entry.listing.version in (0, before.version)  # as last read, if it was
    assert listed["t2"].quarantine is None and listed["t2"].listing is not None
    summary = table_summary(*entry)
    assert summary.quarantined and f"position {position}" in summary.quarantine_reason


async def test_a_fresh_dealer_adopts_the_others_and_quarantines_the_forged_one() -> None:
    parts = Parts()
    await seated(parts)
    await forge(parts, "t1", b"\xff\xff not a batch", sealed=True)  # readable seal, no batch
    fresh = parts.service()
    await fresh.create_table("t2", "create-2", CONFIG)
    assert await fresh.adopt("t1")  # never raises: the scan and the start go on
    quarantined = fresh.quarantined("t1")
    assert quarantined is not None and quarantined.cause == "undecodable"
    with pytest.raises(TableQuarantined):
        await fresh.stand_up("t1", "c", "ann", 1)
    assert (await fresh.table("t2")).version == 1  # the other table is served


class _Feed:
    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    async def table_counts(self) -> dict[str, int]:
        return dict(self.counts)


class _NobodyHolds:
    def holds(self, table_id: str) -> bool:
        return False


async def test_the_scanner_does_not_reload_a_quarantined_table_until_its_log_changes() -> None:
    quarantine = Quarantine()
    offered: list[str] = []

    async def adopt_refusing(table_id: str) -> bool:
        offered.append(table_id)
        if table_id == "bad":
            quarantine.add(UnreadableRecord("bad", 5))
        if table_id == "boom":
            raise RuntimeError("one table's failure")
        return True

    feed = _Feed({"bad": 5, "boom": 1, "good": 3})
    scanner = TakeoverScanner(
        cast(object, feed),  # type: ignore[arg-type]
        cast(LeaseOwnership, _NobodyHolds()),
        adopt_refusing,
        1.0,
        quarantine=quarantine,
    )
    await scanner.scan_once()  # "boom" raises: the scan goes on to "good"
    assert offered == ["bad", "boom", "good"]
    offered.clear()
    await scanner.scan_once()
    assert "bad" not in offered  # the same log: not loaded again
    feed.counts["bad"] = 4  # the operator removed the record
    offered.clear()
    await scanner.scan_once()
    assert offered[0] == "bad"


def _records() -> tuple[list[Record], Record]:
    """A real table's first two records, and a forged third."""
    parts_seals = harness_seals()
    from poker.engine.table import CreateTable, envelopes
    from poker.tablelog.chain import ChainState, record_hash
    from poker.v1 import events_pb2 as pb

    state, events = execute(None, CreateTable(CONFIG, now=1))
    first = pb.TableEventBatch(
        command_id="c1",
        events=envelopes(None, events, table_id="t1", now=1),
        previous_batch_hash=ChainState.start("t1").last_hash or b"",
    ).SerializeToString()
    good = Record("t1", 3, "c1", first, parts_seals.headers("t1", 0, "c1", first))
    empty = pb.TableEventBatch(command_id="c2", previous_batch_hash=record_hash(first))
    second = empty.SerializeToString()
    good2 = Record("t1", 8, "c2", second, parts_seals.headers("t1", 3, "c2", second))
    forged = Record("t1", 9, "x", b"\x08\x01", {SEAL_HEADER: "v1 nonsense"})
    assert state is not None
    return [good, good2], forged


def test_the_removal_refuses_good_history_and_takes_only_the_first_refused_record() -> None:
    (good, good2), forged = _records()
    seals = harness_seals()

    def judge(
        table: str, record: Record, before: list[Record], subject: str = ""
    ) -> tuple[bool, str]:
        verdict = judge_removal(
            table,
            record.position,
            subject or f"poker.table.{table}",
            subject_prefix="poker.table",
            before=before,
            record=record,
            seals=seals,
        )
        return verdict.allowed, verdict.why

    allowed, why = judge("t1", good2, [good])
    assert not allowed and "passes every check" in why
    allowed, why = judge("t1", good, [])
    assert not allowed and "passes every check" in why
    allowed, why = judge("t1", forged, [good, good2])
    assert allowed and "seal is refused" in why
    after_forged = Record("t1", 10, "c3", good2.data, good2.headers)
    allowed, why = judge("t1", after_forged, [good, good2, forged])
    assert not allowed and "remove that one first" in why
    allowed, why = judge("t1", forged, [good, good2], subject="poker.table.t2")
    assert not allowed and "not 'poker.table.t1'" in why
    allowed, _ = judge("0.t1", forged, [])
    assert allowed  # a subject that is no table's
    no_keys = judge_removal(
        "t1",
        9,
        "poker.table.t1",
        subject_prefix="poker.table",
        before=[],
        record=forged,
        seals=None,
    )
    assert not no_keys.allowed and "--log-keys" in no_keys.why
    undecodable = b"\xff\xff"
    sealed = Record("t1", 9, "x", undecodable, seals.headers("t1", 8, "x", undecodable))
    allowed, why = judge("t1", sealed, [good, good2])
    assert allowed and "not a table batch" in why


def test_the_removal_does_not_judge_an_hmac_record_its_public_keys_cannot_check() -> None:
    """A room moved from HMAC keys keeps its old records, sealed under secrets the public
    keyring does not hold: the removal must not take them for forgeries."""
    old = new_keyring("old")
    data = b"\x08\x01"
    record = Record("t1", 5, "c", data, TableSeals(old, Writer.DEALER).headers("t1", 0, "c", data))
    public = Keyring(TEST_KEYRINGS.public.keys, {}, hmac_below=100)
    verdict = judge_removal(
        "t1",
        5,
        "poker.table.t1",
        subject_prefix="poker.table",
        before=[],
        record=record,
        seals=TableSeals(public, Writer.DEALER),
    )
    assert not verdict.allowed and "hmac_below" in verdict.why
