"""Every game's hands folded without their secrets (poker/tablelog/secrets.py): the wallet's
fold of a hand whose deck, seeds, down cards, draws and stub were sealed away is the dealer's
hand less exactly those, after every command - every stack, bet, contribution, fold, turn,
showdown mark, rake and payout the same - in all 13 games (hands drawn by
:mod:`tests.property.test_hand_properties`, time-outs, stud common cards, reshuffles and split
offers included); and the key holder's fold of the sealed hand is the dealer's hand itself."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from poker.engine.betting import Structure
from poker.engine.games import GAMES
from poker.engine.hand import HandState, execute, replay
from poker.engine.hand.events import HandEvent
from poker.tablelog.secrets import DeckKeys, strip_batch
from poker.v1 import events_pb2 as pb
from tests.property.test_hand_properties import PlayedHand, played_hands

KEYS = DeckKeys.generate("deck-hand-prop")
_BODY = {
    type(getattr(pb.TableEvent(), field.name)): field.name
    for field in pb.TableEvent.DESCRIPTOR.oneofs_by_name["body"].fields
}


def wrapped(events: list[HandEvent], first: int) -> list[pb.TableEvent]:
    """``events`` as the table log's envelopes, versions from ``first``."""
    out = []
    for offset, event in enumerate(events):
        envelope = pb.TableEvent(table_id="t", version=first + offset, hand_id="h")
        getattr(envelope, _BODY[type(event)]).CopyFrom(event)
        out.append(envelope)
    return out


def public(hand: HandState) -> HandState:
    """``hand`` without what only the deck key reads (a player's hand is his upcards)."""
    setup = hand.setup._replace(deck="", server_seed=b"")
    return hand._replace(setup=setup, hole=hand.up, deck_position=0, discarded=(), stub="")


def check(hand: PlayedHand) -> None:
    """Seal each command's batch as the dealer stores it; fold it with and without the key."""
    assert hand.failure is None and hand.start is not None, hand
    state, events = execute(None, hand.start)
    batches = [wrapped(events, 1)]
    lives = [state]
    for command in hand.commands:
        state, new = execute(state, command)
        batches.append(wrapped(new, sum(map(len, batches)) + 1))
        lives.append(state)
    dealer: list[pb.TableEvent] = []
    wallet: list[pb.TableEvent] = []
    for number, (events_, live) in enumerate(zip(batches, lives, strict=True)):
        batch = pb.TableEventBatch(command_id=f"c{number}", events=events_)
        KEYS.seal_batch("t", batch)
        stored = batch.SerializeToString()
        wallet += strip_batch(pb.TableEventBatch.FromString(stored)).events
        dealer += KEYS.open_batch("t", pb.TableEventBatch.FromString(stored)).events
        if wallet:
            assert public(replay(wallet)) == public(live)
    assert replay(dealer) == state


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_game_folds_without_its_secrets(game: str) -> None:
    structure = Structure.FIXED_LIMIT

    @settings(
        max_examples=12,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a hand's shrink is slow
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(hand=played_hands(game, structure))
    def every_hand(hand: PlayedHand) -> None:
        check(hand)

    every_hand()
