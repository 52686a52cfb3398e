"""Hand histories in PHH, the Poker Hand History format of PokerKit and its data sets.

* :func:`export_hand` writes a finished hand (its events) as PHH text;
* :func:`parse_phh` reads PHH text into a :class:`HandHistory` (:func:`parse_phh_all` reads a
  file of several hands);
* :func:`replay_phh` plays a hand history through our hand machine and returns the finishing
  stacks (with how they differ from the file's ``finishing_stacks``, if they do), or a sentence
  saying why the hand cannot be played under our rules.

The public corpus plays as recorded: amounts with fractions (dollars and cents) are played in the
file's finest decimal unit and the recorded result is compared, never used to play (a Pluribus
split written in halves is an ``odd_chip`` mismatch: see :mod:`poker.engine.phh.units`); antes
that differ between players (a big-blind or button ante) are dead money in the main pot; a hand
without a small blind is dealt with the big blind only (see :mod:`poker.engine.phh.replay`).

Variant codes are PHH's own where one exists (``NT``, ``FT``, ``PO``, ``FO/8``), else our
extension built the same way (see :mod:`poker.engine.phh.variants`); rules PHH has no field for
travel in user-defined ``_`` fields (see :mod:`poker.engine.phh.config`).

>>> text = '''
... variant = "NT"
... antes = [0, 0, 0]
... blinds_or_straddles = [1, 2, 0]
... min_bet = 2
... starting_stacks = [100, 100, 100]
... actions = ["d dh p1 ????", "d dh p2 ????", "d dh p3 AsAh", "p3 cbr 6", "p1 f", "p2 f"]
... '''
>>> replay_phh(parse_phh(text)).finishing_stacks
(99, 98, 103)
"""

from poker.engine.phh.export import export_hand, history_from_events
from poker.engine.phh.model import HandHistory, PHHError, dump_phh, parse_phh, parse_phh_all
from poker.engine.phh.replay import ReplayResult, replay_phh
from poker.engine.phh.variants import parse_variant, variant_code

__all__ = [
    "HandHistory",
    "PHHError",
    "ReplayResult",
    "dump_phh",
    "export_hand",
    "history_from_events",
    "parse_phh",
    "parse_phh_all",
    "parse_variant",
    "replay_phh",
    "variant_code",
]
