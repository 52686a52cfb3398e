"""The engine's speed tricks, in one place: the few that ``bench hand`` shows are worth their cost.

Everywhere else a state changes by named fields (:meth:`HandState.changed`, checked by mypy).
Here, and only here, states are built positionally: ``list(state)``, a few slots assigned by
their index, then ``tuple.__new__``, which skips NamedTuple's generated ``__new__`` (keyword
matching and defaults) and ``changed``'s loop over a keyword dict. Each builder still takes
named, typed, keyword-only arguments, so a caller cannot swap two fields; a unit test
(``tests/unit/test_hand_core.py``) checks that each equals the ``changed`` call it replaces.

They serve the events of (nearly) every turn, a handful per action, which is where the engine
spends its time (``bench hand``, 6-max no-limit Hold'em, about 40 events a hand): the usual
turn and a round's first, a check, a fold, chips put in (a blind, a call, bet or raise), a
street's community cards, the hands shown and the pots paid at the showdown. Measured on
one state (CPython 3.11): ``changed`` with two fields about 470 ns, :func:`turn` about 280 ns;
with six fields about 750 ns against 330 ns. Rarer events (antes, the bring-in, draws, the split
offer, the hand's start and end) use ``changed``: there the difference does not show.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Final, Generic, TypeVar

from poker.engine.betting import HeadsUpUncap, IncompleteRaiseRule, Round, Structure
from poker.engine.cards import Card
from poker.engine.games import ForcedBets
from poker.engine.hand.commands import Action
from poker.engine.hand.state import BETTING, NOBODY, HandSetup, HandState

# --- enum members, bound once ---------------------------------------------------------------------
# On CPython 3.11 ``Action.FOLD`` costs about 55 ns (an attribute lookup on an enum class is not
# specialised), a module global about 9 ns; the checks, limits and events of one action make a
# dozen such lookups. Only the per-action paths (``betting.verify_action``,
# ``betting.action_event``, ``limits`` for the player to act, ``legal_actions`` and the fold's
# uncap check) use these; everything else names the member.

FOLD: Final = Action.FOLD
CHECK: Final = Action.CHECK
CALL: Final = Action.CALL
BET: Final = Action.BET
RAISE: Final = Action.RAISE
COMPLETE: Final = Action.COMPLETE
BRING_IN: Final = Action.BRING_IN
ANTE_BRING_IN: Final = ForcedBets.ANTE_BRING_IN
FIXED_LIMIT: Final = Structure.FIXED_LIMIT
SPREAD_LIMIT: Final = Structure.SPREAD_LIMIT
UNCAP_NEVER: Final = HeadsUpUncap.NEVER
UNCAP_BEFORE_CAP: Final = HeadsUpUncap.BEFORE_CAP
HALF_BET: Final = IncompleteRaiseRule.HALF_BET

# --- states built positionally --------------------------------------------------------------------

_new: Final = tuple.__new__
# first_state() writes the fields without a default by position (HandState's own order, which
# its docstring names and tests/unit/test_hand_core.py checks), then every default, read from
# HandState itself: no list of names to keep in step.
_FIRST_DEFAULTS: Final = tuple(HandState._field_defaults.values())

# HandState's field positions, for the builders below only.
_FIELD: Final = {name: index for index, name in enumerate(HandState._fields)}
_STREET: Final = _FIELD["street"]
_STACKS: Final = _FIELD["stacks"]
_BETS: Final = _FIELD["bets"]
_CONTRIBUTIONS: Final = _FIELD["contributions"]
_FOLDED: Final = _FIELD["folded"]
_ACTED: Final = _FIELD["acted"]
_ROUND: Final = _FIELD["round"]
_TO_ACT: Final = _FIELD["to_act"]
_DEADLINE: Final = _FIELD["deadline"]
_BOARD: Final = _FIELD["board"]
_DECK_POSITION: Final = _FIELD["deck_position"]
_PHASE: Final = _FIELD["phase"]
_SHOWDOWN: Final = _FIELD["showdown"]
_AWARDED: Final = _FIELD["awarded"]
_HOLE: Final = _FIELD["hole"]
_UP: Final = _FIELD["up"]


def turn(state: HandState, *, to_act: int, deadline: int) -> HandState:
    """``changed(to_act=..., deadline=...)``: the usual ActionRequested, a third of the events."""
    fields = list(state)
    fields[_TO_ACT] = to_act
    fields[_DEADLINE] = deadline
    return _new(HandState, fields)


def round_turn(state: HandState, *, to_act: int, deadline: int, round: Round) -> HandState:
    """``changed(round=..., to_act=..., deadline=..., phase=BETTING)``: the first turn of a
    betting round (every street) or the betting turn after a draw."""
    fields = list(state)
    fields[_ROUND] = round
    fields[_TO_ACT] = to_act
    fields[_DEADLINE] = deadline
    fields[_PHASE] = BETTING
    return _new(HandState, fields)


def checked(state: HandState, *, acted: tuple[int, ...]) -> HandState:
    """``changed(acted=..., to_act=NOBODY)``: a check."""
    fields = list(state)
    fields[_ACTED] = acted
    fields[_TO_ACT] = NOBODY
    return _new(HandState, fields)


def folded(state: HandState, *, folded: tuple[bool, ...], round: Round) -> HandState:
    """``changed(folded=..., round=..., to_act=NOBODY)``: a fold."""
    fields = list(state)
    fields[_FOLDED] = folded
    fields[_ROUND] = round
    fields[_TO_ACT] = NOBODY
    return _new(HandState, fields)


def chips_in(
    state: HandState,
    *,
    stacks: tuple[int, ...],
    bets: tuple[int, ...],
    contributions: tuple[int, ...],
    acted: tuple[int, ...],
    round: Round,
) -> HandState:
    """``changed(stacks=..., bets=..., contributions=..., acted=..., round=..., to_act=NOBODY)``:
    a call, a bet or a raise."""
    fields = list(state)
    fields[_STACKS] = stacks
    fields[_BETS] = bets
    fields[_CONTRIBUTIONS] = contributions
    fields[_ACTED] = acted
    fields[_ROUND] = round
    fields[_TO_ACT] = NOBODY
    return _new(HandState, fields)


def blind_in(
    state: HandState,
    *,
    stacks: tuple[int, ...],
    bets: tuple[int, ...],
    contributions: tuple[int, ...],
    round: Round,
) -> HandState:
    """``changed(stacks=..., bets=..., contributions=..., round=...)``: a blind (two a hand)."""
    fields = list(state)
    fields[_STACKS] = stacks
    fields[_BETS] = bets
    fields[_CONTRIBUTIONS] = contributions
    fields[_ROUND] = round
    return _new(HandState, fields)


def shown(state: HandState, *, showdown: tuple[int, ...]) -> HandState:
    """``changed(showdown=...)``: a hand shown or mucked (several at every showdown)."""
    fields = list(state)
    fields[_SHOWDOWN] = showdown
    return _new(HandState, fields)


def awarded(state: HandState, *, stacks: tuple[int, ...], awarded: int) -> HandState:
    """``changed(stacks=..., awarded=...)``: a pot, or a share of one, paid out."""
    fields = list(state)
    fields[_STACKS] = stacks
    fields[_AWARDED] = awarded
    return _new(HandState, fields)


def hole_cards(
    state: HandState,
    *,
    hole: tuple[tuple[Card, ...], ...],
    up: tuple[tuple[Card, ...], ...],
    deck_position: int,
) -> HandState:
    """``changed(hole=..., up=..., deck_position=...)``: the first street's hole cards (every
    hand deals them once, into the round the blinds opened).

    >>> from poker.engine.cards import parse_cards
    >>> state = first_state(setup=None, stacks=(5, 7), round=Round())
    >>> hole = (parse_cards("As Kd"), parse_cards("7c 7d"))
    >>> hole_cards(state, hole=hole, up=((), ()), deck_position=4) == state.changed(
    ...     hole=hole, up=((), ()), deck_position=4
    ... )
    True
    """
    fields = list(state)
    fields[_HOLE] = hole
    fields[_UP] = up
    fields[_DECK_POSITION] = deck_position
    return _new(HandState, fields)


def board_street(
    state: HandState,
    *,
    street: int,
    round: Round,
    board: tuple[Card, ...],
    deck_position: int,
) -> HandState:
    """A new street opened by its community cards (the flop, turn and river of every Hold'em
    hand): ``changed(street=..., bets=zeros, acted=NOBODY each, round=..., to_act=NOBODY,
    phase=BETTING, board=..., deck_position=...)``."""
    players = len(state.stacks)
    fields = list(state)
    fields[_STREET] = street
    fields[_BETS] = (0,) * players
    fields[_ACTED] = (NOBODY,) * players
    fields[_ROUND] = round
    fields[_TO_ACT] = NOBODY
    fields[_PHASE] = BETTING
    fields[_BOARD] = board
    fields[_DECK_POSITION] = deck_position
    return _new(HandState, fields)


def first_state(*, setup: HandSetup, stacks: tuple[int, ...], round: Round) -> HandState:
    """``HandState(setup=..., street=0, stacks=..., bets=zeros, contributions=zeros, folded=no
    one, acted=NOBODY each, round=..., to_act=NOBODY, deadline=0, hole and up empty each,
    board=(), deck_position=0, showdown=zeros, rake=0, awarded=0, ended=False)`` and the
    defaults: a hand's first state (HandStarted, once a hand; the keyword build matches 18
    names and fills 10 defaults).

    >>> first = first_state(setup=None, stacks=(5, 7), round=Round(min_increment=2))
    >>> first == HandState(
    ...     setup=None, street=0, stacks=(5, 7), bets=(0, 0), contributions=(0, 0),
    ...     folded=(False, False), acted=(NOBODY, NOBODY), round=Round(min_increment=2),
    ...     to_act=NOBODY, deadline=0, hole=((), ()), up=((), ()), board=(), deck_position=0,
    ...     showdown=(0, 0), rake=0, awarded=0, ended=False,
    ... )
    True
    """
    count = len(stacks)
    zeros = (0,) * count
    nothing = ((),) * count
    return _new(
        HandState,
        (
            setup,
            0,
            stacks,
            zeros,
            zeros,
            (False,) * count,
            (NOBODY,) * count,
            round,
            NOBODY,
            0,
            nothing,
            nothing,
            (),
            0,
            zeros,
            0,
            0,
            False,
            *_FIRST_DEFAULTS,
        ),
    )


# --- memos ----------------------------------------------------------------------------------------

KeyT = TypeVar("KeyT")
ValueT = TypeVar("ValueT")


class LastMemo(Generic[KeyT, ValueT]):
    """``compute(key)``, remembered for the very last ``key`` object (held, so its identity
    cannot pass to another object while remembered; compared with ``is``, never by ``id()``).

    For :func:`poker.engine.hand.limits.betting_limits`: a client reads the limits through
    ``legal_actions`` and ``decide`` verifies against them on the same immutable state.
    Measured (CPython 3.11, this 2-core machine, min of 7 x 20,000): computing the limits of a
    6-max Hold'em state 1,250 ns, a hit 75 ns; one hit per action in ``bench hand``
    (``legal_actions`` then ``execute``), ~10 us of a ~450 us hand (~2 %: below the noise of
    whole-hand runs, where with and without alternated in one process gave medians 0.92-0.97
    of each other). Kept for the per-call saving, and being one slot it cannot grow.

    >>> memo = LastMemo(len)
    >>> key = (1, 2, 3)
    >>> memo(key), memo(key)
    (3, 3)
    """

    __slots__ = ("_compute", "_key", "_value")

    def __init__(self, compute: Callable[[KeyT], ValueT]) -> None:
        self._compute = compute
        self._key: object = _NOTHING
        self._value: ValueT | None = None

    def __call__(self, key: KeyT) -> ValueT:
        if key is self._key:
            return self._value  # type: ignore[return-value]
        value = self._compute(key)  # raises for a bad key: nothing is remembered
        self._key, self._value = key, value
        return value


_NOTHING: Final = object()

#: ``compute(key)`` remembered by the key's value (up to 256 keys, least recently used
#: dropped): derived data of a table's :class:`~poker.engine.hand.commands.HandConfig` (or a
#: hand's setup) that every hand asks for again. Replaces a memo keyed by ``id()``. Measured in
#: ``bench hand`` (6-max NL Hold'em, variants alternated batch by batch in one process, 15
#: rounds, median time per hand against the id-keyed memo): computing each time instead cost
#: +2 % (``_fresh_rounds``) to +8 % (``started_config_bytes``, ``_verify_config_once``) and
#: +30 % (``table_game``); this by-value cache was within the noise of the id-keyed one
#: (1.00-1.02 for ``table_game``, ``forced_chips``, ``_fresh_rounds``). Its cost over identity
#: is the key's hash: 1.1 us for a HandConfig (four lookups a hand, <1 % of a hand), 3 us for a
#: setup (``forced_chips``: dead money and protection only, not a hand's usual path).
remembered: Final = lru_cache(maxsize=256)
