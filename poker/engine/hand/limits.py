"""The betting limits: what the player to act may do (:func:`betting_limits`).

:func:`betting_limits` is the single source of what the player to act may do; ``betting.verify_act``
checks commands against it and ``legal_actions`` lists it, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from poker.engine.betting import (
    IncompleteRaiseRule,
    Structure,
)
from poker.engine.games import (
    ForcedBets,
)
from poker.engine.hand import core
from poker.engine.hand.commands import Action, HandConfig
from poker.engine.hand.core import ANTE_BRING_IN, BET, COMPLETE, FIXED_LIMIT, RAISE, SPREAD_LIMIT
from poker.engine.hand.state import (
    NOBODY,
    HandState,
)


class Limits(NamedTuple):
    """What the player to act (``player``) may do now.

    ``owed`` is what he must add to stay in; ``call`` what a call puts in (less when all-in);
    ``wager`` is BET, RAISE or COMPLETE when he may wager, to a round total from ``min_to`` to
    ``max_to`` (fixed limit: ``min_to`` or ``max_to`` only; they differ only on an open pair on
    4th street, RULES.md §4.6). ``bring_in`` is what bringing in puts in when the player must
    open a stud game's first round (he may bring in or wager, not fold or check), else 0.
    """

    player: int
    owed: int
    call: int
    wager: Action | None
    min_to: int
    max_to: int
    bring_in: int = 0


def raise_cap(config: HandConfig) -> int:
    """How many raises may follow the bet in a capped round: ``max_raises``, or in spread limit
    ``spread_max_raises`` when set (RULES.md §4.4, §11, decision A10)."""
    rules = config.rules
    spread_cap = rules.spread_max_raises
    if spread_cap is not None and config.structure is Structure.SPREAD_LIMIT:
        return spread_cap
    return rules.max_raises


def may_wager(state: HandState, index: int) -> bool:
    """Whether the player to act (``index``) may bet or raise at all (cap, someone left who
    could call it, reopening)."""
    setup = state.setup
    strategy = setup.strategy
    round_ = state.round
    if strategy.capped and not round_.uncapped and round_.raises > raise_cap(setup.config):
        return False  # 1 bet + max_raises raises (RULES.md §4.4)
    # Somebody else must be able to act on a wager: a live player with chips beyond the current
    # bet. When every other player is all-in, or could at most call the current bet, a wager
    # could never be called (PokerKit: "no reason to raise"); the player may call or fold.
    level = round_.level
    bets = state.bets
    folded = state.folded
    for other, stack in enumerate(state.stacks):
        if stack and other != index and not folded[other] and stack + bets[other] > level:
            break
    else:
        return False
    acted = state.acted[index]
    if acted == NOBODY or round_.full_level > acted:
        return True
    # Several short all-ins together may amount to a full raise (RULES.md §4.5).
    half_bet = setup.config.rules.incomplete_raise_rule is IncompleteRaiseRule.HALF_BET
    return round_.level - acted >= strategy.reopen_threshold(round_, half_bet)


def bring_in_due(state: HandState) -> bool:
    """Whether the player to act must open a stud game's first round with the bring-in (or a
    wager instead): nothing has been wagered on it yet (RULES.md §4.2.3)."""
    return (
        not state.round.level
        and not state.street
        and state.setup.game.forced_bets is ForcedBets.ANTE_BRING_IN
    )


def open_pair_showing(state: HandState) -> bool:
    """Whether the open-pair option makes big bets possible on this round: 7 Card Stud's 4th
    street (unless the table switched it, decision A6) with a pair among some player's two
    upcards (RULES.md §4.6). Fixed limit only."""
    setup = state.setup
    game = setup.game
    enabled = setup.config.rules.open_pair_double_bet
    if enabled is None:
        enabled = game.open_pair_double_bet
    if not enabled or state.street != 1 or setup.config.structure is not Structure.FIXED_LIMIT:
        return False
    # The players dealt 4th street hold two upcards; the option stays when a pair folds.
    return any(len(up) == 2 and up[0].rank == up[1].rank for up in state.up)


def _compute_limits(state: HandState) -> Limits:
    index = state.to_act
    stack = state.stacks[index]
    bet = state.bets[index]
    round_ = state.round
    level = round_.level
    if not level and not state.street and state.setup.game.forced_bets is ANTE_BRING_IN:
        return _bring_in_limits(state, index, stack)
    owed = level - bet if level > bet else 0
    call = owed if owed < stack else stack
    restricted = state.pat_restricted
    if (
        stack <= owed
        or not may_wager(state, index)
        or (restricted and restricted[index])  # timed out in the draw (RULES.md §7.2)
    ):
        return Limits(index, owed, call, None, 0, 0, 0)
    setup = state.setup
    strategy = setup.strategy
    rules = setup.config.rules
    lowest, highest = strategy.bounds(round_, sum(state.contributions), owed, rules.chip_unit)
    if (
        state.street == 1
        and setup.game.forced_bets is ANTE_BRING_IN
        and round_.unit < setup.config.stakes.big_bet
        and open_pair_showing(state)
    ):
        highest = round_.full_level + setup.config.stakes.big_bet  # a small or a big bet
    all_in = bet + stack
    if all_in < lowest:
        lowest = highest = all_in  # short: all-in is the only wager left
    elif all_in < highest:
        highest = all_in
    if rules.spread_round_ceiling and strategy.structure is SPREAD_LIMIT:
        highest = min(highest, 3 * round_.unit)  # decision A10: the optional round ceiling
    if highest < lowest or highest <= level:
        return Limits(index, owed, call, None, 0, 0, 0)
    wager = BET if level == 0 else RAISE
    if (
        level
        and not round_.raises
        and not state.street
        and strategy.structure is FIXED_LIMIT
        and setup.game.forced_bets is ANTE_BRING_IN
    ):
        wager = COMPLETE  # the first full wager over the bring-in (RULES.md §4.2.3)
    return Limits(index, owed, call, wager, lowest, highest, 0)


def _bring_in_limits(state: HandState, index: int, stack: int) -> Limits:
    """The opener of a stud game's first round: the bring-in, or instead (RULES.md §4.2.3) a
    completion to the small bet (fixed limit) or a bet above the bring-in (other structures,
    decision A34). A stack not above the bring-in is all-in for it."""
    setup = state.setup
    config = setup.config
    bring_in = config.stakes.bring_in
    post = stack if stack < bring_in else bring_in
    if stack <= bring_in or not may_wager(state, index):
        return Limits(index, 0, 0, None, 0, 0, post)
    chip_unit = config.rules.chip_unit
    if config.structure is Structure.FIXED_LIMIT:
        wager = Action.COMPLETE
        lowest = highest = config.stakes.small_bet
    else:
        wager = Action.BET
        round_ = state.round
        lowest, highest = setup.strategy.bounds(round_, sum(state.contributions), 0, chip_unit)
        lowest = max(lowest, bring_in + chip_unit)  # "a regular bet larger than the bring-in"
        if config.rules.spread_round_ceiling and config.structure is Structure.SPREAD_LIMIT:
            highest = min(highest, 3 * round_.unit)
    if stack < lowest:
        lowest = highest = stack
    elif stack < highest:
        highest = stack
    if highest < lowest:
        return Limits(index, 0, 0, None, 0, 0, post)
    return Limits(index, 0, 0, wager, lowest, highest, post)


betting_limits: Final[core.LastMemo[HandState, Limits]] = core.LastMemo(_compute_limits)
"""The limits of the player to act; the state must have one (``state.to_act`` set). Those of
the most recent state are remembered (:class:`poker.engine.hand.core.LastMemo`): a client reads
them through ``legal_actions`` and ``decide`` checks against them on the same state."""
