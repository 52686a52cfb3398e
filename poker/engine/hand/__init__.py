"""The pure hand state machine: decide, evolve, replay and legal actions.

Modules: ``commands`` (StartHand, Act, TimeOut, Draw, AgreeSplit and the hand configuration),
``errors`` (one rule error per broken rule), ``state`` (the immutable HandState), ``rules``
(``verify_*`` and the betting limits), ``legal`` (legal_actions), ``decide`` (decide / execute
and the generic street walk), ``evolve`` (evolve / replay), ``pots`` (side pots, splits, odd
chips), ``rake``, ``codec`` (configuration and cards on the wire), ``events`` (the envelope),
``draws`` (draw games: the draw, the reshuffle, 32-Card Draw's split offer, and the queries
``draw_option`` and ``split_offer``); for the table (``poker.engine.table``): ``posts`` (entry and
missed-blind posts), ``protection`` (the artificial all-in) and ``void`` (cancelling an
unfinished hand). The live path is :func:`execute` (state and events together); :func:`decide`
returns only the events.

Start a hand, act, read the legal actions and replay the events:

>>> from poker.engine.betting import Stakes, Structure
>>> from poker.engine.cards import DECK_52
>>> config = HandConfig("holdem", Structure.NO_LIMIT, Stakes(small_blind=1, big_blind=2))
>>> start = StartHand("hand-1", config, (SeatStack(1, 100), SeatStack(2, 100)), button=1,
...                   deck=DECK_52, now=0)
>>> state, events = execute(None, start)
>>> state.seat_to_act, [(a.action.value, a.min_amount, a.max_amount) for a in legal_actions(state)]
(1, [('fold', 0, 0), ('call', 1, 1), ('raise', 4, 100)])
>>> state, more = execute(state, Act(seat=1, action=Action.FOLD, now=1))
>>> state.ended, state.stacks
(True, (99, 101))
>>> replay(events + more) == state
True
"""

from poker.engine.hand.commands import (
    Act,
    Action,
    AgreeSplit,
    Draw,
    ExtraPost,
    HandConfig,
    SeatStack,
    StartHand,
    TimeOut,
    VoidHand,
)
from poker.engine.hand.decide import decide, execute
from poker.engine.hand.draws import DrawOption, SplitOffer, draw_option, split_offer
from poker.engine.hand.errors import HandRuleError
from poker.engine.hand.events import HandEvent, unwrap, wrap
from poker.engine.hand.evolve import evolve, replay
from poker.engine.hand.legal import LegalAction, legal_actions
from poker.engine.hand.state import HandState

__all__ = [
    "Act",
    "Action",
    "AgreeSplit",
    "Draw",
    "DrawOption",
    "ExtraPost",
    "HandConfig",
    "HandEvent",
    "HandRuleError",
    "HandState",
    "LegalAction",
    "SeatStack",
    "SplitOffer",
    "StartHand",
    "TimeOut",
    "VoidHand",
    "decide",
    "draw_option",
    "evolve",
    "execute",
    "legal_actions",
    "replay",
    "split_offer",
    "unwrap",
    "wrap",
]
