"""The showdown (RULES.md §5.4): the contenders' hands and their names, the order of showing,
the automatic show-or-muck policy, and the handlers of HandShown and HandMucked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from poker.engine.evaluation import Ranking, get_ranking
from poker.engine.evaluation.telesina import HighCardRule, ranking_for
from poker.engine.games import (
    FirstActor,
    ForcedBets,
)
from poker.engine.hand import core
from poker.engine.hand.codec import cards_to_wire
from poker.engine.hand.dealing import best_showing
from poker.engine.hand.events import Emitter, HandEventHandler
from poker.engine.hand.pots import Pot
from poker.engine.hand.state import (
    MUCKED,
    NOBODY,
    SHOWN,
    HandState,
)
from poker.v1 import events_pb2 as pb


class Hands:
    """The contenders' high and low strengths (greater is better; a low is None when it does not
    qualify) and the rankings that name them (None when the game has no such half)."""

    __slots__ = ("high", "high_ranking", "low", "low_ranking", "shown_order")

    def __init__(self, state: HandState) -> None:
        game = state.setup.game
        board = state.board
        hole = state.hole
        self.high: dict[int, int | None] = {}
        self.low: dict[int, int | None] = {}
        self.shown_order: list[int] = []  # who showed, in order (the odd chip, A5 first_shown)
        high_name = game.high_ranking
        if game.heads_up_straight_flush:  # Telesina: the table's high-card rule (A19)
            high_name = ranking_for(_HIGH_CARD_RULES[state.setup.config.rules.telesina_high_card])
        high_ranking = self.high_ranking = _ranking(high_name)
        low_ranking = self.low_ranking = _ranking(game.low_ranking)
        # Ranking.evaluate wants cards already checked, and these are: they come from a deck
        # verified at StartHand, dealt by the game's own streets. rank_hand would check counts,
        # duplicates and deck membership again, for as long as the evaluation itself takes, and
        # wrap the strength in a HandValue that is only ever compared and named.
        for index in state.contenders():
            if high_ranking is not None:
                self.high[index] = high_ranking.evaluate(hole[index], board)
            if low_ranking is not None:
                self.low[index] = low_ranking.evaluate(hole[index], board)


# The Telesina switches (checked at the start of the hand) as the evaluation's literals.
_HIGH_CARD_RULES: Final[dict[str, HighCardRule]] = {
    "card_by_card": "card_by_card",
    "ranks_then_suits": "ranks_then_suits",
}


def _ranking(name: str | None) -> Ranking | None:
    return None if name is None else get_ranking(name)


# Hand names by (ranking, strength), shared by every hand: building a name costs about 2 µs of
# string work, and the same few thousand strengths come back hand after hand (the winner's
# twice, in HandShown and PotAwarded). Cleared when full, like the identity memos.
_NAMES: dict[tuple[str, int], str] = {}


_NAMES_LIMIT: Final = 20_000


def hand_name(ranking: Ranking | None, strength: int | None) -> str:
    """The name of ``strength`` under ``ranking`` (what HandValue.name gives), "" for None."""
    if strength is None or ranking is None:
        return ""
    key = (ranking.name, strength)
    name = _NAMES.get(key)
    if name is None:
        if len(_NAMES) >= _NAMES_LIMIT:
            _NAMES.clear()
        name = _NAMES[key] = ranking.describe(strength)
    return name


def _showdown_order(state: HandState, all_in_showdown: bool) -> list[int]:
    """Last bettor or raiser of the last round first, else the first player left of the button
    (stud-type games: the best showing hand); then clockwise. With an all-in the order is the
    one for "nobody bet" (RULES.md §5.4)."""
    setup = state.setup
    aggressor = state.round.aggressor
    if not (all_in_showdown or aggressor == NOBODY or state.folded[aggressor]):
        start = aggressor
    elif setup.game.forced_bets is ForcedBets.ANTE_BRING_IN:
        start = best_showing(state)  # stud-type games: the highest showing combination
    elif setup.game.streets[-1].first_actor is FirstActor.LEFT_OF_BIG_BLIND:
        start = (setup.big_blind + 1) % setup.player_count  # 32-Card Draw (decision A15)
    else:
        start = (setup.button + 1) % setup.player_count
    folded = state.folded
    return [index for index in setup.clockwise_from(start) if not folded[index]]


def show_or_muck(recorder: Emitter, pots: tuple[Pot, ...], hands: Hands) -> set[int]:
    """Automatic showing policy: the first player shows; later ones show a hand that beats or
    ties the best hand shown so far in a pot they can win (high or low), else muck. When a
    player is all-in every hand is shown (TDA)."""
    state = recorder.state
    stacks = state.stacks
    all_in_showdown = 0 in [stacks[index] for index in state.contenders()]  # someone all-in
    seats = state.setup.seats
    show_all = state.setup.game.heads_up_straight_flush  # a "beaten" hand may win heads-up
    # Strengths of the best hands shown so far per pot.
    best_high: list[int | None] = [None] * len(pots)
    best_low: list[int | None] = [None] * len(pots)
    shown: set[int] = set()
    for position, index in enumerate(_showdown_order(state, all_in_showdown)):
        high = hands.high.get(index)
        low = hands.low.get(index)
        pot_indexes = [k for k, pot in enumerate(pots) if index in pot.eligible]
        seat = seats[index]
        if not (
            position == 0
            or all_in_showdown
            or show_all
            or any(
                _at_least(high, best_high[k]) or _at_least(low, best_low[k]) for k in pot_indexes
            )
        ):
            state = recorder.emit(pb.HandMucked(seat=seat))
            continue
        shown.add(index)
        hands.shown_order.append(index)
        for k in pot_indexes:
            if _at_least(high, best_high[k]):
                best_high[k] = high
            if _at_least(low, best_low[k]):
                best_low[k] = low
        event = pb.HandShown(
            seat=seat,
            cards=cards_to_wire(state.hole[index]),
            high_hand=hand_name(hands.high_ranking, high),
            low_hand=hand_name(hands.low_ranking, low),
        )
        state = recorder.emit(event)
    return shown


def _at_least(value: int | None, best: int | None) -> bool:
    """Whether ``value`` exists and is at least as good as ``best`` (None: nothing shown)."""
    return value is not None and (best is None or value >= best)


def _shown_or_mucked(
    state: HandState, event: pb.HandShown | pb.HandMucked, outcome: int
) -> HandState:
    showdown = list(state.showdown)
    showdown[state.setup.seats.index(event.seat)] = outcome
    return core.shown(state, showdown=tuple(showdown))


def _hand_shown(state: HandState, event: pb.HandShown) -> HandState:
    """HandShown."""
    return _shown_or_mucked(state, event, SHOWN)


def _hand_mucked(state: HandState, event: pb.HandMucked) -> HandState:
    """HandMucked."""
    return _shown_or_mucked(state, event, MUCKED)


SHOWDOWN_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "hand_shown": _hand_shown,
    "hand_mucked": _hand_mucked,
}
"""The showdown events' handlers, part of evolve's one dispatch table."""
