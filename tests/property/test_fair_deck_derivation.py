"""The fair deck's derivation (poker/engine/fairness.py): always a permutation of the game's
deck, the same for the same inputs, and another for another player's seed or another hand."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from poker.engine import fairness
from poker.engine.cards import DECK_32, DECK_52

server_seeds = st.binary(min_size=32, max_size=32)
player_seeds = st.dictionaries(
    st.integers(1, 10), st.binary(min_size=1, max_size=fairness.MAX_PLAYER_SEED_BYTES), max_size=10
).map(lambda seeds: tuple(sorted(seeds.items())))
hand_ids = st.text(min_size=1, max_size=40)
decks = st.sampled_from([DECK_52, DECK_32])


@given(decks, server_seeds, player_seeds, hand_ids)
def test_the_deck_is_a_permutation_and_deterministic(
    deck: tuple[object, ...], seed: bytes, seeds: tuple[fairness.PlayerSeed, ...], hand_id: str
) -> None:
    derived = fairness.derive_deck(deck, seed, seeds, hand_id)
    assert sorted(derived) == sorted(deck)  # type: ignore[type-var]
    assert derived == fairness.derive_deck(deck, seed, seeds[::-1], hand_id)  # seat order
    reshuffle = fairness.derive_reshuffle(deck, seed, seeds, hand_id, street=1, seat=3)
    assert sorted(reshuffle) == sorted(deck)  # type: ignore[type-var]


@given(server_seeds, player_seeds, hand_ids, st.binary(min_size=1, max_size=8))
def test_a_players_seed_changes_the_deck(
    seed: bytes, seeds: tuple[fairness.PlayerSeed, ...], hand_id: str, extra: bytes
) -> None:
    mine = dict(seeds)
    mine[1] = mine.get(1, b"") + extra  # seat 1's seed differs
    other = tuple(sorted(mine.items()))
    assert fairness.derive_deck(DECK_52, seed, seeds, hand_id) != fairness.derive_deck(
        DECK_52, seed, other, hand_id
    )
    assert fairness.derive_deck(DECK_52, seed, seeds, hand_id) != fairness.derive_deck(
        DECK_52, seed, seeds, hand_id + "x"
    )


@given(st.integers(2, 60), st.binary(min_size=32, max_size=32))
def test_fisher_yates_is_a_permutation_of_any_length(size: int, key: bytes) -> None:
    items = list(range(size))
    assert sorted(fairness.shuffle(items, key, b"deck")) == items
