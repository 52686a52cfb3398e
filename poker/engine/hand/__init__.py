"""The pure hand state machine: decide, evolve, replay and legal actions.

Modules, by rule area, each holding its ``decide`` steps, its ``verify_*`` and the handlers of
its events (one map per area): ``setup`` (StartHand's checks, HandStarted: seats, button,
the game, each street's fresh round; HandVoided), ``posts`` (forced bets: antes, blinds, the
bring-in, entry and missed-blind posts), ``dealing`` (hole and board cards, a street's first
actor), ``betting`` (Act's checks, the betting round's steps and events), ``draws`` (the draw,
the reshuffle, 32-Card Draw's split offer, and the queries ``draw_option`` and
``split_offer``), ``showdown`` (the hands, the showing order, show or muck) and ``payout``
(rake, pots to winners, odd chips, the hand's end). Around them: ``commands`` (StartHand,
Act, TimeOut, Draw, AgreeSplit and the hand configuration), ``errors`` (one rule error per
broken rule), ``state`` (the immutable HandState), ``limits`` (the betting limits),
``rules`` (the checks every command shares), ``legal`` (legal_actions), ``decide`` (decide /
execute and the generic street walk), ``evolve`` (the one dispatch table, evolve / replay),
``core`` (the engine's few measured speed tricks), ``pots`` (side pots, splits, odd chips),
``rake``, ``codec`` (configuration and cards on the wire), ``events`` (the envelope); for the
table (``poker.engine.table``): ``protection`` (the artificial all-in) and ``void``
(cancelling an unfinished hand). The live path is :func:`execute` (state and events together);
:func:`decide` returns only the events.

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
