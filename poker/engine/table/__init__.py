"""The table aggregate: everything that happens between hands and across them.

``decide(table, command) -> events`` and ``evolve(table, event) -> table``, like the hand
machine; a table's hands are part of its event stream, so one fold of one log rebuilds the whole
table, the hand in progress included. Modules: ``config`` (TableConfig and the room's defaults),
``commands``, ``errors``, ``state`` (TableState, Seat), ``plan`` (who is dealt in, button,
blinds, entry and missed-blind posts), ``rules`` (``verify_*``), ``decide``, ``evolve``,
``events`` (envelopes), ``queries`` (what clients are shown).

A table of two, one hand:

>>> from poker.engine.betting import Stakes, Structure
>>> from poker.engine.cards import DECK_52
>>> config = make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2))
>>> table, _ = execute(None, CreateTable(config, now=0))
>>> table, _ = execute(table, SitDown(1, "ann", 100, "hold-1", now=1))
>>> table, _ = execute(table, SitDown(2, "bob", 100, "hold-2", now=2))
>>> table.next_hand_at  # the gathering delay (the pause, 3 s): others may still sit down
3002
>>> table, events = execute(table, StartNextHand("h1", DECK_52, now=3002))
>>> [(view.seat, view.stack, view.status.value) for view in seat_views(table)]
[(1, 99, 'in hand'), (2, 98, 'in hand')]
>>> [option.action.value for option in legal_actions(table, 1)]
['fold', 'call', 'raise']
>>> table, more = execute(table, Act(1, "ann", Action.FOLD, now=3003))
>>> [(seat.player_id, seat.stack) for seat in table.seats if seat]
[('ann', 99), ('bob', 101)]
>>> table, closing = execute(table, CloseTable(now=3004))
>>> [(event.player_id, event.amount) for event in closing[:-1]]
[('ann', 99), ('bob', 101)]
"""

from poker.engine.hand.commands import Action
from poker.engine.table.commands import (
    Act,
    AgreeSplit,
    CloseTable,
    Command,
    CommitSeed,
    CreateTable,
    Draw,
    RecordTakeover,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TimeOut,
    TopUp,
    VoidHand,
)
from poker.engine.table.config import (
    BringInRule,
    ButtonRule,
    DealerMode,
    MissedBlindsPolicy,
    TableConfig,
    default_buy_ins,
    make_config,
)
from poker.engine.table.decide import decide, execute
from poker.engine.table.errors import TableRuleError
from poker.engine.table.events import TableEventBody, envelopes
from poker.engine.table.evolve import evolve, replay
from poker.engine.table.plan import Plan
from poker.engine.table.queries import (
    SeatStatus,
    SeatView,
    draw_option,
    legal_actions,
    next_hand,
    seat_views,
    split_offer,
    who_can_play,
)
from poker.engine.table.rules import buy_in_range, protection_uses_left
from poker.engine.table.state import Seat, TableState, chips_on_table, live_stack

__all__ = [
    "Act",
    "Action",
    "AgreeSplit",
    "BringInRule",
    "ButtonRule",
    "CloseTable",
    "Command",
    "CommitSeed",
    "CreateTable",
    "DealerMode",
    "Draw",
    "MissedBlindsPolicy",
    "Plan",
    "RecordTakeover",
    "Seat",
    "SeatStatus",
    "SeatView",
    "SitDown",
    "SitIn",
    "SitOut",
    "StandUp",
    "StartNextHand",
    "TableConfig",
    "TableEventBody",
    "TableRuleError",
    "TableState",
    "TimeOut",
    "TopUp",
    "VoidHand",
    "buy_in_range",
    "chips_on_table",
    "decide",
    "default_buy_ins",
    "draw_option",
    "envelopes",
    "evolve",
    "execute",
    "legal_actions",
    "live_stack",
    "make_config",
    "next_hand",
    "protection_uses_left",
    "replay",
    "seat_views",
    "split_offer",
    "who_can_play",
]
