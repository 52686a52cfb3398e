"""A table log written before ``poker.v1`` replays with the v1 schema and engine (issue #12).

``tests/fixtures/pre_v1_log`` holds batches recorded by main's code while the schema was still
the package ``pokerpb`` (``TURN_BET = 0``), and what that code's own replay made of them. The
stored events kept their field numbers and types (``buf breaking`` checks it against
``protos/baseline-pre-v1.binpb``), so the bytes decode with the v1 messages as they are; the
one meaning that moved, an ActionRequested without a kind, must still read as a betting turn.
(v1rename: skip - this module names the pokerpb era on purpose.)
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from poker.dealer import replies
from poker.dealer.redaction import redact_event
from poker.engine.hand import Action
from poker.engine.table import Act, TableState, execute, live_stack
from poker.engine.table.evolve import fold
from poker.engine.table.queries import draw_option, legal_actions
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "pre_v1_log"


@cache
def _batches() -> dict[str, list[pb.TableEventBatch]]:
    tables: dict[str, list[pb.TableEventBatch]] = defaultdict(list)
    for line in (FIXTURE / "batches.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        tables[record["table"]].append(
            pb.TableEventBatch.FromString(base64.b64decode(record["batch"]))
        )
    return dict(tables)


@cache
def _expected() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
    return loaded


def _replayed(table: str) -> TableState:
    """The table after its log, folded batch by batch as the table log's codec folds it."""
    state: TableState | None = None
    for batch in _batches()[table]:
        state = fold(state, batch.events)
    assert state is not None
    return state


def _events(table: str) -> list[pb.TableEvent]:
    return [event for batch in _batches()[table] for event in batch.events]


def _summary(table: str) -> dict[str, Any]:
    """What the recorder wrote to expected.json, computed with today's code."""
    state = _replayed(table)
    hands: list[dict[str, Any]] = []
    for event in _events(table):
        body = getattr(event, event.WhichOneof("body") or "")
        if isinstance(body, pb.HandStarted):
            hands.append({"hand_id": body.hand_id, "awards": [], "rake": 0, "results": None})
        elif isinstance(body, pb.PotAwarded):
            hands[-1]["awards"].append([body.pot, body.seat, body.amount, int(body.share)])
        elif isinstance(body, pb.RakeTaken):
            hands[-1]["rake"] = body.amount
        elif isinstance(body, pb.HandEnded):
            hands[-1]["results"] = [[r.seat, r.net, r.stack] for r in body.results]
    turns = sorted(
        {int(e.action_requested.kind) for e in _events(table) if e.HasField("action_requested")}
    )
    open_turn = None
    hand = state.hand
    if hand is not None and not hand.ended and hand.seat_to_act is not None:
        seat = hand.seat_to_act
        open_turn = {
            "seat": seat,
            "legal": [
                [o.action.value, o.min_amount, o.max_amount] for o in legal_actions(state, seat)
            ],
            "draw": draw_option(state, seat) is not None,
        }
    return {
        "version": state.version,
        "real_money": state.config.real_money,
        "game": state.config.game,
        "stacks": {str(seat): live_stack(state, seat) for seat in state.occupied()},
        "hands": hands,
        "turn_kinds": turns,
        "open_turn": open_turn,
    }


def test_the_fixture_is_the_old_writers_log() -> None:
    """Six games, turns written as 0 (the old TURN_BET), real-money and play-money tables."""
    expected = _expected()
    assert sorted(_batches()) == sorted(expected)
    assert all(0 in table["turn_kinds"] for table in expected.values())
    assert {table["real_money"] for table in expected.values()} == {True, False}
    raked = {name for name, table in expected.items() if any(h["rake"] for h in table["hands"])}
    assert raked and all(expected[name]["real_money"] for name in raked)


@pytest.mark.parametrize("table", sorted(_expected()))
def test_an_old_log_replays_to_the_same_stacks_pots_and_winners(table: str) -> None:
    assert _summary(table) == _expected()[table]


def test_a_turn_stored_without_a_kind_is_a_betting_turn() -> None:
    """The triple-draw table stops at a betting turn after a draw, stored as kind 0: today's
    engine and the dealer's view read it as a bet (not a draw, not the split offer)."""
    state = _replayed("triple-draw")
    last = _events("triple-draw")[-1]
    assert last.HasField("action_requested") and last.action_requested.kind == 0
    hand = state.hand
    assert hand is not None and hand.seat_to_act == last.action_requested.seat
    assert draw_option(state, hand.seat_to_act) is None
    assert redact_event(last, None).action_requested.kind == pb.TURN_KIND_BET  # as watchers see it
    view = replies.table_view("triple-draw", state, None)
    assert view.hand.turn == pb.TURN_KIND_BET
    assert dpb.ACTION_KIND_CHECK in {option.action for option in view.hand.legal_actions}


def test_a_hand_goes_on_after_the_old_log_with_explicit_turn_kinds() -> None:
    """New events on an old log: the next turn is written with its kind, never the zero."""
    state = _replayed("triple-draw")
    hand = state.hand
    assert hand is not None and hand.seat_to_act is not None
    seat = hand.seat_to_act
    occupant = state.seat(seat)
    assert occupant is not None
    now = hand.deadline - 1
    _, events = execute(state, Act(seat, occupant.player_id, Action.CHECK, 0, now))
    kinds = [event.kind for event in events if isinstance(event, pb.ActionRequested)]
    assert kinds and pb.TURN_KIND_UNSPECIFIED not in kinds


def test_the_real_money_table_is_real_money_and_the_play_money_ones_are_not() -> None:
    """TableConfig.real_money (field 5 of the stored TableCreated) kept its meaning: unset is
    play money, as it always was in the stored config."""
    created = {
        table: next(e.table_created.config for e in _events(table) if e.HasField("table_created"))
        for table in _expected()
    }
    assert created["nl-real"].real_money and created["stud"].real_money
    assert not created["fl-play"].real_money and not created["omaha-hilo"].real_money
    assert _replayed("fl-play").config.rake is None
