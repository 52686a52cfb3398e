"""The speed core builds exactly what HandState.changed builds, and the rule areas' handler maps
assemble, without overlap, into the one dispatch table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from poker.engine.betting import HeadsUpUncap, IncompleteRaiseRule, Round, Structure
from poker.engine.cards import parse_cards
from poker.engine.games import ForcedBets
from poker.engine.hand import core
from poker.engine.hand.betting import BETTING_HANDLERS
from poker.engine.hand.commands import Action
from poker.engine.hand.dealing import DEALING_HANDLERS
from poker.engine.hand.draws import DRAW_HANDLERS
from poker.engine.hand.evolve import HANDLERS
from poker.engine.hand.payout import PAYOUT_HANDLERS
from poker.engine.hand.posts import FORCED_BET_HANDLERS
from poker.engine.hand.setup import SETUP_HANDLERS
from poker.engine.hand.showdown import SHOWDOWN_HANDLERS
from poker.engine.hand.state import BETTING, DRAWING, NOBODY, HandState
from tests.hand_support import Table

AREAS = (
    SETUP_HANDLERS,
    FORCED_BET_HANDLERS,
    DEALING_HANDLERS,
    BETTING_HANDLERS,
    DRAW_HANDLERS,
    SHOWDOWN_HANDLERS,
    PAYOUT_HANDLERS,
)


def _state() -> HandState:
    """A running hand whose fields mostly differ from what the builders write, in draw phase so
    that a builder resetting ``phase`` shows."""
    state = Table({1: 100, 2: 100, 3: 100}, button=1).state
    return state.changed(phase=DRAWING, deadline=77, to_act=2)


ROUND = Round(level=9, full_level=8, min_increment=7, unit=6, raises=5, aggressor=1)
BOARD = parse_cards("As Kd 7c")

# Each builder, its named arguments, and the changed() call it stands for.
CASES: list[tuple[Callable[..., HandState], dict[str, Any], dict[str, Any]]] = [
    (core.turn, {"to_act": 1, "deadline": 5}, {"to_act": 1, "deadline": 5}),
    (
        core.round_turn,
        {"to_act": 0, "deadline": 9, "round": ROUND},
        {"to_act": 0, "deadline": 9, "round": ROUND, "phase": BETTING},
    ),
    (core.checked, {"acted": (1, 2, 3)}, {"acted": (1, 2, 3), "to_act": NOBODY}),
    (
        core.folded,
        {"folded": (True, False, False), "round": ROUND},
        {"folded": (True, False, False), "round": ROUND, "to_act": NOBODY},
    ),
    (
        core.chips_in,
        {
            "stacks": (1, 2, 3),
            "bets": (4, 5, 6),
            "contributions": (7, 8, 9),
            "acted": (0, 1, 0),
            "round": ROUND,
        },
        {
            "stacks": (1, 2, 3),
            "bets": (4, 5, 6),
            "contributions": (7, 8, 9),
            "acted": (0, 1, 0),
            "round": ROUND,
            "to_act": NOBODY,
        },
    ),
    (
        core.blind_in,
        {"stacks": (1, 2, 3), "bets": (4, 5, 6), "contributions": (7, 8, 9), "round": ROUND},
        {"stacks": (1, 2, 3), "bets": (4, 5, 6), "contributions": (7, 8, 9), "round": ROUND},
    ),
    (core.shown, {"showdown": (1, 2, 0)}, {"showdown": (1, 2, 0)}),
    (core.awarded, {"stacks": (5, 6, 7), "awarded": 11}, {"stacks": (5, 6, 7), "awarded": 11}),
    (
        core.board_street,
        {"street": 2, "round": ROUND, "board": BOARD, "deck_position": 12},
        {
            "street": 2,
            "bets": (0, 0, 0),
            "acted": (NOBODY,) * 3,
            "round": ROUND,
            "to_act": NOBODY,
            "phase": BETTING,
            "board": BOARD,
            "deck_position": 12,
        },
    ),
]


@pytest.mark.parametrize(("builder", "arguments", "changes"), CASES, ids=lambda c: str(c)[:20])
def test_each_core_builder_equals_the_changed_call_it_replaces(
    builder: Callable[..., HandState], arguments: dict[str, Any], changes: dict[str, Any]
) -> None:
    state = _state()
    built = builder(state, **arguments)
    assert built == state.changed(**changes)
    assert type(built) is HandState


def test_the_enum_members_bound_in_the_core_are_the_members() -> None:
    assert (core.FOLD, core.CHECK, core.CALL, core.BET, core.RAISE) == (
        Action.FOLD,
        Action.CHECK,
        Action.CALL,
        Action.BET,
        Action.RAISE,
    )
    assert (core.COMPLETE, core.BRING_IN) == (Action.COMPLETE, Action.BRING_IN)
    assert core.ANTE_BRING_IN is ForcedBets.ANTE_BRING_IN
    assert (core.FIXED_LIMIT, core.SPREAD_LIMIT) == (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)
    assert (core.UNCAP_NEVER, core.UNCAP_BEFORE_CAP) == (
        HeadsUpUncap.NEVER,
        HeadsUpUncap.BEFORE_CAP,
    )
    assert core.HALF_BET is IncompleteRaiseRule.HALF_BET


def test_the_rule_areas_handle_disjoint_event_kinds_that_make_up_the_one_table() -> None:
    names = [name for area in AREAS for name in area]
    assert len(names) == len(set(names))
    assert set(names) == set(HANDLERS)
    for area in AREAS:
        for name, handler in area.items():
            assert HANDLERS[name] is handler


def test_the_last_memo_holds_its_key_and_compares_by_identity() -> None:
    # Safe where an id()-keyed memo is not: the remembered key is held (its identity cannot
    # pass to a new object) and compared with ``is``; an equal, distinct key is computed anew.
    calls: list[object] = []

    def compute(key: list[int]) -> int:
        calls.append(key)
        return len(calls)

    memo = core.LastMemo(compute)
    first, equal = [1], [1]
    assert memo(first) == 1 and memo(first) == 1
    assert memo(equal) == 2
    assert calls == [first, equal] and calls[1] is equal


def test_first_state_fills_every_default_of_hand_state() -> None:
    required = [name for name in HandState._fields if name not in HandState._field_defaults]
    assert len(core._FIRST_DEFAULTS) == len(HandState._fields) - len(required)
    assert HandState._fields[: len(required)] == tuple(required)  # defaults come last
