"""A bot that plays whatever the table offers: the policy of pokerctl's bots and of the tests."""

from __future__ import annotations

import random

from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb


def choose_action(view: dpb.TableView, rng: random.Random | None = None) -> tuple[int, int]:
    """A bot's move from the actions on offer: mostly check, call or bring in, sometimes the
    smallest bet, raise or completion (15 %), sometimes a fold instead of a call (7 %)."""
    options = {option.action: option for option in view.hand.legal_actions}
    roll = rng.random() if rng is not None else 0.5
    wager = next((options[kind] for kind in _WAGERS if kind in options), None)
    if rng is not None and wager is not None and roll < 0.15:
        return wager.action, wager.min_amount
    if rng is not None and dpb.ACTION_KIND_CALL in options and roll > 0.93:
        return dpb.ACTION_KIND_FOLD, 0
    for passive in _PASSIVE:
        if passive in options:
            return passive, options[passive].min_amount
    if wager is not None:  # a bring-in player who may only complete or bet
        return wager.action, wager.min_amount
    return dpb.ACTION_KIND_FOLD, 0


async def play_turn(client: Client, view: dpb.TableView, rng: random.Random | None = None) -> str:
    """The bot in the seat to act (``client``) takes its turn, whatever the turn is: a draw
    (it throws away its lowest cards, up to two, if ``view`` shows them - its own view - else it
    stands pat), the split offer (it agrees half the time with ``rng``, refuses without), or
    a betting decision (:func:`choose_action`). Returns what it did, for logs."""
    hand = view.hand
    if hand.turn == pb.TURN_KIND_DRAW:
        mine = next((s.cards for s in view.seats if s.seat == hand.seat_to_act), "")
        cards = [mine[i : i + 2] for i in range(0, len(mine), 2)]
        count = min(hand.draw.max_discard, 2, rng.randrange(3) if rng is not None else 1)
        discards = "".join(sorted(cards, key=_rank_order)[:count])
        await client.draw(view.table_id, hand.hand_id, discards)
        return f"draws {len(discards) // 2}"
    if hand.turn == pb.TURN_KIND_SPLIT_OFFER and not (hand.split_offer.may_bet and rng is None):
        split = rng is not None and rng.random() < 0.5
        await client.agree_split(view.table_id, hand.hand_id, split)
        return "splits" if split else "refuses the split"
    action, amount = choose_action(view, rng)
    await client.act(view.table_id, hand.hand_id, action, amount)
    name = dpb.ActionKind.Name(action).removeprefix("ACTION_KIND_").lower()  # type: ignore[arg-type]
    return f"{name} {amount or ''}".rstrip()


def _rank_order(card: str) -> int:
    return "23456789TJQKA".find(card[:1])


_WAGERS = (dpb.ACTION_KIND_RAISE, dpb.ACTION_KIND_BET, dpb.ACTION_KIND_COMPLETE)
_PASSIVE = (dpb.ACTION_KIND_CHECK, dpb.ACTION_KIND_CALL, dpb.ACTION_KIND_BRING_IN)
