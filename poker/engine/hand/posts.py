"""Forced bets (RULES.md §4.2, §6.2-6.3): antes, the blinds and the bring-in, then the posts
beyond them (an entering player's big blind and missed blinds); the ``decide`` steps that post
them and the handlers of AntePosted, BlindPosted, BringInPosted and DeadBlindPosted.

The table (``poker.engine.table``) decides who must post what (RULES.md §6.2-6.3, decision A8) and
passes it in :attr:`StartHand.posts <poker.engine.hand.commands.StartHand.posts>`; the hand machine
posts it after the blinds: the live part as an ``ENTRY_BIG_BLIND`` (it counts as the player's
bet and gives him the big blind's option), the dead part as a :class:`DeadBlindPosted` (into the
pot, never part of his bet). Dead money belongs to the main pot: it does not raise the level
up to which its owner can win from each opponent (:func:`dead_money`).

Which chips were forced is a function of the hand's setup (the posting order is fixed: antes,
small blind, big blind, then these posts), so no state field records it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from typing import Final, NamedTuple

from poker.engine.betting import Structure
from poker.engine.hand import core
from poker.engine.hand.commands import StartHand
from poker.engine.hand.errors import InvalidHandSetup
from poker.engine.hand.events import Emitter, HandEventHandler
from poker.engine.hand.state import NOBODY, HandSetup, HandState, changed_round, paid_in
from poker.v1 import events_pb2 as pb


def blind_indexes(count: int, button: int) -> tuple[int, int]:
    """Indexes of the small and big blind for ``count`` players and the button's index."""
    small = button if count == 2 else (button + 1) % count  # heads-up: the button (§4.2.1)
    return small, (small + 1) % count


def positions(
    seats: tuple[int, ...], button: int, small_blind: int | None, big_blind: int | None
) -> tuple[int, int, int]:
    """Indexes of the button, the small blind and the big blind among ``seats`` (ascending).

    Without explicit blinds (``big_blind`` None) they follow the button, a dealt-in seat. With
    them, the button's index is the dealt-in player on the button or, for a dead button, the
    last one before its seat (so "left of the button" is ``button + 1`` either way), and the
    small blind's is NOBODY when its seat is not dealt in (no small blind this hand).
    """
    if big_blind is None:
        index = seats.index(button)
        small, big = blind_indexes(len(seats), index)
        return index, small, big
    index = (bisect_right(seats, button) - 1) % len(seats)
    small = seats.index(small_blind) if small_blind in seats else NOBODY
    return index, small, seats.index(big_blind)


def verify_posts(command: StartHand) -> None:
    """Extra posts: each from a dealt-in player other than the blinds, once, in whole chips."""
    seats = tuple(sorted(entry.seat for entry in command.seats))
    _, small, big = positions(seats, command.button, command.small_blind, command.big_blind)
    blinds = {seats[big]} if small == NOBODY else {seats[small], seats[big]}
    unit = command.config.rules.chip_unit
    seen: set[int] = set()
    for post in command.posts:
        if post.seat not in seats:
            raise InvalidHandSetup(f"Seat {post.seat} posts but is not dealt in.")
        if post.seat in blinds:
            raise InvalidHandSetup(f"Seat {post.seat} already posts a blind in this hand.")
        if post.seat in seen:
            raise InvalidHandSetup(f"Seat {post.seat} has more than one extra post.")
        seen.add(post.seat)
        amounts = (post.live, post.dead)
        if any(type(amount) is not int or amount < 0 or amount % unit for amount in amounts):
            raise InvalidHandSetup(f"Seat {post.seat}'s post must be whole chips of {unit}.")
        if not (post.live or post.dead):
            raise InvalidHandSetup(f"Seat {post.seat}'s post is empty.")


def post_extra_blinds(recorder: Emitter) -> None:
    """Post every extra post of the setup: the live part, then the dead part."""
    state = recorder.state
    setup = state.setup
    for index, live, dead in setup.posts:
        seat = setup.seats[index]
        if live and state.stacks[index]:
            amount = min(live, state.stacks[index])
            state = recorder.emit(
                pb.BlindPosted(
                    seat=seat,
                    kind=pb.BLIND_KIND_ENTRY_BIG_BLIND,
                    amount=amount,
                    all_in=amount == state.stacks[index],
                )
            )
        if dead and state.stacks[index]:
            amount = min(dead, state.stacks[index])
            state = recorder.emit(
                pb.DeadBlindPosted(seat=seat, amount=amount, all_in=amount == state.stacks[index])
            )


class Forced(NamedTuple):
    """Per player index: the live chips forced in (antes, blinds, entry big blind) and the dead
    ones (missed small blinds)."""

    live: tuple[int, ...]
    dead: tuple[int, ...]


def _forced(setup: HandSetup) -> Forced:
    """Replay the posting order on the starting stacks (every post is capped by the stack)."""
    stakes = setup.config.stakes
    left = list(setup.starting_stacks)
    live = [0] * len(left)
    dead = [0] * len(left)

    def take(index: int, amount: int, into: list[int]) -> None:
        paid = min(amount, left[index])
        left[index] -= paid
        into[index] += paid

    if stakes.ante:
        for index in range(len(left)):
            take(index, stakes.ante, live)
    if setup.small_blind != NOBODY:
        take(setup.small_blind, stakes.small_blind, live)
    if setup.big_blind != NOBODY:  # stud-type games have no blinds
        take(setup.big_blind, stakes.big_blind, live)
    for index, live_post, dead_post in setup.posts:
        take(index, live_post, live)
        take(index, dead_post, dead)
    return Forced(tuple(live), tuple(dead))


forced_chips: Final = core.remembered(_forced)
"""The forced chips of a hand, remembered per setup."""


def dead_money(setup: HandSetup) -> tuple[int, ...]:
    """Dead chips per player index; ``()`` when nobody posted any (the common case)."""
    if not setup.posts:
        return ()
    dead = forced_chips(setup).dead
    return dead if any(dead) else ()


def dead_blind_posted(state: HandState, event: pb.DeadBlindPosted) -> HandState:
    """Apply a dead blind: from the stack into the pot, not into the player's bet."""
    index = state.setup.seats.index(event.seat)
    stacks = list(state.stacks)
    contributions = list(state.contributions)
    stacks[index] -= event.amount
    contributions[index] += event.amount
    return state.changed(stacks=tuple(stacks), contributions=tuple(contributions))


# --- antes, blinds and the bring-in ---------------------------------------------------------------


def post_forced_bets(recorder: Emitter) -> None:
    """Antes from everyone, then the small and the big blind (RULES.md §4.2.1)."""
    state = recorder.state
    setup = state.setup
    stakes = setup.config.stakes
    if stakes.ante:
        for index in setup.clockwise_from(setup.button + 1):
            stack = state.stacks[index]
            amount = min(stakes.ante, stack)
            state = recorder.emit(
                pb.AntePosted(seat=setup.seats[index], amount=amount, all_in=amount == stack)
            )
    for index, kind, size in (
        (setup.small_blind, pb.BLIND_KIND_SMALL_BLIND, stakes.small_blind),
        (setup.big_blind, pb.BLIND_KIND_BIG_BLIND, stakes.big_blind),
    ):
        if index == NOBODY:
            continue  # no small blind this hand (dead button)
        stack = state.stacks[index]
        amount = min(size, stack)
        # Field by field (two a hand): cheaper than keyword construction; all_in False is
        # the field's default.
        blind = pb.BlindPosted()
        blind.seat = setup.seats[index]
        blind.kind = kind
        blind.amount = amount
        if amount == stack:
            blind.all_in = True
        state = recorder.emit(blind)


def _ante_posted(state: HandState, event: pb.AntePosted) -> HandState:
    """AntePosted: from the stack into the pot, not into the round's bet."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    stacks = list(state.stacks)
    stacks[index] -= amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return state.changed(stacks=tuple(stacks), contributions=tuple(contributions))


def _blind_posted(state: HandState, event: pb.BlindPosted) -> HandState:
    """BlindPosted: a bet that sets the round's level."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    round_ = state.round
    if event.kind == pb.BLIND_KIND_BIG_BLIND:
        # The full big blind is the round's bet even when posted short (RULES.md §4.2.1).
        full_level = state.setup.config.stakes.big_blind
        round_ = changed_round(
            round_, level=max(round_.level, full_level), full_level=full_level, raises=1
        )
    else:
        round_ = changed_round(round_, level=max(round_.level, amount))
    # paid_in inlined: two blinds every hand.
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] += amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return core.blind_in(
        state,
        stacks=tuple(stacks),
        bets=tuple(bets),
        contributions=tuple(contributions),
        round=round_,
    )


def _bring_in_posted(state: HandState, event: pb.BringInPosted) -> HandState:
    """BringInPosted: the round's opening bet; like the big blind, the full bring-in is what the
    others must call even when it was posted short (RULES.md §4.2.3).

    Fixed limit: the bring-in is not the round's bet (the completion to a small bet is), so the
    full level stays 0 and no raise is counted. The other structures treat it as the opening
    bet: raises go up by at least the bring-in and, in spread limit, it counts toward the cap.
    """
    index = state.setup.seats.index(event.seat)
    bring_in = state.setup.config.stakes.bring_in
    round_ = state.round
    if state.setup.config.structure is Structure.FIXED_LIMIT:
        round_ = changed_round(round_, level=bring_in)
    else:
        round_ = changed_round(
            round_,
            level=bring_in,
            full_level=bring_in,
            min_increment=max(round_.min_increment, bring_in),
            raises=1,
        )
    stacks, bets, contributions = paid_in(state, index, event.amount)
    acted = list(state.acted)
    acted[index] = bring_in  # nobody completes: he does not act again this round (§4.1)
    return state.changed(
        stacks=stacks,
        bets=bets,
        contributions=contributions,
        acted=tuple(acted),
        round=round_,
        to_act=NOBODY,
    )


FORCED_BET_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "ante_posted": _ante_posted,
    "blind_posted": _blind_posted,
    "bring_in_posted": _bring_in_posted,
    "dead_blind_posted": dead_blind_posted,
}
"""The forced bets' handlers, part of evolve's one dispatch table."""
