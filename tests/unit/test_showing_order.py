"""Bring-in and first actor in the stud-type games (RULES.md §3.8, §3.9; A1, A3, A4, A21, A24,
A32; vectors F1-F8 of §9.7)."""

from __future__ import annotations

import pytest

from poker.engine.cards import Card, parse_card, parse_cards
from poker.engine.evaluation.showing import SHOWING_GAMES, bring_in_seat, first_to_act


def doors(*cards: str) -> dict[int, Card]:
    """Door cards by seat 1, 2, 3, ... as the tests write them."""
    return {seat: parse_card(card) for seat, card in enumerate(cards, start=1)}


def boards(*hands: str) -> dict[int, tuple[Card, ...]]:
    """Upcards by seat 1, 2, 3, ..."""
    return {seat: parse_cards(hand) for seat, hand in enumerate(hands, start=1)}


# --- §3.9: bring-in ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "door_cards", "seat"),
    [
        # 7 Card Stud and Stud Hi/Lo: the lowest door card, ace high, clubs lowest [A1, A32].
        pytest.param("seven-card-stud", ("2c", "2d", "Ks"), 1, id="F1-stud-deuce-of-clubs"),
        pytest.param("seven-card-stud", ("2s", "3c"), 1, id="F2-stud-rank-before-suit"),
        pytest.param("seven-card-stud", ("Ac", "2d"), 2, id="F3-stud-ace-is-high"),
        pytest.param("seven-card-stud", ("7s", "7h", "7d", "7c"), 4, id="stud-clubs-lowest"),
        pytest.param("seven-card-stud", ("7s", "7h", "7d"), 3, id="stud-diamonds-below-hearts"),
        pytest.param("seven-card-stud", ("7s", "7h"), 2, id="stud-hearts-below-spades"),
        pytest.param("seven-card-stud-hi-lo", ("2c", "2d", "Ks"), 1, id="hi-lo-as-stud"),
        pytest.param("seven-card-stud-hi-lo", ("Ac", "Kd", "Ah"), 2, id="hi-lo-ace-high"),
        # Soko and Americana: the highest, spades highest.
        pytest.param("soko", ("As", "Ah", "Kd"), 1, id="F4-soko-ace-of-spades"),
        pytest.param("soko", ("Kc", "Kd", "Kh"), 3, id="soko-hearts-above-diamonds"),
        pytest.param("soko", ("2s", "3c"), 2, id="soko-rank-before-suit"),
        pytest.param("americana", ("Kd", "Kc"), 1, id="F5-americana-diamonds-above-clubs"),
        pytest.param("americana", ("Qh", "Qs", "Jc"), 2, id="americana-spades-highest"),
        # Telesina: the highest, hearts > diamonds > clubs > spades.
        pytest.param("telesina", ("As", "Ah"), 2, id="F6-telesina-ace-of-hearts"),
        pytest.param("telesina", ("Ks", "Kc"), 2, id="telesina-clubs-above-spades"),
        pytest.param("telesina", ("Jc", "Jd"), 2, id="telesina-diamonds-above-clubs"),
        pytest.param("telesina", ("7h", "8s"), 2, id="telesina-rank-before-suit"),
    ],
)
def test_bring_in(game: str, door_cards: tuple[str, ...], seat: int) -> None:
    assert bring_in_seat(game, doors(*door_cards)) == seat


def test_bring_in_seats_are_any_ints() -> None:
    assert bring_in_seat("soko", {7: parse_card("Qd"), 0: parse_card("Qs")}) == 0


def test_bring_in_suit_order_is_a_table_parameter() -> None:
    """``bring_in_suit_order`` [A1]: e.g. seed 001's clubs-first order."""
    cards = {1: parse_card("7c"), 2: parse_card("7s")}
    assert bring_in_seat("seven-card-stud", cards) == 1
    assert bring_in_seat("seven-card-stud", cards, suit_order="chds") == 2


# --- §3.8: first to act on later rounds ----------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "upcards", "dealer", "seat"),
    [
        pytest.param("seven-card-stud", ("9c 9d", "Ah Kd"), 0, 1, id="F7-stud-pair-acts-first"),
        pytest.param("seven-card-stud", ("Qh Qd", "Ks Kc"), 0, 2, id="stud-higher-pair"),
        pytest.param("seven-card-stud", ("Ah Qd", "As Kc"), 0, 2, id="stud-second-card-decides"),
        pytest.param(
            "seven-card-stud", ("5h 6h 7h 8h", "2s 2c 9d 4h"), 0, 2, id="stud-no-flush-draws"
        ),
        pytest.param(
            "seven-card-stud", ("5h 6d 7c 8s", "2s 2c 9d 4h"), 0, 2, id="stud-no-straights"
        ),
        pytest.param("seven-card-stud", ("Jh Js 4c 4d", "Ah As Kc 3d"), 0, 1, id="stud-two-pair"),
        pytest.param("seven-card-stud", ("3h 3s 3c 2d", "Ah As Kc Kd"), 0, 1, id="stud-trips"),
        pytest.param("seven-card-stud", ("3h 3s 3c 3d", "Ah As Ac Kd"), 0, 1, id="stud-quads"),
        pytest.param("seven-card-stud-hi-lo", ("Kh Kd", "3s 2c"), 0, 1, id="hi-lo-high-hand-first"),
        pytest.param("americana", ("Th Td 8c 7c", "Ah Kh Qh Jh"), 0, 1, id="americana-pair-first"),
        pytest.param("americana", ("Ah Kd 9c", "Ac Kh Jd"), 0, 2, id="americana-third-card"),
        pytest.param("soko", ("Ah 9h 6h 2h", "Ks Kd Qc 3d"), 0, 1, id="soko-four-flush-beats-pair"),
        pytest.param(
            "soko", ("5c 6d 7h 8s", "Ks Kd Qc 3d"), 0, 1, id="soko-four-straight-beats-pair"
        ),
        pytest.param("soko", ("Ah 9h 6h 2h", "9c Td Js Qc"), 0, 1, id="soko-flush-over-straight"),
        pytest.param(
            "soko", ("3c 3d 2c 2s", "Ah Kh Qh 9h"), 0, 1, id="soko-two-pair-over-four-flush"
        ),
        pytest.param("soko", ("Ah 2d 3s 4c", "2h 3d 4s 5c"), 0, 2, id="soko-ace-low-run-is-lowest"),
        pytest.param(
            "soko", ("5h 6h 7h 8h", "9c Td Js Qc"), 0, 1, id="soko-suited-run-is-four-flush"
        ),
        pytest.param("soko", ("Ah Kd 9c", "Ac Kh Jd"), 0, 2, id="soko-three-cards-ranks"),
        pytest.param("soko", ("Ah 9h 6h", "Ks Kd 3c"), 0, 2, id="soko-three-suited-cards-no-flush"),
        # Telesina: its own suits decide [A21].
        pytest.param("telesina", ("Ad Kh", "Ah Kd"), 0, 2, id="telesina-ace-of-hearts"),
        pytest.param("telesina", ("Ah Qd", "Ad Kc"), 0, 1, id="telesina-card-by-card"),
        pytest.param("telesina", ("Kh Kc 9d", "Kd Ks 9h"), 0, 2, id="telesina-kicker-suit-first"),
        pytest.param(
            "telesina", ("Kh Kc Qh Qc", "Kd Ks Qd Qs"), 0, 1, id="telesina-two-pair-suits"
        ),
        pytest.param("telesina", ("9h 9d", "Ac Ks"), 0, 1, id="telesina-pair-beats-high"),
    ],
)
def test_first_to_act(game: str, upcards: tuple[str, ...], dealer: int, seat: int) -> None:
    assert first_to_act(game, boards(*upcards), dealer_seat=dealer, seat_count=8) == seat


def test_F8_equal_boards_go_to_the_first_seat_clockwise_from_the_dealer() -> None:
    """Seats 6 and 2 both show A-K; the dealer position is seat 4: seat 6 comes first [A4]."""
    upcards = {6: parse_cards("Ad Kc"), 2: parse_cards("Ah Kd")}
    assert first_to_act("seven-card-stud", upcards, dealer_seat=4, seat_count=8) == 6
    assert first_to_act("seven-card-stud", upcards, dealer_seat=1, seat_count=8) == 2


@pytest.mark.parametrize(
    ("dealer", "seat"),
    [
        pytest.param(7, 8, id="next-seat"),
        pytest.param(8, 2, id="wraps-past-the-last-seat"),
        pytest.param(2, 8, id="the-dealer-seat-comes-last"),
    ],
)
def test_ties_go_clockwise_from_the_dealer_position(dealer: int, seat: int) -> None:
    upcards = {2: parse_cards("Qs 7d"), 8: parse_cards("Qh 7c")}
    for game in ("seven-card-stud", "soko", "americana"):
        assert first_to_act(game, upcards, dealer_seat=dealer, seat_count=8) == seat


def test_soko_ties_are_never_broken_by_suits() -> None:
    upcards = {1: parse_cards("Kc Qc 8c 3c"), 2: parse_cards("Kh Qh 8h 3h")}
    assert first_to_act("soko", upcards, dealer_seat=1, seat_count=8) == 2
    assert first_to_act("soko", upcards, dealer_seat=2, seat_count=8) == 1


def test_suit_tie_break_is_the_alternative_parameter() -> None:
    """``stud_board_tie_break = suit`` [A4]: the suits in the bring-in order decide."""
    upcards = {2: parse_cards("Ah Kd"), 6: parse_cards("As Kc")}
    assert first_to_act("seven-card-stud", upcards, 1, 8) == 2
    assert first_to_act("seven-card-stud", upcards, 1, 8, tie_break="suit") == 6


def test_telesina_last_round_counts_the_vela() -> None:
    """On the fifth betting round the vela joins every player's upcards [A21]."""
    upcards = {1: parse_cards("Ah Ad Kc Qs"), 2: parse_cards("Ks Qh Jh Td")}
    assert first_to_act("telesina", upcards, 0, 6) == 1  # a pair of aces against king high
    assert first_to_act("telesina", upcards, 0, 6, common=parse_cards("9c")) == 2  # a straight


def test_telesina_last_round_flush_beats_full_house() -> None:
    upcards = {1: parse_cards("Ks Kd Kc As"), 2: parse_cards("Jh 9h 8h 7h")}
    assert first_to_act("telesina", upcards, 0, 6) == 1
    assert first_to_act("telesina", upcards, 0, 6, common=parse_cards("Ah")) == 2


def test_stud_common_card_counts_for_everyone() -> None:
    """With the 7th-street common card and ``stud_common_card_betting`` on [A7]."""
    upcards = {1: parse_cards("Ks Kd 7c 2s"), 2: parse_cards("Qh Qd 7h 3s")}
    assert first_to_act("seven-card-stud", upcards, 0, 8) == 1
    assert first_to_act("seven-card-stud", upcards, 0, 8, common=parse_cards("Qs")) == 2


# --- bad input -----------------------------------------------------------------------------------


def test_unknown_game() -> None:
    with pytest.raises(ValueError, match="'holdem' is not a stud-type game; the stud-type games"):
        bring_in_seat("holdem", {1: parse_card("As")})
    assert "telesina" in SHOWING_GAMES


@pytest.mark.parametrize(
    ("game", "door_cards", "message"),
    [
        pytest.param(
            "telesina", {1: "As", 2: "2h"}, "2h is not in the 32-card deck.", id="deuce-in-telesina"
        ),
        pytest.param(
            "soko", {1: "As", 2: "As"}, "The same card appears more than once: As.", id="duplicate"
        ),
        pytest.param(
            "soko", {}, "The bring-in needs at least one player's door card.", id="nobody"
        ),
    ],
)
def test_bring_in_bad_input(game: str, door_cards: dict[int, str], message: str) -> None:
    cards = {seat: parse_card(card) for seat, card in door_cards.items()}
    with pytest.raises(ValueError) as error:
        bring_in_seat(game, cards)
    assert str(error.value) == message


def test_bring_in_bad_suit_order() -> None:
    with pytest.raises(ValueError, match="is not a suit order"):
        bring_in_seat("soko", {1: parse_card("As")}, suit_order="shd")


FIRST_TO_ACT_ERRORS = [
    ("soko", {1: "As Kd", 2: "Qs"}, "", 8, "Every player shows the same number of upcards"),
    ("soko", {1: "As Kd Qd Jd Td", 2: "9s 8s 7s 6s 5s"}, "", 8, "A player shows 1 to 4 upcards"),
    ("soko", {1: "As", 2: "Ks"}, "Qs", 8, "Soko has no common card; Qs given."),
    ("telesina", {1: "As", 2: "Ks"}, "Qs Js", 6, "Telesina has one common card (the vela)"),
    ("telesina", {1: "As", 2: "Ks"}, "As", 6, "The same card appears more than once: As."),
    ("americana", {1: "As", 2: "6s"}, "", 6, "6s is not in the 32-card deck."),
    ("soko", {1: "As", 9: "Ks"}, "", 8, "Seat 9 is not on a table of 8 seats."),
    ("soko", {0: "As", 8: "Ks"}, "", 8, "Two players are given the same seat."),
    ("soko", {1: "As"}, "", 1, "A table has at least two seats; 1 were given."),
    ("soko", {}, "", 8, "The first actor needs at least one player's upcards."),
]
ERROR_IDS = [
    "uneven",
    "five-upcards",
    "common-in-soko",
    "two-velas",
    "vela-duplicate",
    "six-in-americana",
    "seat-off-table",
    "same-seat",
    "one-seat",
    "nobody",
]


@pytest.mark.parametrize(
    ("game", "upcards", "common", "seats", "message"), FIRST_TO_ACT_ERRORS, ids=ERROR_IDS
)
def test_first_to_act_bad_input(
    game: str, upcards: dict[int, str], common: str, seats: int, message: str
) -> None:
    cards = {seat: parse_cards(hand) for seat, hand in upcards.items()}
    with pytest.raises(ValueError) as error:
        first_to_act(game, cards, 0, seats, common=parse_cards(common))
    assert str(error.value).startswith(message)


def test_first_to_act_unknown_tie_break() -> None:
    with pytest.raises(ValueError, match="'chips' is not a tie-break"):
        first_to_act("soko", {1: parse_cards("As")}, 0, 8, tie_break="chips")  # type: ignore[arg-type]
