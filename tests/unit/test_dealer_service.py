"""The dealer's application service on in-memory stores: commands, retries, holds, snapshots,
rebuilds, the crash rule, the timers' next step, per-viewer redaction and the cross-table
reads."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from poker.dealer import queries
from poker.dealer.clock import Wake, next_wake
from poker.dealer.config import CrashRule, load_settings
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import SoleOwner
from poker.dealer.pages import ListFilter
from poker.dealer.pipeline import UseCase
from poker.dealer.redaction import redact_event
from poker.dealer.replies import table_view
from poker.dealer.tables import TableService
from poker.dealer.wallet_port import InMemoryWallet, InsufficientFunds
from poker.engine.cards import DECK_52
from poker.engine.table import (
    Action,
    CreateTable,
    SitDown,
    SitOut,
    StartNextHand,
    TableRuleError,
    envelopes,
    execute,
)
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.errors import NotFound, RuleViolation
from poker.tablelog import command_ids
from poker.tablelog.command_ids import CommandIndex
from poker.tablelog.repository import TableAppend, TableLog, TableRepository
from poker.tablelog.snapshot_codec import FINGERPRINT, decode_table, encode_table
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.v1 import events_pb2 as pb
from tests.table_support import STILL_NL as CONFIG


class Parts:
    def __init__(self, *, crash_rule: CrashRule = CrashRule.CLOSE, every: int = 5) -> None:
        self.store = InMemoryEventStore()
        self.snapshots = InMemorySnapshotStore()
        self.registry = CollectorRegistry()
        self.metrics = DealerMetrics(self.registry)
        self.wallet = InMemoryWallet({"ann": 1_000, "bob": 1_000, "cat": 50})
        self.now = 1_000
        self.repository = TableRepository(
            self.store,
            self.snapshots,
            self.metrics.table_log,
            seals=harness_seals(),
            deck_keys=TEST_DECK_KEYS,
            snapshot_every=every,
        )
        self.crash_rule = crash_rule

    def service(self) -> TableService:
        return TableService(
            self.repository,
            self.wallet,
            self.metrics,
            gate=SoleOwner(),
            crash_rule=self.crash_rule,
            clock_ms=lambda: self.now,
        )


async def seated(parts: Parts) -> TableService:
    service = parts.service()
    await service.create_table("t1", "create", CONFIG)
    await service.sit_down("t1", "sit-ann", "ann", 1, 100)
    await service.sit_down("t1", "sit-bob", "bob", 2, 100)
    service.timers.cancel("t1")  # the tests drive the hands themselves
    return service


async def deal(service: TableService, parts: Parts) -> None:
    """Deal hand t1.1 with an unshuffled deck, through the service's own command path."""

    def build(state: object, now: int) -> StartNextHand:
        return StartNextHand("t1.1", DECK_52, now)

    await service.run(UseCase("t1", "deal", build))
    service.timers.cancel("t1")


async def test_a_retried_command_answers_like_the_first_and_acts_once() -> None:
    parts = Parts()
    service = await seated(parts)
    await deal(service, parts)
    state = await service.table("t1")
    assert state.hand is not None and state.hand.seat_to_act is not None
    player = state.seat(state.hand.seat_to_act).player_id  # type: ignore[union-attr]
    first = await service.act("t1", "a1", player, hand_id="t1.1", action=Action.CALL, amount=0)
    again = await service.act("t1", "a1", player, hand_id="t1.1", action=Action.CALL, amount=0)
    assert again.version == first.version and again.repeated
    assert (await service.table("t1")).version == first.version


async def test_the_buy_in_is_held_before_and_released_when_refused() -> None:
    parts = Parts()
    service = await seated(parts)
    assert parts.wallet.available("ann") == 900
    with pytest.raises(InsufficientFunds):
        await service.sit_down("t1", "sit-cat", "cat", 3, 100)
    with pytest.raises(TableRuleError):  # seat taken: refused before the wallet is asked
        await service.sit_down("t1", "sit-cat-2", "cat", 1, 50)
    assert parts.wallet.holds.keys() == {"sit-ann", "sit-bob"}


async def test_unknown_tables_and_stale_hands() -> None:
    parts = Parts()
    service = await seated(parts)
    with pytest.raises(NotFound):
        await service.stand_up("nope", "c", "ann", 1)
    with pytest.raises(NotFound):
        await service.table("nope")
    with pytest.raises(RuleViolation):
        await service.act("t1", "c", "ann", hand_id="t1.9", action=Action.FOLD, amount=0)


def rival_of(parts: Parts) -> TableRepository:
    """Another writer of the same logs (a second dealer that believes it owns the table)."""
    metrics = DealerMetrics(CollectorRegistry()).table_log
    return TableRepository(
        parts.store, parts.snapshots, metrics, seals=harness_seals(), deck_keys=TEST_DECK_KEYS
    )


async def test_a_conflict_decides_again_on_the_log_as_the_rival_left_it() -> None:
    parts = Parts()
    service = await seated(parts)  # its table is now one record behind the log
    rival = rival_of(parts)
    loaded = await rival.load("t1")
    table, events = execute(loaded.state.table, SitOut(2, "bob", parts.now))
    await rival.append(loaded, "rival-out", events, table, parts.now)
    result = await service.sit_out("t1", "ann-out", "ann", 1)
    after = await service.table("t1")
    assert not result.repeated and result.version == table.version + 1 == after.version
    assert [after.seat(n).sitting_out for n in (1, 2)] == [True, True]  # type: ignore[union-attr]
    assert parts.registry.get_sample_value("poker_dealer_concurrency_conflicts_total") == 1


async def test_a_retry_that_catches_up_with_its_own_command_answers_from_it() -> None:
    """The store's duplicate window long past, the same command landed under another msg id:
    the append conflicts, the catch-up brings the batch of this very id, and the command is
    answered from it, not applied twice."""
    parts = Parts()
    service = await seated(parts)
    rival = rival_of(parts)
    loaded = await rival.load("t1")
    table, events = execute(loaded.state.table, SitOut(2, "bob", parts.now))
    digest = command_ids.payload_digest("sit_out", "t1", "bob", 2)
    batch = TableAppend("t1", "bob-out", events, parts.now, digest)
    decided = TableLog(table, loaded.state.commands)
    await rival.aggregate.append(loaded, batch, decided, msg_id="bob-out-long-ago")
    result = await service.sit_out("t1", "bob-out", "bob", 2)
    assert result.repeated and result.version == table.version
    assert await service.table("t1") == table
    assert parts.registry.get_sample_value("poker_dealer_concurrency_conflicts_total") == 1


async def test_list_tables_answers_every_open_table_as_it_is_now() -> None:
    parts = Parts()
    service = await seated(parts)
    await service.create_table("t2", "create-2", CONFIG)
    listed, after = await queries.list_tables(service, ListFilter(), "", 100)
    assert after == "" and all(entry.listing is not None for entry in listed)
    assert [(e.table_id, e.listing.players) for e in listed if e.listing] == [("t1", 2), ("t2", 0)]
    first, after = await queries.list_tables(service, ListFilter(), "", 1)
    assert [e.table_id for e in first] == ["t1"] and after == "t1"
    second, after = await queries.list_tables(service, ListFilter(), after, 1)
    assert [e.table_id for e in second] == ["t2"] and after == ""
    free, _ = await queries.list_tables(service, ListFilter(has_free_seats=True), "", 100)
    assert [e.table_id for e in free] == ["t1", "t2"]  # six seats, two taken
    await service.close_table("t2", "close-2", "done")
    listed, _ = await queries.list_tables(service, ListFilter(), "", 100)
    assert [e.table_id for e in listed] == ["t1"]  # a closed table is not listed


async def test_a_rebuilt_table_equals_the_live_one_with_and_without_snapshots() -> None:
    parts = Parts(every=3)
    service = await seated(parts)
    await deal(service, parts)
    live = await service.table("t1")
    await parts.repository.flush_snapshots()  # written off the command path
    assert parts.registry.get_sample_value("poker_dealer_snapshots_written_total")
    snapshot = await parts.snapshots.load("t1")
    assert snapshot is not None and snapshot.position < live.version
    assert (await parts.repository.load("t1")).state.table == live
    bare = TableRepository(
        parts.store,
        InMemorySnapshotStore(),
        parts.metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    assert (await bare.load("t1")).state.table == live


async def test_a_snapshot_of_another_layout_is_ignored() -> None:
    parts = Parts(every=1000)
    service = await seated(parts)
    live = await service.table("t1")
    await parts.snapshots.save("t1", 1, b"\x00" * len(FINGERPRINT) + b"junk")
    assert (await parts.repository.load("t1")).state.table == live


def test_the_snapshot_codec_refuses_foreign_classes() -> None:
    state, _ = execute(None, CreateTable(CONFIG, now=0))
    data = encode_table(state, CommandIndex())
    assert decode_table(data)[0] == state
    evil = FINGERPRINT + b"cos\nsystem\n(S'true'\ntR."
    with pytest.raises(Exception, match="may not appear"):
        decode_table(evil)


@pytest.mark.parametrize(
    ("rule", "closed", "left_seated"),
    [(CrashRule.CLOSE, True, 0), (CrashRule.VOID, False, 2), (CrashRule.RESUME, False, 2)],
)
async def test_taking_over_a_running_hand_applies_the_crash_rule(
    rule: CrashRule, closed: bool, left_seated: int
) -> None:
    parts = Parts(crash_rule=rule)
    service = await seated(parts)
    await deal(service, parts)
    successor = parts.service()  # a new process: nothing in memory
    assert await successor.adopt("t1") is not closed
    state = await successor.table("t1")
    assert state.closed is closed
    assert len(state.occupied()) == left_seated
    assert state.hand_running is (rule is CrashRule.RESUME)
    again = parts.service()
    await again.adopt("t1")  # a second takeover voids nothing more
    assert (await again.table("t1")).version == state.version
    for each in (service, successor, again):
        await each.close()


def test_the_next_timed_step() -> None:
    table, _ = execute(None, CreateTable(CONFIG, now=0))
    assert next_wake(table) is None
    table, _ = execute(table, SitDown(1, "ann", 100, "h1", now=1))
    table, _ = execute(table, SitDown(2, "bob", 100, "h2", now=2))
    assert next_wake(table) == Wake("start", 0, 3)
    table, _ = execute(table, StartNextHand("h", DECK_52, now=10))
    wake = next_wake(table)
    assert wake is not None and wake.kind == "timeout"
    assert table.hand is not None
    assert wake.at == table.hand.deadline and wake.seat == table.hand.seat_to_act


def test_redaction_hides_the_deck_and_the_others_cards() -> None:
    table, _ = execute(None, CreateTable(CONFIG, now=0))
    table, _ = execute(table, SitDown(1, "ann", 100, "h1", now=1))
    table, _ = execute(table, SitDown(2, "bob", 100, "h2", now=2))
    before = table
    table, events = execute(table, StartNextHand("h", DECK_52, now=10))
    wrapped = envelopes(before, events, table_id="t1", now=10)
    started = next(e for e in wrapped if e.HasField("hand_started"))
    dealt = next(e for e in wrapped if e.HasField("hole_cards_dealt"))
    assert started.hand_started.deck and not redact_event(started, 1).hand_started.deck
    mine = {h.seat: h.down for h in redact_event(dealt, 1).hole_cards_dealt.hands}
    original = {h.seat: h.down for h in dealt.hole_cards_dealt.hands}
    assert mine[1] == original[1] and mine[2] == "????"
    assert original[2] not in table_view("t1", table, "ann").SerializeToString().decode("latin-1")
    untouched = {h.seat: h.down for h in dealt.hole_cards_dealt.hands}
    assert untouched == original  # redaction works on a copy
    assert isinstance(redact_event(dealt, None), pb.TableEvent)


def test_settings_from_environment_and_flags() -> None:
    settings = load_settings(
        ["--crash-rule", "void", "--lease-ttl", "3"],
        environ={"DEALER_TOKEN_SECRET": "ab" * 32, "DEALER_SNAPSHOT_EVERY": "7"},
    )
    assert (settings.crash_rule, settings.lease_ttl_s, settings.snapshot_every) == (
        CrashRule.VOID,
        3.0,
        7,
    )
    with pytest.raises(SystemExit):
        load_settings([], environ={"DEALER_TOKEN_SECRET": "ab"})
