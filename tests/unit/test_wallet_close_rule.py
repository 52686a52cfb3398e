"""The abandoned-table rule of the wallet's close (poker.tablelog.seals): its limit, its times,
who it binds, and that every reader carries its input (the chain, snapshots, pokerctl verify)."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from poker.engine.table import CloseTable, envelopes, execute
from poker.eventstore.sealing import Refusal, SealRefused, Writer, new_keyring
from poker.tablelog.chain import ChainState, advance, check_records, genesis, record_hash
from poker.tablelog.seals import (
    MIN_CLOSE_IDLE_MS,
    TableSeals,
    close_command_id,
    close_idle_limit_ms,
    idle_rule,
    is_wallet_close,
    premature_close,
)
from poker.tablelog.snapshot_codec import _chain
from poker.tools import logtools
from poker.v1 import events_pb2 as pb
from tests.unit.test_log_tools import two_hands


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
    assert premature_close(pb.TableEventBatch(command_id="wallet-close-v1"), 0) is not None


def test_the_close_is_timed_by_its_earliest_event() -> None:
    batch = close(100_000)
    batch.events[0].occurred_at = 30_000  # one event stamped earlier: the close's time
    assert premature_close(batch, previous_at=0) is not None
    assert premature_close(close(100_000), previous_at=40_000) is None


def test_only_a_wallet_sealed_close_is_held_to_the_rule() -> None:
    seals = TableSeals(new_keyring(), Writer.DEALER)
    early = close(1_000)
    seals.check_close("t1", 9, writer=Writer.DEALER, batch=early, previous_at=999)
    seals.check_close("t1", 9, writer=None, batch=early, previous_at=999)
    with pytest.raises(SealRefused) as refused:
        seals.check_close("t1", 9, writer=Writer.WALLET, batch=early, previous_at=999)
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
