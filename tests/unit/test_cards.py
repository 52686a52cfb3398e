"""Cards and decks (RULES.md §1.3, §0.3 notation)."""

from __future__ import annotations

import pickle
import re

import pytest

from poker.engine.cards import (
    ACE,
    DECK_32,
    DECK_52,
    SEVEN,
    card_from_index,
    format_cards,
    make_card,
    parse_card,
    parse_cards,
    verify_distinct,
    verify_in_deck,
)


def test_deck_52_has_every_rank_in_every_suit_once() -> None:
    assert len(DECK_52) == len(set(DECK_52)) == 52
    assert {(card.rank, card.suit) for card in DECK_52} == {
        (rank, suit) for rank in range(2, 15) for suit in range(4)
    }


def test_deck_32_is_ace_down_to_seven_in_four_suits() -> None:
    assert len(DECK_32) == len(set(DECK_32)) == 32
    assert {card.rank for card in DECK_32} == set(range(SEVEN, ACE + 1))
    assert format_cards(sorted(DECK_32)[:4]) == "7s 7h 7d 7c"


def test_text_form_round_trips_for_every_card() -> None:
    for card in DECK_52:
        assert parse_card(str(card)) is card


def test_ten_may_be_written_as_10_or_t() -> None:
    assert parse_cards("10h Th 10s") == (make_card(10, 1), make_card(10, 1), make_card(10, 0))


def test_parse_cards_accepts_spaces_commas_and_runs() -> None:
    assert format_cards(parse_cards(" as,KD  10cQh ")) == "As Kd Tc Qh"


def test_parse_cards_of_empty_text_is_empty() -> None:
    assert parse_cards("") == ()


@pytest.mark.parametrize("token", ["Ax", "1s", "As1", "ZZ", "10", "", "11h"])
def test_bad_token_raises_value_error_naming_it(token: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(token))):
        parse_card(token)


def test_bad_token_inside_a_list_is_named() -> None:
    with pytest.raises(ValueError, match="'Xs' is not a card"):
        parse_cards("As Xs Kd")


def test_cards_are_interned_and_pickle_to_the_same_card() -> None:
    card = parse_card("Qd")
    assert card_from_index(int(card)) is card
    assert pickle.loads(pickle.dumps(card)) is card


def test_card_index_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError, match="52 is not a card index"):
        card_from_index(52)


def test_verify_distinct_names_the_repeated_card() -> None:
    with pytest.raises(ValueError, match="more than once: As"):
        verify_distinct(parse_cards("As Kd As"))


def test_verify_in_deck_rejects_a_deuce_in_a_32_card_game() -> None:
    with pytest.raises(ValueError, match="2c is not in the 32-card deck"):
        verify_in_deck(parse_cards("As 2c"), DECK_32, "32-card")
