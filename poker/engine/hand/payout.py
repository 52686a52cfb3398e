"""Paying the hand out (RULES.md §5.3, §5.5-5.6, §6.7): the rake, every pot to its winners
(high and low halves, ties split, odd chips by position or, in stud-type games, by the tied
players' cards), the pots split by agreement, the hand's end, and the handlers of RakeTaken,
PotAwarded and HandEnded. :mod:`poker.engine.hand.pots` and :mod:`poker.engine.hand.rake` hold
the arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import combinations
from typing import Final

from poker.engine.betting import (
    OddChipCards,
    OddChipStud,
)
from poker.engine.cards import Card
from poker.engine.evaluation import HandValue, Ranking
from poker.engine.evaluation.telesina import HeadsUpRule, telesina_pot_winners
from poker.engine.games import (
    ForcedBets,
)
from poker.engine.hand import core
from poker.engine.hand.draws import hand_pots
from poker.engine.hand.events import Emitter, HandEventHandler
from poker.engine.hand.pots import Pot, split_evenly, split_high_low, split_in_order
from poker.engine.hand.protection import return_set_aside
from poker.engine.hand.rake import rake_amount, split_rake
from poker.engine.hand.showdown import Hands, hand_name
from poker.engine.hand.state import (
    NOBODY,
    HandState,
)
from poker.v1 import events_pb2 as pb


def take_rake(recorder: Emitter, pots: tuple[Pot, ...]) -> list[int]:
    """Rake the hand if it is raked (RULES.md §6.7); the pot amounts left to award."""
    state = recorder.state
    setup = state.setup
    amounts = [pot.amount for pot in pots]
    schedule = setup.config.rake
    if schedule is None:
        return amounts
    trigger = schedule.trigger_street or setup.game.rake_street
    if state.street < trigger:
        return amounts  # no flop, no drop
    chip_unit = setup.config.rules.chip_unit
    rake = rake_amount(schedule, sum(amounts), setup.player_count, chip_unit)
    if not rake:
        return amounts
    per_pot = split_rake(rake, tuple(amounts), chip_unit, schedule.distribution)
    recorder.emit(pb.RakeTaken(amount=rake, per_pot=per_pot))
    return [amount - taken for amount, taken in zip(amounts, per_pot, strict=True)]


def finish_without_showdown(recorder: Emitter, winner: int) -> None:
    """The last player in the hand takes every pot without showing (RULES.md §5.3)."""
    state = recorder.state
    pots = hand_pots(state)
    amounts = take_rake(recorder, pots)
    if recorder.state.split_pots:
        pay_split_pots(recorder, amounts)
    state = recorder.state  # the rake may have been taken
    seat = state.setup.seats[winner]
    split = {pot.pot for pot in state.split_pots}
    for pot_index in reversed(range(len(pots))):
        amount = amounts[pot_index]
        if amount and pot_index not in split:
            state = recorder.emit(
                pb.PotAwarded(pot=pot_index, seat=seat, amount=amount, share=pb.POT_SHARE_WHOLE)
            )
    end_hand(recorder)


def pay_split_pots(recorder: Emitter, amounts: list[int]) -> None:
    """Divide each pot split by agreement equally among its players, odd chips clockwise from
    the button, after the rake (decision A17 rules 5 and 6)."""
    state = recorder.state
    setup = state.setup
    first = (setup.button + 1) % len(setup.seats)
    chip_unit = setup.config.rules.chip_unit
    for split in reversed(state.split_pots):
        amount = amounts[split.pot]
        if not amount:
            continue
        for index, paid in split_evenly(amount, split.sharers, first, len(setup.seats), chip_unit):
            event = pb.PotAwarded(
                pot=split.pot, seat=setup.seats[index], amount=paid, share=pb.POT_SHARE_AGREED_SPLIT
            )
            state = recorder.emit(event)


def end_hand(recorder: Emitter) -> None:
    if recorder.state.set_aside:
        return_set_aside(recorder)
    state = recorder.state
    setup = state.setup
    event = pb.HandEnded(rake=state.rake)
    add_result = event.results.add
    for seat, stack, start in zip(setup.seats, state.stacks, setup.starting_stacks, strict=True):
        # Field by field: cheaper than add(seat=..., net=..., stack=...) (keyword parsing).
        result = add_result()
        result.seat = seat
        result.net = stack - start
        result.stack = stack
    recorder.emit(event)


def award_pot(
    recorder: Emitter, pot_index: int, amount: int, eligible: list[int], hands: Hands
) -> None:
    """Award one pot: whole, or half high and half low in hi/lo games (RULES.md §5.5)."""
    if not amount:
        return
    state = recorder.state
    lows = {index: hands.low[index] for index in eligible if hands.low.get(index) is not None}
    if hands.high and lows:
        high_amount, low_amount = split_high_low(amount, state.setup.config.rules.chip_unit)
        _pay_best(
            recorder,
            hands.high_ranking,
            pot=pot_index,
            amount=high_amount,
            values=hands.high,
            eligible=eligible,
            share=pb.POT_SHARE_HIGH,
            shown_order=hands.shown_order,
        )
        _pay_best(
            recorder,
            hands.low_ranking,
            pot=pot_index,
            amount=low_amount,
            values=lows,
            eligible=list(lows),
            share=pb.POT_SHARE_LOW,
            shown_order=hands.shown_order,
        )
    elif hands.high:
        _pay_best(
            recorder,
            hands.high_ranking,
            pot=pot_index,
            amount=amount,
            values=hands.high,
            eligible=eligible,
            share=pb.POT_SHARE_WHOLE,
            shown_order=hands.shown_order,
        )
    else:
        _pay_best(
            recorder,
            hands.low_ranking,
            pot=pot_index,
            amount=amount,
            values=lows,
            eligible=list(lows),
            share=pb.POT_SHARE_WHOLE,
            shown_order=hands.shown_order,
        )


def _pay_best(
    recorder: Emitter,
    ranking: Ranking | None,
    *,
    pot: int,
    amount: int,
    values: dict[int, int | None],
    eligible: list[int],
    share: pb.PotShare.ValueType,
    shown_order: list[int],
) -> None:
    """Pay ``amount`` to the best of ``eligible`` by ``values``; ties split, odd chips left of
    the button first, in stud-type games by the tied players' cards (RULES.md §5.6)."""
    state = recorder.state
    setup = state.setup
    ranked = [(value, index) for index in eligible if (value := values[index]) is not None]
    strongest = max([strength for strength, _ in ranked])
    winners = [index for strength, index in ranked if strength == strongest]
    if len(ranked) == 2 and setup.game.heads_up_straight_flush and ranking is not None:
        # Telesina, two players contesting the pot: the low straight flush may beat the royal
        # (RULES.md §3.6, decision A18).
        rule = _HEADS_UP_RULES[setup.config.rules.telesina_headsup_sf]
        pair = [HandValue(ranking.name, strength) for strength, _ in ranked]
        won = telesina_pot_winners(pair, rule=rule)
        winners = [ranked[k][1] for k in won]
        strongest = ranked[won[0]][0]
    first = (setup.button + 1) % len(setup.seats)
    name = hand_name(ranking, strongest)
    chip_unit = setup.config.rules.chip_unit
    if len(winners) > 1 and setup.game.forced_bets is ForcedBets.ANTE_BRING_IN:
        order = _stud_odd_chip_order(
            state, winners, share, ranking=ranking, values=values, shown_order=shown_order
        )
        shares = split_in_order(amount, order, chip_unit)
    else:
        shares = split_evenly(amount, winners, first, len(setup.seats), chip_unit)
    for index, paid in shares:
        event = pb.PotAwarded(pot=pot, seat=setup.seats[index], amount=paid, share=share, hand=name)
        state = recorder.emit(event)


_HEADS_UP_RULES: Final[dict[str, HeadsUpRule]] = {
    "exact": "exact",
    "any_low_sf_beats_royal": "any_low_sf_beats_royal",
    "off": "off",
}


_BRIDGE_SUITS: Final = "shdc"  # ♠ > ♥ > ♦ > ♣ (decision A1)


_SUIT_ORDERS: Final = {"telesina": "hdcs"}  # ♥ > ♦ > ♣ > ♠


def _stud_odd_chip_order(
    state: HandState,
    winners: list[int],
    share: pb.PotShare.ValueType,
    *,
    ranking: Ranking | None,
    values: dict[int, int | None],
    shown_order: list[int],
) -> list[int]:
    """Tied stud winners in the order odd chips go to them (RULES.md §5.6, decision A5).

    By default (``odd_chip_stud`` high_card_by_suit) for a high or whole share the one holding
    the highest card (rank, then the game's suit order), for a low share the lowest card (ace
    low); only his own cards count, not the common card (``odd_chip_cards`` five_card_hand: only
    those of them in his five-card hand); then clockwise from the dealer position. The
    alternatives: nearest_to_dealer, clockwise from the dealer position alone; first_shown, in
    the order the hands were shown."""
    setup = state.setup
    rules = setup.config.rules
    count = len(setup.seats)
    first = setup.button + 1
    if rules.odd_chip_stud is OddChipStud.NEAREST_TO_DEALER:
        return sorted(winners, key=lambda index: (index - first) % count)
    if rules.odd_chip_stud is OddChipStud.FIRST_SHOWN:
        return sorted(winners, key=shown_order.index)  # tied winners have all shown
    order = rules.bring_in_suit_order or _SUIT_ORDERS.get(setup.game.key, _BRIDGE_SUITS)
    suit_value = {suit: 3 - place for place, suit in enumerate(order)}  # higher is better
    five_card_hand = rules.odd_chip_cards is OddChipCards.FIVE_CARD_HAND

    def card_key(card: Card) -> tuple[int, int]:
        if share == pb.POT_SHARE_LOW:  # the lowest card wins the chip: keys ascending, ace low
            return 1 if card.rank == 14 else card.rank, suit_value[card.suit_char]
        return -card.rank, -suit_value[card.suit_char]

    def key(index: int) -> tuple[int, int, int]:
        cards = state.hole[index]
        if five_card_hand and ranking is not None:
            cards = _own_cards_in_hand(cards, state.board, ranking, values[index], card_key)
        rank, suit = min(card_key(card) for card in cards)
        return rank, suit, (index - first) % count

    return sorted(winners, key=key)


def _own_cards_in_hand(
    hole: tuple[Card, ...],
    board: tuple[Card, ...],
    ranking: Ranking,
    strength: int | None,
    card_key: Callable[[Card], tuple[int, int]],
) -> tuple[Card, ...]:
    """The player's own cards in the five-card hand he wins with (``odd_chip_cards``
    five_card_hand, decision A5). When several fives make the same hand, the one whose best own
    card wins the chip is his: the hand is read in his favour."""
    cards = hole + board
    if len(cards) <= 5:
        return hole
    best: tuple[Card, ...] = hole
    best_key: tuple[int, int] | None = None
    for five in combinations(cards, 5):
        if ranking.evaluate(five, ()) != strength:
            continue
        own = tuple(card for card in five if card in hole)
        if not own:
            continue
        top = min(card_key(card) for card in own)
        if best_key is None or top < best_key:
            best, best_key = own, top
    return best


def _rake_taken(state: HandState, event: pb.RakeTaken) -> HandState:
    """RakeTaken."""
    return state.changed(rake=state.rake + event.amount)


def _pot_awarded(state: HandState, event: pb.PotAwarded) -> HandState:
    """PotAwarded: chips from the pots onto the winner's stack."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    stacks = list(state.stacks)
    stacks[index] += amount
    return core.awarded(state, stacks=tuple(stacks), awarded=state.awarded + amount)


def _hand_ended(state: HandState, event: pb.HandEnded) -> HandState:
    """HandEnded."""
    return state.changed(ended=True, to_act=NOBODY)


PAYOUT_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "rake_taken": _rake_taken,
    "pot_awarded": _pot_awarded,
    "hand_ended": _hand_ended,
}
"""The payout events' handlers, part of evolve's one dispatch table."""
