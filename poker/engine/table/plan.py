"""Who is dealt into the next hand, where the button goes, who posts what, who missed a blind.

Blind games use the simplified moving button (RULES.md §1.2, §4.2.1) with the entry rules of
§6.2-6.3 (decision A8):

* *Eligible*: seated, chips in front, not sitting out, not leaving. *In the game*: eligible and
  owing nothing. *Entrants*: eligible but new or owing missed blinds.
* The button moves to the next player in the game clockwise; the small blind is the next player
  in the game after it; the big blind the next eligible player after the small blind, before
  the button again. An entrant there posts nothing extra: it is his turn for the big blind.
* An entrant who chose to post is dealt in at once, posting what he owes, unless he sits
  between the button and the big blind (he would enter on the button or in the small blind;
  he waits until the button has passed, §6.2). New and returning players alike (decision
  A41): a blind that passes a returning player while he waits is owed too (marked below).
* Two players in the game and no entrant at the big blind: heads-up. The button posts the small
  blind; the player who was big blind in the last hand is not big blind again (§4.2.1).
* Fewer than two players in the game but at least two eligible: the game (re)starts and nobody
  posts beyond the normal blinds (§6.2); owed blinds are forgiven.
* A seat that sits out (or waits) is marked "missed small/big blind" when that blind passes it,
  i.e. when it lies strictly between the last hand's blind and this hand's (§6.3).

With ``button_rule = dead_button`` (RULES.md §4.2.1, §11; Robert's Rules / TDA dead button) the
big blind drives: it advances exactly one eligible seat each hand (an entrant there takes it as
his turn); the small blind goes to the seat the last big blind occupied, and when that player
left, sits out or must enter anew nobody posts a small blind (a dead small blind); the button
goes to the seat the last small blind occupied, which may be empty or not dealt in (a dead
button). Nobody skips the big blind and nobody posts it twice in a row. Heads-up (two players
dealt in) the standard heads-up placement above applies instead: the button posts the small
blind and last hand's big blind is not big blind again. The first hand, a (re)starting game and
a plan that would put the big blind on the button's seat use the moving rule too. These hands
pass their blinds explicitly (``StartHand.small_blind``/``big_blind``).

Ante games (stud types) deal in every eligible player: everyone antes, nobody owes a blind, so
no missed-blind marking and no entry posts apply (a new or returning player plays at once); the
dealer position is the fixed chip box (decision A20/A25) or a rotating button (``dealer_mode``).
By construction the dealt-in order around the button is button, small blind, big blind, so the
hand machine derives the same blinds from the button.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from poker.engine.games import ForcedBets, get_game
from poker.engine.hand.commands import ExtraPost
from poker.engine.hand.posts import blind_indexes
from poker.engine.table.config import ButtonRule, DealerMode, MissedBlindsPolicy, TableConfig
from poker.engine.table.state import Seat, TableState


class Plan(NamedTuple):
    """The next hand: dealt-in seats (ascending), button, blinds, extra posts, missed blinds.

    ``missed`` holds ``(seat, small, big)`` for seats newly marked; ``restart``: a (re)starting
    game in which owed blinds are forgiven. ``small_blind`` and ``big_blind`` are 0 in ante
    games. ``explicit``: a dead-button hand, whose blinds are passed to the hand machine; its
    ``button`` may be a seat not dealt in, and when ``small_blind`` is not dealt in nobody posts
    a small blind.
    """

    seats: tuple[int, ...]
    button: int
    small_blind: int
    big_blind: int
    posts: tuple[ExtraPost, ...] = ()
    missed: tuple[tuple[int, bool, bool], ...] = ()
    restart: bool = False
    explicit: bool = False


def next_after(seat: int, pool: Sequence[int]) -> int:
    """The first seat of ``pool`` (ascending) clockwise strictly after ``seat``; wraps around."""
    for candidate in pool:
        if candidate > seat:
            return candidate
    return pool[0]


def strictly_between(start: int, seat: int, end: int) -> bool:
    """Whether ``seat`` lies clockwise strictly after ``start`` and strictly before ``end``
    (an empty arc when ``start == end``)."""
    if start == end:
        return False
    if start < end:
        return start < seat < end
    return seat > start or seat < end


def eligible_seats(state: TableState) -> tuple[int, ...]:
    """Seats that could be dealt in: chips in front, not sitting out, not leaving."""
    return tuple(
        number
        for number, seat in enumerate(state.seats, 1)
        if seat is not None and seat.stack > 0 and not seat.sitting_out and not seat.leaving
    )


def plan_hand(state: TableState) -> Plan | None:
    """The next hand's plan, or None when fewer than two players can be dealt in."""
    eligible = eligible_seats(state)
    if len(eligible) < 2:
        return None
    if get_game(state.config.game).forced_bets is ForcedBets.ANTE_BRING_IN:
        return _plan_ante_hand(state, eligible)
    seats = state.seats
    in_game = [number for number in eligible if not _seat(seats, number).owes]
    restart = len(in_game) < 2
    if restart:
        in_game = list(eligible)
    entrants = [number for number in eligible if number not in in_game]
    plan = None
    if state.config.button_rule is ButtonRule.DEAD_BUTTON and not restart and state.big_blind:
        plan = _plan_dead_button(state, in_game, entrants)
    if plan is None:
        plan = _plan_positions(state, in_game, entrants)
    if not restart and state.big_blind:
        plan = plan._replace(missed=_missed_blinds(state, plan))
    return plan._replace(restart=restart)


def _seat(seats: tuple[Seat | None, ...], number: int) -> Seat:
    seat = seats[number - 1]
    assert seat is not None
    return seat


def _plan_positions(state: TableState, in_game: list[int], entrants: list[int]) -> Plan:
    """Button, blinds and the dealt-in seats of a blind game."""
    eligible = sorted(in_game + entrants)
    button = next_after(state.button, in_game)
    small = next_after(button, in_game)
    if small != button:
        big = next_after(small, eligible)  # in the game or an entrant: his turn for the BB
        if strictly_between(small, big, button):
            return _three_handed(state, in_game, entrants, button=button, small=small, big=big)
    return _heads_up(state, in_game, button)


def _three_handed(
    state: TableState,
    in_game: list[int],
    entrants: list[int],
    *,
    button: int,
    small: int,
    big: int,
) -> Plan:
    """Three or more dealt in: the players in the game, the big blind, and the entrants who
    chose to post and do not sit between the button and the big blind."""
    dealt = set(in_game) | {big}
    posts: list[ExtraPost] = []
    for number in entrants:
        seat = _seat(state.seats, number)
        if number == big or not seat.post_blinds or strictly_between(button, number, big):
            continue
        dealt.add(number)
        posts.append(_owed_post(state.config, seat, number))
    ordered = tuple(sorted(dealt))
    _check_blinds(ordered, button, small, big)
    return Plan(ordered, button, small, big, tuple(posts))


def _heads_up(state: TableState, in_game: list[int], button: int) -> Plan:
    """Two in the game and no entrant at the big blind (RULES.md §4.2.1): the button posts the
    small blind; last hand's big blind is not big blind again."""
    if state.big_blind in in_game:
        button = state.big_blind
    other = next_after(button, in_game)
    ordered = tuple(sorted(in_game))
    _check_blinds(ordered, button, button, other)
    return Plan(ordered, button, button, other)


def _plan_dead_button(state: TableState, in_game: list[int], entrants: list[int]) -> Plan | None:
    """The dead-button positions (see the module doc), or None where the moving rule applies:
    heads-up, or a big blind that would land on the button's seat."""
    eligible = sorted(in_game + entrants)
    big = next_after(state.big_blind, eligible)
    small = state.big_blind  # the position; a small blind only if its player is in the game
    button = state.small_blind
    if big in (small, button) or strictly_between(button, big, small):
        return None  # the big blind went round past the button: no dead-button order left
    dealt = set(in_game) | {big}
    posts: list[ExtraPost] = []
    for number in entrants:
        seat = _seat(state.seats, number)
        if number == big or not seat.post_blinds or strictly_between(button, number, big):
            continue
        dealt.add(number)
        posts.append(_owed_post(state.config, seat, number))
    if len(dealt) < 3:
        return None  # heads-up: the button posts the small blind (RULES.md §4.2.1)
    return Plan(tuple(sorted(dealt)), button, small, big, tuple(posts), explicit=True)


def _check_blinds(seats: tuple[int, ...], button: int, small: int, big: int) -> None:
    """The hand machine must derive the same blinds from the button (see the module doc)."""
    small_index, big_index = blind_indexes(len(seats), seats.index(button))
    assert (seats[small_index], seats[big_index]) == (small, big), (seats, button, small, big)


def _owed_post(config: TableConfig, seat: Seat, number: int) -> ExtraPost:
    """What an entrant posts to be dealt in out of turn (RULES.md §6.2-6.3, decision A8)."""
    big, small = config.stakes.big_blind, config.stakes.small_blind
    if seat.new or (seat.missed_big and not seat.missed_small):
        return ExtraPost(number, live=big)
    if seat.missed_big and config.missed_blinds_policy is MissedBlindsPolicy.ROBERTS:
        return ExtraPost(number, live=big, dead=small)
    return ExtraPost(number, dead=small)  # missed small only, or both under the seed's words


def _missed_blinds(state: TableState, plan: Plan) -> tuple[tuple[int, bool, bool], ...]:
    """Seats not dealt in that the blinds passed since the last hand (RULES.md §6.3)."""
    marked = []
    for number in state.occupied():
        seat = _seat(state.seats, number)
        if number in plan.seats or seat.new:
            continue
        small = strictly_between(state.small_blind, number, plan.small_blind)
        big = strictly_between(state.big_blind, number, plan.big_blind)
        small = small and not seat.missed_small
        big = big and not seat.missed_big
        if small or big:
            marked.append((number, small, big))
    return tuple(marked)


def _plan_ante_hand(state: TableState, eligible: tuple[int, ...]) -> Plan:
    """Every eligible player is dealt in after his ante (RULES.md §6.2). The fixed dealer
    position is the chip box before seat 1, so the hand's "button" is the last player before
    it; a rotating button moves to the next eligible player."""
    if state.config.dealer_mode is DealerMode.FIXED_DEALER:
        button = eligible[-1]
    else:
        button = next_after(state.button, eligible)
    return Plan(eligible, button, 0, 0)
