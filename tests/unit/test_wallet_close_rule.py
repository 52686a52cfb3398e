"""The abandoned-table rule of the wallet's close (poker.tablelog.seals): its limit, its times,
who it binds, and that every reader carries its input (the chain, snapshots, pokerctl verify)."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from poker.engine.betting import BettingRules, Stakes, Structure, fixed_limit_stakes
from poker.engine.table import (
    CloseTable,
    Command,
    Draw,
    TableConfig,
    TableEventBody,
    TableState,
    draw_option,
    envelopes,
    execute,
    legal_actions,
    make_config,
)
from poker.eventstore.api import Record
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import Refusal, SealRefused, Writer, new_keyring
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.chain import ChainState, advance, check_records, genesis, record_hash
from poker.tablelog.codec import UntrustedRecord
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import (
    CLOSE_GRACE_MS,
    MIN_CLOSE_IDLE_MS,
    TableSeals,
    close_command_id,
    close_idle_limit_ms,
    close_limit_ms,
    idle_rule,
    is_wallet_close,
    premature_close,
    running_turn_after,
    running_turn_ms,
)
from poker.tablelog.snapshot_codec import _chain
from poker.tools import logtools
from poker.v1 import events_pb2 as pb
from poker.wallet import ledger
from poker.wallet.consumer import BatchApplier, Outcome, dealer_stacks
from poker.wallet.mapping import TableView, fold_batch
from poker.wallet.metrics import WalletMetrics
from tests.table_support import Driver
from tests.unit.test_log_tools import two_hands
from tests.unit.test_wallet_consumer import DEALER_SEALS, WALLET_SEALS, deliver, ev
from tests.unit.test_wallet_consumer_signatures import seated_room


def close(at: int, command_id: str = close_command_id(3, 60_000)) -> pb.TableEventBatch:
    events = [
        pb.TableEvent(version=4, occurred_at=at, player_cashed_out=pb.PlayerCashedOut(seat=1)),
        pb.TableEvent(version=5, occurred_at=at, table_closed=pb.TableClosed(at=at)),
    ]
    return pb.TableEventBatch(command_id=command_id, events=events)


def test_the_limit_is_the_stated_one_never_below_the_floor() -> None:
    assert close_idle_limit_ms(close_command_id(9, 60_000)) == 60_000
    assert close_idle_limit_ms(close_command_id(9, 10)) == MIN_CLOSE_IDLE_MS
    assert close_idle_limit_ms("wallet-close-v9") == MIN_CLOSE_IDLE_MS  # written before the rule
    assert close_idle_limit_ms("wallet-close-v9-idle60000x") == MIN_CLOSE_IDLE_MS
    assert close_idle_limit_ms("wallet-close-v9-idle" + "9" * 13) == MIN_CLOSE_IDLE_MS


@given(
    previous=st.integers(0, 2**50),
    gap=st.integers(-(2**20), 2**20),
    limit=st.integers(MIN_CLOSE_IDLE_MS, 2**20),
)
def test_a_close_passes_exactly_when_decided_its_limit_or_more_after_the_last_record(
    previous: int, gap: int, limit: int
) -> None:
    why = idle_rule(previous + gap, previous, limit)
    assert (why is None) == (gap >= limit)
    if gap < 0:
        assert why is not None and "before the table's previous record" in why


def test_an_unknown_previous_time_is_not_checked_and_a_close_without_events_fails() -> None:
    assert idle_rule(0, None, 60_000) is None
    empty = pb.TableEventBatch(command_id="wallet-close-v1")
    assert premature_close(empty, 0, running_turn_ms=None) is not None


def test_the_close_is_timed_by_its_earliest_event() -> None:
    batch = close(100_000)
    batch.events[0].occurred_at = 30_000  # one event stamped earlier: the close's time
    assert premature_close(batch, previous_at=0, running_turn_ms=None) is not None
    assert premature_close(close(100_000), previous_at=40_000, running_turn_ms=None) is None


def test_only_a_wallet_sealed_close_is_held_to_the_rule() -> None:
    seals = TableSeals(new_keyring(), Writer.DEALER)
    early = close(1_000)
    for writer in (Writer.DEALER, None):
        seals.check_close(
            "t1", 9, writer=writer, batch=early, previous_at=999, running_turn_ms=3_600_000
        )
    with pytest.raises(SealRefused) as refused:
        seals.check_close(
            "t1", 9, writer=Writer.WALLET, batch=early, previous_at=999, running_turn_ms=None
        )
    assert refused.value.reason is Refusal.PREMATURE_CLOSE
    assert "position 9 of 't1' is premature" in refused.value.message


def test_the_writer_of_a_seal_is_its_keys() -> None:
    ring = new_keyring()
    wallet = TableSeals(ring, Writer.WALLET)
    assert wallet.writer_of(wallet.headers("t1", 0, "m", b"x")) is Writer.WALLET
    assert wallet.writer_of(TableSeals(ring, Writer.DEALER).headers("t1", 0, "m", b"x")) is (
        Writer.DEALER
    )
    assert wallet.writer_of({}) is None
    assert wallet.writer_of({"Poker-Seal": "nobody:0:x"}) is None


def _log(times: list[int]) -> list[tuple[int, bytes]]:
    records, link = [], genesis("t1")
    for number, at in enumerate(times, start=1):
        event = pb.TableEvent(version=number, occurred_at=at, player_sat_in=pb.PlayerSatIn())
        batch = pb.TableEventBatch(command_id=f"c{number}", events=[event])
        batch.previous_batch_hash = link
        data = batch.SerializeToString()
        records.append((number, data))
        link = record_hash(data)
    return records


def test_the_chain_carries_the_last_events_time_through_records_without_events() -> None:
    records = _log([10, 20])
    empty = pb.TableEventBatch(command_id="e", previous_batch_hash=record_hash(records[-1][1]))
    records.append((3, empty.SerializeToString()))
    state = ChainState.start("t1")

    for position, data in records:
        batch = pb.TableEventBatch.FromString(data)
        at = batch.events[-1].occurred_at if batch.events else None
        state, _ = advance(
            state, "t1", position, data, link=batch.previous_batch_hash, span=(0, 0), at=at
        )
    assert state.last_at == 20
    assert check_records("t1", records) == []


def test_a_snapshot_keeps_the_time_and_an_older_one_loads_without_it() -> None:
    state = ChainState(b"h" * 32, None, 7, True, 12, 123_456)
    assert _chain(state.to_tuple()) == state
    older = _chain(state.to_tuple()[:5])
    assert older.last_at is None and older.position == 12
    with pytest.raises(pickle.UnpicklingError):
        _chain((*state.to_tuple()[:5], "soon"))


def _closed(records: list[tuple[int, bytes]], after_ms: int) -> list[tuple[int, bytes]]:
    """``records`` and the reaper's close, decided ``after_ms`` after the last event."""
    replayed = logtools.replay_records("t1", records)
    assert replayed.state is not None
    last = pb.TableEventBatch.FromString(records[-1][1])
    now = last.events[-1].occurred_at + after_ms
    _, events = execute(replayed.state, CloseTable(now, "abandoned"))
    batch = pb.TableEventBatch(
        command_id=close_command_id(replayed.state.version, 60_000),
        events=envelopes(replayed.state, events, table_id="t1", now=now),
        previous_batch_hash=record_hash(records[-1][1]),
    )
    return [*records, (records[-1][0] + 1, batch.SerializeToString())]


async def test_pokerctl_verify_names_a_premature_close() -> None:
    _, _, records = await two_hands()
    problems = logtools.verify_replayed(logtools.replay_records("t1", _closed(records, 5_000)))
    assert len(problems) == 1, problems
    assert f"the wallet's close at position {records[-1][0] + 1} is premature" in problems[0]
    late = logtools.replay_records("t1", _closed(records, 60_000))
    assert late.state is not None and late.state.closed
    assert logtools.verify_replayed(late) == []


def test_a_wallet_close_carrying_sealed_secrets_is_not_a_wallet_close() -> None:
    # The wallet holds no deck key: secrets under its seal could only be forged ones.
    genuine = close(1_000)
    assert is_wallet_close(genuine.SerializeToString())
    smuggled = pb.TableEventBatch()
    smuggled.CopyFrom(genuine)
    smuggled.sealed_secrets = b"\x01forged secrets"
    assert not is_wallet_close(smuggled.SerializeToString())


# --- a close that voids a running hand (issue #24, point 6) ------------------------------------

HOUR = 3_600_000
#: Every table below: an hour to act, two to draw (a draw game's only).
LONG_RULES = BettingRules(action_timer_ms=HOUR, draw_timer_ms=2 * HOUR)


class LoggedDriver(Driver):
    """A table driven by the engine whose every command is one sealed batch of t1's log (an
    in-memory store whose clock, its ``stored_at``, is the driver's)."""

    def __init__(self, config: TableConfig) -> None:
        self.store = InMemoryEventStore(clock=lambda: self.now)
        self.batches: list[tuple[TableState | None, list[TableEventBody], int]] = []
        super().__init__(config)

    def run(self, command: Command) -> list[TableEventBody]:
        before = self.state
        events = super().run(command)
        self.batches.append((before, list(events), self.now))
        return events

    async def logged(self) -> list[Record]:
        """The batches appended to the store, linked and sealed by the dealer."""
        link, position = genesis("t1"), 0
        for number, (before, events, now) in enumerate(self.batches, start=1):
            batch = pb.TableEventBatch(
                command_id=f"c{number}",
                events=envelopes(before, events, table_id="t1", now=now),
                previous_batch_hash=link,
            )
            data = batch.SerializeToString()
            self.now = now
            headers = DEALER_SEALS.headers("t1", position, f"c{number}", data)
            position = await self.store.append(
                "t1", data, expected_position=position, msg_id=f"c{number}", headers=headers
            )
            link = record_hash(data)
        self.batches.clear()
        return [record async for record in self.store.read("t1")]

    async def wallet_close(self, after_ms: int, stated_ms: int = MIN_CLOSE_IDLE_MS) -> Record:
        """The reaper's close, sealed with the wallet's key, stored ``after_ms`` after the
        table's last record, stating ``stated_ms``."""
        records = await self.logged()
        self.now += after_ms
        table = self.table
        _, events = execute(table, CloseTable(self.now, "abandoned"))
        command_id = close_command_id(table.version, stated_ms)
        data = pb.TableEventBatch(
            command_id=command_id,
            events=envelopes(table, events, table_id="t1", now=self.now),
            previous_batch_hash=record_hash(records[-1].data),
        ).SerializeToString()
        headers = WALLET_SEALS.headers("t1", records[-1].position, command_id, data)
        await self.store.append(
            "t1", data, expected_position=records[-1].position, msg_id=command_id, headers=headers
        )
        return [record async for record in self.store.read("t1")][-1]


def _play_until(table: LoggedDriver, state: str) -> None:
    """Check or call (stand pat in a draw) until the table is in ``state``."""
    while True:
        hand = table.table.hand
        if state == "no hand" and not table.table.hand_running:
            return
        assert hand is not None and table.table.hand_running
        seat = table.to_act
        assert seat is not None
        if draw_option(table.table, seat) is not None:
            if state == "drawing":
                return
            table.run(Draw(seat, table.player(seat), (), table.tick()))
            continue
        if state == "betting":
            return
        actions = {option.action.value for option in legal_actions(table.table, seat)}
        table.act(seat, next(a for a in ("check", "call", "bring_in") if a in actions))


STATES = [
    # game, the state the table is in at its previous record, the running hand's longest turn
    ("holdem", "no hand", None),
    ("holdem", "betting", HOUR),
    ("five-card-draw", "betting", 2 * HOUR),  # a draw game's bound: the larger timer
    ("five-card-draw", "drawing", 2 * HOUR),
    ("seven-card-stud", "betting", HOUR),  # no draw: the draw timer does not count
]


async def _table_in(game: str, state: str) -> LoggedDriver:
    stud = "stud" in game
    stakes = Stakes(0, 0, ante=1, small_bet=4, big_bet=8) if stud else fixed_limit_stakes(2, 4)
    config = make_config(
        game,
        Structure.FIXED_LIMIT,
        stakes,
        real_money=False,
        rules=LONG_RULES,
        pause_between_hands_ms=0,
    )
    table = LoggedDriver(config)
    table.seat_all({1: 200, 2: 200, 3: 200})
    table.deal()
    _play_until(table, state)
    return table


@pytest.mark.parametrize(("game", "state", "turn"), STATES)
async def test_the_bound_of_each_state_is_read_alike_by_every_reader(
    game: str, state: str, turn: int | None
) -> None:
    table = await _table_in(game, state)
    assert running_turn_ms(table.table) == turn  # the engine's table: dealer, reaper, pokerctl
    records = await table.logged()
    view, after = TableView("t1"), None
    for record in records:
        batch = pb.TableEventBatch.FromString(record.data)
        view = fold_batch(view, batch, record.position)  # the wallet's consumer
        after = running_turn_after(batch, after)  # the Audit's dealer_stacks
    assert view.running_turn_ms == after == turn
    limit = close_limit_ms(close_command_id(9, MIN_CLOSE_IDLE_MS), turn)
    assert limit == (MIN_CLOSE_IDLE_MS if turn is None else turn + CLOSE_GRACE_MS)
    # A stated limit above the bound stands.
    assert close_limit_ms(close_command_id(9, 3 * HOUR), turn) == 3 * HOUR


@pytest.mark.parametrize(("game", "state", "turn"), STATES)
async def test_pokerctl_verify_holds_a_close_to_the_running_hands_bound(
    game: str, state: str, turn: int | None
) -> None:
    limit = MIN_CLOSE_IDLE_MS if turn is None else turn + CLOSE_GRACE_MS
    for after_ms, premature in ((2_000, turn is not None), (limit - 1, True), (limit, False)):
        table = await _table_in(game, state)
        await table.wallet_close(after_ms)
        records = [record async for record in table.store.read("t1")]
        replayed = logtools.replay_records("t1", records)
        assert bool(replayed.premature) == premature, (after_ms, replayed.premature)
        if premature and turn is not None and after_ms == 2_000:
            assert f"its longest turn {turn} ms" in replayed.premature[0]


async def test_the_dealer_refuses_a_close_mid_hand_stating_a_second_after_two() -> None:
    """The attack on the dealer's rebuild: the hand's players think for 2 s, and a close
    stating 1 s (the floor) arrives; a close an hour and the grace later is folded."""
    table = await _table_in("holdem", "betting")
    await table.wallet_close(2_000)
    with pytest.raises(UntrustedRecord) as refused:
        await _dealer(table.store).load("t1")
    assert refused.value.reason is Refusal.PREMATURE_CLOSE
    late = await _table_in("holdem", "betting")
    await late.wallet_close(HOUR + CLOSE_GRACE_MS)
    loaded = await _dealer(late.store).load("t1")
    assert loaded.state.table is not None and loaded.state.table.closed


async def test_the_dealer_reads_the_hand_from_records_of_the_same_catch_up() -> None:
    """The hand starts in a record the dealer's fold has not folded yet when it meets the
    close (one catch-up, from the table's first record): the bound is read from its events."""
    table = await _table_in("holdem", "betting")
    await table.wallet_close(2_000)
    repository = _dealer(table.store)
    with pytest.raises(UntrustedRecord):
        await repository.catch_up(repository.empty("t1"))


def _dealer(store: InMemoryEventStore) -> TableRepository:
    return TableRepository(
        store,
        InMemorySnapshotStore(),
        TableLogMetrics(CollectorRegistry(), prefix="t"),
        seals=DEALER_SEALS,
        deck_keys=None,
        save_snapshots=False,
    )


async def test_the_wallet_refuses_a_close_mid_hand_and_moves_no_money() -> None:
    book, log, applier = await seated_room()
    start = ev(
        4, hand_started=pb.HandStarted(game="holdem", rules=pb.HandRules(action_timer_ms=HOUR))
    )
    asked = ev(5, action_requested=pb.ActionRequested(seat=1, deadline=HOUR))
    for event in (start, asked):
        event.hand_id = "t1-1"
    log.clock.now += 1
    hand = await log.append(start, asked)
    log.clock.now += 2_000  # ann thinks for two seconds
    close = await log.append(
        ev(6, hand_voided=pb.HandVoided()),
        ev(7, player_cashed_out=pb.PlayerCashedOut(seat=1, player_id="ann", amount=100)),
        ev(8, player_cashed_out=pb.PlayerCashedOut(seat=2, player_id="bob", amount=100)),
        ev(9, table_closed=pb.TableClosed(reason="abandoned")),
        by="wallet",
        command=close_command_id(5, MIN_CLOSE_IDLE_MS),
    )
    assert await deliver(applier, log.store, hand) is Outcome.NO_MONEY
    assert await deliver(applier, log.store, close) is Outcome.REFUSED
    finding = applier.findings()[0]
    assert (finding.position, finding.reason) == (close, "premature_close")
    assert "a hand runs" in finding.message
    assert ledger.table_escrow(book.state, "t1") == {"ann": 100, "bob": 100}
    # A restarted consumer (its view rebuilt from the log) and the Audit read it alike.
    restarted = BatchApplier(book, log.store, WalletMetrics(CollectorRegistry()), WALLET_SEALS)
    assert await deliver(restarted, log.store, close) is Outcome.REFUSED
    assert restarted.findings()[0].reason == "premature_close"
    stacks = await dealer_stacks(log.store, "t1", 9, WALLET_SEALS)
    assert stacks == {"ann": 100, "bob": 100}  # folded up to the refused close, not past it
