"""Draw games: the draw (RULES.md §7) and 32-Card Draw's "Split the pot" offer (§8.13, A17).

What lives here: the rules a Draw or an AgreeSplit must satisfy (``verify_*``, the same checks
the queries :func:`draw_option` and :func:`split_offer` are built from), the handlers of the draw
events (CardsDrawn, DiscardsReshuffled, SplitAgreed, SplitRefused, PotSplitByAgreement) that
:mod:`poker.engine.hand.evolve` dispatches to, the step that draws a player's cards
(:func:`draw_cards`) and the pure helpers ``decide`` walks the draw with: who draws or is asked
next, the stub and its reshuffle, and the pots once some are split.

A player put all-in by the disconnection protection (RULES.md §6.5 rule 4) stands pat without
being asked: when the draw order reaches him, ``decide`` records his pat as any pat is recorded
(CardsDrawn with no card, not timed out) and moves on, with no ActionRequested and so no draw
timer; :func:`draw_option` never offers him a draw and :func:`verify_draw` refuses his Draw.

The stub: the deck from ``deck_position`` on, until a reshuffle (§7.3, decision A14) replaces it
with ``HandState.stub``, the cards nobody holds in the order the Draw command's ``shuffle`` gives.
A player is never dealt a card he threw away earlier in the hand: dealing to him skips them, and
they stay in the stub, in order, for the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from poker.engine.betting import PatRestrictionLift
from poker.engine.cards import Card, format_cards
from poker.engine.hand.codec import cards_from_wire, cards_to_wire
from poker.engine.hand.commands import AgreeSplit, Draw
from poker.engine.hand.errors import HandRuleError, IllegalAction, InvalidDeck, NotYourTurn
from poker.engine.hand.events import Emitter, HandEventHandler
from poker.engine.hand.posts import dead_money
from poker.engine.hand.pots import Pot, build_pots, build_pots_with_dead
from poker.engine.hand.rules import verify_hand_running, verify_seat_known, verify_turn
from poker.engine.hand.state import (
    AGREED,
    BETTING,
    DRAWING,
    NOBODY,
    NOT_ASKED,
    REFUSED,
    SPLIT_OFFER,
    HandChanges,
    HandState,
    SplitPot,
)
from poker.v1 import events_pb2 as pb


class InvalidDiscard(HandRuleError):
    """The cards a player throws away are not cards he may throw away now."""


# --- the draw -----------------------------------------------------------------------------------


def draw_number(state: HandState) -> int:
    """Which draw of the hand the current street opens with (1 for the first), 0 for none."""
    streets = state.setup.game.streets
    if not streets[state.street].draw:
        return 0
    return sum(1 for street in streets[: state.street + 1] if street.draw)


def next_to_draw(state: HandState, start: int) -> int:
    """The first player in the hand from ``start`` clockwise who has not made this street's draw
    (all-in players draw too, RULES.md §7.1); NOBODY when everyone has. A player the
    disconnection protection put all-in is among them: ``decide`` stands him pat without asking
    (:func:`stands_pat_unasked`)."""
    number = draw_number(state)
    draws = state.draws or (0,) * len(state.stacks)
    folded = state.folded
    for index in state.setup.clockwise_from(start):
        if not folded[index] and draws[index] < number:
            return index
    return NOBODY


def stands_pat_unasked(state: HandState, index: int) -> bool:
    """Whether ``index`` stands pat in every draw without being asked: the disconnection
    protection put him all-in (RULES.md §6.5 rule 4, "in draw games stands pat"). His chips
    behind are set aside until the hand ends, so a set-aside amount marks him."""
    return bool(state.set_aside) and state.set_aside[index] > 0


def stub_text(state: HandState) -> str:
    """The card string of the stub, top card first."""
    return state.stub or state.setup.deck[2 * state.deck_position :]


def take_cards(stub: str, count: int, barred: frozenset[str]) -> str | None:
    """The card string of the first ``count`` cards of ``stub`` not in ``barred`` (the player's
    own earlier discards, as card texts); None when the stub holds fewer."""
    taken = []
    for offset in range(0, len(stub), 2):
        text = stub[offset : offset + 2]
        if text not in barred:
            taken.append(text)
            if len(taken) == count:
                return "".join(taken)
    return "" if not count else None


def barred_cards(state: HandState, index: int) -> frozenset[str]:
    """The cards ``index`` threw away earlier in the hand, which he is never dealt again."""
    if not state.discarded:
        return frozenset()
    return frozenset(str(card) for card in state.discarded[index])


def reshuffled_stub(state: HandState, shuffle: tuple[Card, ...]) -> str:
    """A new stub when the current one cannot serve the drawing player (decision A14): every
    card nobody in the hand holds (the stub, all discards so far, the folded hands unless
    ``reshuffle_include_folded`` is off; the drawing player's cards of this draw are still his),
    in the order of ``shuffle`` (a shuffled deck the dealer supplied) or else of the hand's
    deck."""
    if state.setup.config.rules.reshuffle_include_folded:
        held = {
            card
            for index, cards in enumerate(state.hole)
            if not state.folded[index]
            for card in cards
        }
    else:  # the table keeps folded hands out of play (A14's switch): they are never redealt
        held = {card for cards in state.hole for card in cards}
    order = shuffle or cards_from_wire(state.setup.deck)
    return cards_to_wire([card for card in order if card not in held])


def verify_draw(state: HandState | None, command: Draw) -> tuple[HandState, int]:
    """Everything a :class:`Draw` must satisfy; returns the state and the player's index."""
    running = verify_hand_running(state)
    index = verify_seat_known(running, command.seat)
    if running.phase != DRAWING:
        raise IllegalAction("There is no draw now; cards are replaced only in the draw.")
    if stands_pat_unasked(running, index):
        raise IllegalAction(
            f"Seat {command.seat} is all-in by disconnection protection and stands pat in every"
            " draw of this hand (RULES.md §6.5)."
        )
    if running.to_act != index:
        seat = running.setup.seats[running.to_act] if running.to_act != NOBODY else None
        raise NotYourTurn(
            f"It is not seat {command.seat}'s turn to draw; seat {seat} is drawing."
            if seat is not None
            else f"Seat {command.seat} cannot draw now: it is nobody's turn."
        )
    discard = command.discard
    if not isinstance(discard, tuple) or any(type(card) is not Card for card in discard):
        raise InvalidDiscard("Name the cards to throw away.")
    maximum = running.setup.game.streets[running.street].draw
    if len(discard) > maximum:
        raise InvalidDiscard(
            f"You may replace at most {maximum} cards in {running.setup.game.name}."
        )
    if len(set(discard)) != len(discard):
        raise InvalidDiscard("You cannot throw away the same card twice.")
    held = running.hole[index]
    foreign = [card for card in discard if card not in held]
    if foreign:
        raise InvalidDiscard(f"You do not hold {format_cards(foreign)}.")
    shuffle = command.shuffle
    if shuffle and (
        len(shuffle) != len(running.setup.game.deck) or set(shuffle) != running.setup.game.card_set
    ):
        raise InvalidDeck(
            f"The shuffle must hold every card of the {running.setup.game.name} deck once."
        )
    return running, index


def draw_cards(
    recorder: Emitter,
    index: int,
    discard: tuple[Card, ...],
    shuffle: tuple[Card, ...],
    *,
    timed_out: bool,
) -> None:
    """Replace ``discard`` from the stub; when the stub cannot serve the player, reshuffle the
    cards nobody holds into a new stub first (RULES.md §7.3, decision A14)."""
    state = recorder.state
    seat = state.setup.seats[index]
    count = len(discard)
    barred = barred_cards(state, index)
    drawn = take_cards(stub_text(state), count, barred)
    if drawn is None:
        stub = reshuffled_stub(state, shuffle)
        drawn = take_cards(stub, count, barred)
        if drawn is None:  # impossible at the games' table sizes (§7.3 card budget)
            raise HandRuleError("There are not enough cards left to replace yours.")
        state = recorder.emit(pb.DiscardsReshuffled(seat=seat, stub=stub))
    event = pb.CardsDrawn(
        seat=seat,
        count=count,
        discarded=cards_to_wire(discard),
        drawn=drawn,
        timed_out=timed_out,
    )
    recorder.emit(event)


def _cards_drawn(state: HandState, event: pb.CardsDrawn) -> HandState:
    """CardsDrawn: the player keeps his other cards, in order, and adds ``drawn``; the stub
    loses ``drawn``; a time-out restricts his betting until his next timely draw (decision A12;
    with ``pat_restriction_lift`` at_least_one_card, his next timely draw of one card or more)."""
    index = state.setup.seats.index(event.seat)
    discarded = cards_from_wire(event.discarded)
    drawn = event.drawn
    timed_out = event.timed_out
    count = len(state.stacks)
    hole = list(state.hole)
    kept = tuple(card for card in hole[index] if card not in discarded)
    hole[index] = kept + cards_from_wire(drawn)
    draws = list(state.draws or (0,) * count)
    draws[index] += 1
    changes: HandChanges = {"hole": tuple(hole), "draws": tuple(draws), "to_act": NOBODY}
    if discarded:
        thrown = list(state.discarded or ((),) * count)
        thrown[index] += discarded
        changes["discarded"] = tuple(thrown)
    if drawn:
        if not state.stub and state.setup.deck.startswith(drawn, 2 * state.deck_position):
            changes["deck_position"] = state.deck_position + len(drawn) // 2
        else:  # a reshuffled stub: the player was dealt its first cards that were not his
            gone = {drawn[offset : offset + 2] for offset in range(0, len(drawn), 2)}
            stub = stub_text(state)
            changes["stub"] = "".join(
                stub[offset : offset + 2]
                for offset in range(0, len(stub), 2)
                if stub[offset : offset + 2] not in gone
            )
    if timed_out or state.pat_restricted:
        restricted = list(state.pat_restricted or (False,) * count)
        lift = state.setup.config.rules.pat_restriction_lift
        # A12's switch: a restricted player who stands pat in time stays restricted when only a
        # draw of at least one card lifts it.
        # ``count`` (public), not ``discarded`` (the player's own: a reader without the deck
        # key, the wallet, folds the draw without it), tells a pat.
        restricted[index] = timed_out or (
            restricted[index] and not event.count and lift is PatRestrictionLift.AT_LEAST_ONE_CARD
        )
        changes["pat_restricted"] = tuple(restricted) if any(restricted) else ()
    return state.changed(**changes)


def _discards_reshuffled(state: HandState, event: pb.DiscardsReshuffled) -> HandState:
    """DiscardsReshuffled: ``stub`` is the stub from now on (the deck is used up)."""
    return state.changed(stub=event.stub, deck_position=len(state.setup.deck) // 2)


def special_turn(state: HandState, index: int, deadline: int, phase: int) -> HandState:
    """ActionRequested of a draw or of the split offer: ``index`` is asked by ``deadline``."""
    if phase == SPLIT_OFFER and not state.split_answers:
        return state.changed(
            to_act=index,
            phase=phase,
            deadline=deadline,
            split_answers=(NOT_ASKED,) * len(state.stacks),
        )
    return state.changed(to_act=index, phase=phase, deadline=deadline)


# --- the split offer (32-Card Draw) -------------------------------------------------------------


def hand_pots(state: HandState) -> tuple[Pot, ...]:
    """The main pot and the side pots now (RULES.md §5.2; uncalled bets returned first). Once a
    pot is split by agreement, the pots as they stood at the offer (their eligible players less
    those who folded since) and, after them, the pots of the chips put in since (A17 rule 5)."""
    stacks = state.stacks
    folded = state.folded
    in_hand = [not out for out in folded]
    all_in = [not stack for stack in stacks]
    if state.offer_pots:
        earlier = tuple(
            Pot(pot.amount, tuple(index for index in pot.eligible if not folded[index]))
            for pot in state.offer_pots
        )
        since = [
            paid - base for paid, base in zip(state.contributions, state.split_base, strict=True)
        ]
        return earlier + build_pots(since, in_hand, all_in)
    dead = dead_money(state.setup)
    if dead:  # dead blinds go to the main pot without raising their owner's level (A8)
        return build_pots_with_dead(state.contributions, dead, in_hand, all_in)
    return build_pots(state.contributions, in_hand, all_in)


def open_pots(state: HandState) -> list[int]:
    """The pots of the offer nobody eligible for has refused to split (A17 rule 4)."""
    answers = state.split_answers or (NOT_ASKED,) * len(state.stacks)
    return [
        number
        for number, pot in enumerate(hand_pots(state))
        if not any(answers[index] == REFUSED for index in pot.eligible)
    ]


def next_to_ask(state: HandState, start: int) -> int:
    """The next player from ``start`` clockwise to be offered the split: in the hand, not yet
    asked, and eligible for a pot that can still be split (A17 rules 2 and 4); NOBODY when the
    offer is over."""
    answers = state.split_answers or (NOT_ASKED,) * len(state.stacks)
    pots = hand_pots(state)
    still = [pots[number] for number in open_pots(state)]
    folded = state.folded
    for index in state.setup.clockwise_from(start):
        if folded[index] or answers[index] != NOT_ASKED:
            continue
        if any(index in pot.eligible for pot in still):
            return index
    return NOBODY


def agreed_pots(state: HandState) -> list[int]:
    """The pots every eligible player agreed to split (A17 rule 5)."""
    answers = state.split_answers
    return [
        number
        for number, pot in enumerate(hand_pots(state))
        if pot.eligible and all(answers[index] == AGREED for index in pot.eligible)
    ]


def verify_agree_split(state: HandState | None, command: AgreeSplit) -> tuple[HandState, int]:
    """Everything an :class:`AgreeSplit` must satisfy; returns the state and the player's index."""
    running = verify_hand_running(state)
    index = verify_seat_known(running, command.seat)
    if running.phase != SPLIT_OFFER or running.to_act == NOBODY:
        raise IllegalAction("Nobody is being offered to split the pot now.")
    verify_turn(running, index)
    if type(command.agree) is not bool:
        raise IllegalAction("Answer the offer with split or don't split.")
    return running, index


def _split_agreed(state: HandState, event: pb.SplitAgreed) -> HandState:
    """SplitAgreed: no bet; it counts as a check if the offer fails (A17 rule 3)."""
    index = state.setup.seats.index(event.seat)
    answers = list(state.split_answers)
    answers[index] = AGREED
    if state.stacks[index]:
        acted = list(state.acted)
        acted[index] = state.round.level
        return state.changed(split_answers=tuple(answers), acted=tuple(acted), to_act=NOBODY)
    return state.changed(split_answers=tuple(answers), to_act=NOBODY)


def _split_refused(state: HandState, event: pb.SplitRefused) -> HandState:
    """SplitRefused: the pots the player is eligible for will not be split. A player with chips
    behind is eligible for every pot, so his refusal ends the offer and the betting begins."""
    index = state.setup.seats.index(event.seat)
    answers = list(state.split_answers or (NOT_ASKED,) * len(state.stacks))
    answers[index] = REFUSED
    if state.stacks[index]:
        return state.changed(split_answers=tuple(answers), phase=BETTING, to_act=NOBODY)
    return state.changed(split_answers=tuple(answers), to_act=NOBODY)


def _pot_split(state: HandState, event: pb.PotSplitByAgreement) -> HandState:
    """PotSplitByAgreement: the pot takes no further part in the hand. The pots of the offer are
    kept, and the chips put in from now on form new pots; the betting round starts afresh (the
    answers were about the split, not bets)."""
    seats = state.setup.seats
    sharers = tuple(seats.index(seat) for seat in event.seats)
    changes: HandChanges = {
        "split_pots": (*state.split_pots, SplitPot(event.pot, event.amount, sharers)),
        "acted": (NOBODY,) * len(state.stacks),
    }
    if not state.offer_pots:
        changes["offer_pots"] = hand_pots(state)
        changes["split_base"] = state.contributions
    return state.changed(**changes)


DRAW_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "cards_drawn": _cards_drawn,
    "discards_reshuffled": _discards_reshuffled,
    "split_agreed": _split_agreed,
    "split_refused": _split_refused,
    "pot_split_by_agreement": _pot_split,
}
"""The draw events' handlers, part of evolve's one dispatch table."""


# --- what a player is offered -------------------------------------------------------------------


class DrawOption(NamedTuple):
    """The draw open to the player whose turn it is to draw: he throws away any 0 to
    ``max_discard`` of ``cards`` (0: he stands pat) by ``deadline``."""

    seat: int
    max_discard: int
    cards: tuple[Card, ...]
    deadline: int


class SplitOffer(NamedTuple):
    """32-Card Draw: the player asked whether to split. ``pots`` are the pots (0 = main) his
    answer is about, ``amounts`` their sizes before the rake; ``may_bet``: he may instead check,
    bet or fold (legal_actions), which refuses."""

    seat: int
    pots: tuple[int, ...]
    amounts: tuple[int, ...]
    may_bet: bool
    deadline: int


def draw_option(state: HandState | None) -> DrawOption | None:
    """The draw open now (the checks of :func:`verify_draw`), or None when nobody is drawing."""
    if state is None or state.ended or state.phase != DRAWING or state.to_act == NOBODY:
        return None
    index = state.to_act
    return DrawOption(
        state.setup.seats[index],
        state.setup.game.streets[state.street].draw,
        state.hole[index],
        state.deadline,
    )


def split_offer(state: HandState | None) -> SplitOffer | None:
    """The split offer open now (the checks of :func:`verify_agree_split`), or None."""
    if state is None or state.ended or state.phase != SPLIT_OFFER or state.to_act == NOBODY:
        return None
    index = state.to_act
    pots = hand_pots(state)
    asked = tuple(number for number in open_pots(state) if index in pots[number].eligible)
    return SplitOffer(
        state.setup.seats[index],
        asked,
        tuple(pots[number].amount for number in asked),
        bool(state.stacks[index]),
        state.deadline,
    )
