"""The engine-side bot policy the service benchmarks share: cheap, bounded, mostly passive.

Raise the minimum 15% of the time (at most four wagers a hand), fold to a bet 10% of the time,
else check or call, so hands are short, reach showdown often and always end.
"""

from __future__ import annotations

import random

from poker.engine.table import Action, TableState, legal_actions

#: At most this many bets or raises in one hand, so no hand loops on raises.
MAX_WAGERS = 4


def choose_action(
    table: TableState, seat: int, rng: random.Random, wagers: int
) -> tuple[Action, int, bool]:
    """The action and amount for ``seat``, and whether it is a wager (bet or raise)."""
    options = {option.action: option for option in legal_actions(table, seat)}
    roll = rng.random()
    wager = options.get(Action.RAISE) or options.get(Action.BET)
    if wager is not None and roll < 0.15 and wagers < MAX_WAGERS:
        return wager.action, wager.min_amount, True
    if Action.CALL in options and roll > 0.90:
        return Action.FOLD, 0, False
    if Action.CHECK in options:
        return Action.CHECK, 0, False
    return Action.CALL, options[Action.CALL].min_amount, False
