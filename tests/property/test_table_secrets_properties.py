"""The table log's secrets (:mod:`poker.tablelog.secrets`) over drawn table lives of every game.

Each life (the churn, decks, draws and voids of :mod:`tests.property.test_table_properties`)
is stored the way the dealer stores it: one batch per command, its secrets sealed to the deck
key. Then:

- the stored bytes hold no deck, no seed and no down card in clear;
- a reader holding the key (a dealer's rebuild) folds them back into exactly the live table;
- a reader without it (the wallet) folds them into the live table *less its secrets*: every
  stack, bet, contribution, pot, fold, turn, showdown mark and payout the same, after every
  batch (what moving money needs), and the same from a log written before the encryption
  (secrets in clear, dropped by :func:`~poker.tablelog.secrets.strip_batch`).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from poker.engine.table import TableState
from poker.engine.table.evolve import Fold
from poker.tablelog.secrets import DeckKeys, strip_batch, take_secrets
from poker.v1 import events_pb2 as pb
from tests.drawn import Choices
from tests.property.test_table_properties import CONFIGS, HANDS, Run, TableLife

KEYS = DeckKeys.generate("deck-prop")


def public(state: TableState | None) -> TableState | None:
    """``state`` without what only the deck key reads: the deck, the seeds, the down cards
    (a player's hand is his upcards), the discards, the stub and where the deck stands."""
    if state is None:
        return None
    hand = state.hand
    if hand is not None:
        setup = hand.setup._replace(deck="", server_seed=b"")
        hand = hand._replace(setup=setup, hole=hand.up, deck_position=0, discarded=(), stub="")
    return state._replace(next_seed=b"", hand=hand)


def secrets_of(events: list[pb.TableEvent]) -> list[bytes]:
    """Every secret value of ``events`` worth searching for in bytes (4 bytes or more), but
    those some public card string holds (a board, an upcard, a hand shown: a pair of down
    cards of one hand may well be on the board of another)."""
    shown = [e.hand_shown.cards.encode() for e in events if e.HasField("hand_shown")]
    shown += [e.board_dealt.cards.encode() for e in events if e.HasField("board_dealt")]
    shown += [
        hand.up.encode()
        for e in events
        if e.HasField("hole_cards_dealt")
        for hand in e.hole_cards_dealt.hands
    ]
    batch = pb.TableEventBatch(events=events)
    taken = take_secrets(batch)
    return [
        value
        for entry in taken.events
        for value in entry.values
        if len(value) >= 4 and not any(value in cards for cards in shown)
    ]


def stored(run: Run) -> list[tuple[bytes, TableState]]:
    """Each command's batch as the dealer stores it, with the live table after it."""
    batches = []
    start = 0
    for number, (end, live) in enumerate(run.batches):
        batch = pb.TableEventBatch(command_id=f"c{number}", events=run.wire[start:end])
        KEYS.seal_batch("t-1", batch)
        batches.append((batch.SerializeToString(), live))
        start = end
    return batches


@st.composite
def played(draw: st.DrawFn, config_name: str) -> Run:
    """A drawn life of the table (up to a fifth of the longest life of the table properties)."""
    choices = Choices(draw)
    run = Run(choices, CONFIGS[config_name](), TableLife(config_name))
    for _ in range(min(HANDS // 5, choices.number(1, 2 * HANDS))):
        run.between_hands()
        run.play_hand()
    return run


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
def test_the_wallet_folds_every_game_without_its_secrets(config_name: str) -> None:
    # No shrinking: a table life shrinks for minutes (the failing life prints as it is).
    @settings(
        max_examples=4,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(run=played(config_name))
    def every_life(run: Run) -> None:
        batches = stored(run)
        everything = b"".join(data for data, _ in batches)
        for secret in secrets_of(run.wire):
            assert secret not in everything
        dealer, wallet, legacy = Fold(None), Fold(None), Fold(None)
        start = 0
        for number, (stored_bytes, live) in enumerate(batches):
            opened = KEYS.open_batch("t-1", pb.TableEventBatch.FromString(stored_bytes))
            dealer.add(opened.events)
            wallet.add(strip_batch(pb.TableEventBatch.FromString(stored_bytes)).events)
            end = run.batches[number][0]
            clear = pb.TableEventBatch(events=run.wire[start:end])
            legacy.add(strip_batch(pb.TableEventBatch.FromString(clear.SerializeToString())).events)
            start = end
            assert public(wallet.state) == public(live)
        assert dealer.state == run.table
        assert legacy.state == wallet.state

    every_life()
