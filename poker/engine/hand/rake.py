"""The rake: how much of the pots the room keeps (RULES.md §6.7, decision A26).

All amounts are integers in currency units (cents by default). The schedule is table
configuration; the defaults are the room's: one cent per full 20 cents of pot, two cents for pots
of 20 to 39 cents, capped by the number of players dealt in (2: 75, 3: 200, 4-10: 300).

>>> schedule = RakeSchedule()
>>> [rake_amount(schedule, pot, 6) for pot in (15, 20, 39, 40, 59, 60, 1000)]
[0, 2, 2, 2, 2, 3, 50]
>>> rake_amount(schedule, 2000, 2), rake_amount(schedule, 5000, 3), rake_amount(schedule, 10000, 9)
(75, 200, 300)
>>> split_rake(70, (1000, 400))
(50, 20)
>>> split_rake(70, (50, 400), distribution=RakeDistribution.MAIN_POT_FIRST)
(50, 20)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class RakeDistribution(Enum):
    """Which pots the rake of a hand with side pots comes from (decision A26)."""

    PROPORTIONAL = 1  # every pot in proportion to its size, the remainder from the main pot
    MAIN_POT_FIRST = 2  # the main pot first, then the side pots in the order they were made


@dataclass(frozen=True, slots=True)
class RakeSchedule:
    """A rake schedule in currency units.

    ``step`` units for every full ``per`` units of pot; nothing for pots below ``minimum_pot``;
    at least ``band_rake`` for pots from ``minimum_pot`` to ``band_below - 1``; at most the cap of
    the first ``(up_to_players, cap)`` entry of ``caps`` that covers the players dealt in.
    ``trigger_street`` (0 = the game's default) is the street whose dealing makes a hand raked.
    ``distribution``: which pots the rake comes from (``rake_distribution``, A26).
    """

    per: int = 20
    step: int = 1
    minimum_pot: int = 20
    band_below: int = 40
    band_rake: int = 2
    caps: tuple[tuple[int, int], ...] = ((2, 75), (3, 200), (10, 300))
    trigger_street: int = 0
    distribution: RakeDistribution = RakeDistribution.PROPORTIONAL

    def cap_for(self, players_dealt: int) -> int:
        """The most this schedule takes from one hand with ``players_dealt`` players."""
        for up_to, cap in self.caps:
            if players_dealt <= up_to:
                return cap
        return self.caps[-1][1] if self.caps else 0


def rake_amount(schedule: RakeSchedule, pot: int, players_dealt: int, chip_unit: int = 1) -> int:
    """The rake on a raked hand's total ``pot`` (uncalled bets already returned)."""
    if pot < schedule.minimum_pot:
        return 0
    rake = pot // schedule.per * schedule.step
    if pot < schedule.band_below:
        rake = max(rake, schedule.band_rake)
    rake = min(rake, schedule.cap_for(players_dealt))
    return rake - rake % chip_unit


def split_rake(
    rake: int,
    pots: tuple[int, ...],
    chip_unit: int = 1,
    distribution: RakeDistribution = RakeDistribution.PROPORTIONAL,
) -> tuple[int, ...]:
    """Take ``rake`` from the pots: in proportion to their sizes, rounded down to the chip unit,
    the remainder from the main pot; or (``MAIN_POT_FIRST``) all of the main pot before the
    first side pot, and so on (decision A26)."""
    total = sum(pots)
    if not rake or not total:
        return tuple(0 for _ in pots)
    if distribution is RakeDistribution.MAIN_POT_FIRST:
        left = rake
        taken = []
        for amount in pots:
            share = min(left, amount)
            taken.append(share)
            left -= share
        return tuple(taken)
    shares = [rake * amount // total // chip_unit * chip_unit for amount in pots]
    shares[0] += rake - sum(shares)
    return tuple(shares)
