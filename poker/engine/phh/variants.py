"""PHH variant codes for our games and betting structures.

The PHH specification names 11 variants; six of them are games we deal: ``NT`` (no-limit Hold'em),
``FT`` (fixed-limit Hold'em), ``PO`` (pot-limit Omaha), ``FO/8`` (fixed-limit Omaha Hi/Lo), ``F7S``
(fixed-limit 7 Card Stud) and ``F7S/8`` (fixed-limit 7 Card Stud Hi/Lo). The specification says new
variants "can simply be integrated by introducing new variant codes"; for every other game x
structure we deal we build a code the way the official ones are built: a structure letter, the
game, and ``/8`` for an eight-or-better low half.

* structure letters: ``F`` fixed limit, ``S`` spread limit, ``P`` pot limit, ``H`` half-pot
  limit, ``N`` no limit;
* games: ``T`` Texas Hold'em, ``O`` Omaha, ``5O`` 5-Card Omaha (a leading count, as the ``7`` of
  ``F7S``), ``7S`` 7 Card Stud, ``SK`` Soko, ``AM`` Americana, ``TL``
  Telesina, ``5CD`` 5 Card Draw, ``2L3D`` Deuce-to-Seven Triple Draw (PHH's own, with ``F``),
  ``32D`` 32-Card Draw, each followed by ``/8`` when hi/lo.

So pot-limit 5-Card Omaha Hi/Lo is ``P5O/8`` and no-limit Omaha is ``NO``. PokerKit and other PHH
readers do not know these extension codes and refuse such files, which is what we want: a reader
that does not know the game must not play it as a different one.

>>> variant_code("omaha5-hilo", Structure.POT_LIMIT), variant_code("holdem", Structure.NO_LIMIT)
('P5O/8', 'NT')
>>> parse_variant("FO/8")
('omaha-hilo', <Structure.FIXED_LIMIT: 1>)
>>> is_standard("PO"), is_standard("NO")
(True, False)
"""

from __future__ import annotations

from typing import Final

from poker.engine.betting import Structure

STRUCTURE_LETTERS: Final[dict[Structure, str]] = {
    Structure.FIXED_LIMIT: "F",
    Structure.SPREAD_LIMIT: "S",
    Structure.POT_LIMIT: "P",
    Structure.HALF_POT_LIMIT: "H",
    Structure.NO_LIMIT: "N",
}
GAME_CODES: Final[dict[str, str]] = {
    "holdem": "T",
    "omaha": "O",
    "omaha5": "5O",
    "omaha-hilo": "O/8",
    "omaha5-hilo": "5O/8",
    "seven-card-stud": "7S",
    "seven-card-stud-hi-lo": "7S/8",
    "soko": "SK",
    "americana": "AM",
    "telesina": "TL",
    "five-card-draw": "5CD",
    "deuce-seven-triple-draw": "2L3D",
    "draw32": "32D",
}
STANDARD_CODES: Final = frozenset({"NT", "FT", "PO", "FO/8", "F7S", "F7S/8", "F2L3D"})
"""The codes of the PHH specification that name games we deal."""

OTHER_PHH_VARIANTS: Final[dict[str, str]] = {
    "NS": "no-limit short-deck Hold'em",
    "FR": "fixed-limit razz",
    "N2L1D": "no-limit deuce-to-seven single draw",
    "FB": "fixed-limit badugi",
}
"""The PHH variants whose games our hand machine does not deal (yet)."""

_BY_CODE: Final[dict[str, tuple[str, Structure]]] = {
    letter + game_code: (game, structure)
    for structure, letter in STRUCTURE_LETTERS.items()
    for game, game_code in GAME_CODES.items()
}


def variant_code(game: str, structure: Structure) -> str:
    """The PHH code of ``game`` under ``structure`` (official where PHH has one)."""
    return STRUCTURE_LETTERS[structure] + GAME_CODES[game]


def parse_variant(code: str) -> tuple[str, Structure]:
    """Our game key and structure for a PHH variant code; ValueError with a sentence otherwise."""
    found = _BY_CODE.get(code)
    if found is not None:
        return found
    if code in OTHER_PHH_VARIANTS:
        raise ValueError(
            f"The variant {code} ({OTHER_PHH_VARIANTS[code]}) is not a game our engine deals."
        )
    raise ValueError(f"{code!r} is not a PHH variant code we know.")


def is_standard(code: str) -> bool:
    """Whether ``code`` is one of the PHH specification's own codes (not our extension)."""
    return code in STANDARD_CODES
