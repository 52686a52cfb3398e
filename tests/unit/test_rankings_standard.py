"""The standard rankings against the named vectors of RULES.md §9.1, §9.2 and §9.4 (X14-X20).

Each vector is written as in the spec: hand A, hand B and the expected outcome (A wins, B wins or
a split). Hands are ranked through the public :func:`rank_hand`, so card checks run too.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from poker.engine.cards import DECK_52, parse_cards
from poker.engine.evaluation import HandValue, get_ranking, rank_hand


def value(ranking: str, hole: str, board: str = "") -> HandValue:
    """The value of a hand that must qualify under ``ranking``."""
    result = rank_hand(ranking, parse_cards(hole), parse_cards(board))
    assert result is not None, f"{hole} / {board} should make a {ranking} hand"
    return result


def outcome(first: HandValue, second: HandValue) -> str:
    """``"A"``, ``"B"`` or ``"tie"``, the spec's way of writing a comparison."""
    if first > second:
        return "A"
    return "B" if first < second else "tie"


# §9.1: (id, hand A, hand B, expected); some instances share cards, as the spec marks.
HIGH_VECTORS = [
    ("H1-higher-pair-in-full-house", "Qs Qh Qd 6s 6h", "Qs Qh Qd 5c 5d", "A"),
    ("H2-king-high-flush-beats-queen-high-flush", "Kh 7h 5h 3h 2h", "Qs Js Ts 8s 6s", "A"),
    ("H3-first-kicker-king-beats-queen", "As Ad Kc Th 6s", "Ah Ac Qd Jc 5h", "A"),
    ("H4-trips-second-kicker-queen-beats-nine", "Js Jh Jd Ac Qs", "Js Jh Jd Ah 9c", "A"),
    ("H6-pair-of-jacks-beats-pair-of-tens", "Jh Jd 9c 5s 2h", "Ts Tc Ac Kh Qd", "A"),
    ("H7-hands-differing-only-in-suits-split", "Ah Kh 9c 7d 4s", "Ad Kd 9s 7c 4h", "tie"),
    ("H8-nines-with-higher-side-card", "9s 9h Ac 7d 3s", "9d 9c Kc Qd Js", "A"),
    ("H9-two-pair-higher-fifth-card", "Ks Kh 9s 9h Qc", "Kd Kc 9d 9c Js", "A"),
    ("H10-three-kings-beat-three-nines", "Kc Kd Kh 7s 2c", "9c 9d 9h As Qs", "A"),
    ("H11-ace-high-straight-is-strongest", "As Kd Qh Jc Ts", "Kc Qd Jh Tc 9s", "A"),
    ("H12-wheel-is-weakest-straight", "6c 5d 4h 3s 2c", "5h 4s 3d 2h Ac", "A"),
    ("H13-flush-higher-top-card", "Ah 9h 7h 4h 2h", "Kd Qd Jd 9d 7d", "A"),
    ("H14-full-house-trips-compared-first", "Kc Kd Kh 2s 2c", "4c 4d 4h As Ac", "A"),
    ("H15-higher-four-of-a-kind", "9s 9h 9d 9c 2s", "7s 7h 7d 7c As", "A"),
    ("H16-straight-flush-higher-top-card", "8d 7d 6d 5d 4d", "7h 6h 5h 4h 3h", "A"),
    ("H17-royal-flushes-split", "As Ks Qs Js Ts", "Ah Kh Qh Jh Th", "tie"),
    ("H18-suits-play-no-role-in-straight-flushes", "9s 8s 7s 6s 5s", "9h 8h 7h 6h 5h", "tie"),
    ("H21-king-high-beats-queen-high-straight-flush", "Kc Qc Jc Tc 9c", "Qc Jc Tc 9c 8c", "A"),
    ("H22-four-fives-beat-four-deuces", "5s 5h 5d 5c 3s", "2s 2h 2d 2c As", "A"),
    ("H23-threes-full-beat-deuces-full-of-aces", "3s 3h 3d 4c 4s", "2s 2h 2d Ac As", "A"),
    ("H24-ace-high-flush-beats-jack-high-flush", "Ac 9c 7c 4c 2c", "Jh 9h 7h 5h 3h", "A"),
    ("H25-king-high-straight-beats-queen-high", "Kh Qs Jd Tc 9h", "Qc Jh Ts 9d 8s", "A"),
    ("H26-three-eights-beat-three-sixes", "8s 8h 8d 4c 2s", "6s 6h 6d Ac Ks", "A"),
    ("H27-trips-second-kicker-queen-beats-ten", "8s 8h 8d Kc Qs", "8s 8h 8d Kh Tc", "A"),
    ("H28-aces-up-beat-kings-up", "As Ad 2c 2h 3s", "Ks Kd Qc Qh Js", "A"),
    ("H29-two-pair-second-pair-decides", "9s 9h 8d 8c 2s", "9d 9c 5h 5s Ah", "A"),
    ("H30-two-pair-kicker-ace-beats-king", "9s 9h 5d 5c As", "9d 9c 5h 5s Kh", "A"),
    ("H31-pair-of-kings-beats-pair-of-tens", "Ks Kh 7d 4c 2s", "Ts Th Ad Qc Js", "A"),
    ("H32-kings-with-ace-beat-kings-with-queen", "Ks Kh Ad 7c 2s", "Kd Kc Qs Jh 9d", "A"),
    ("H33-pair-last-kicker-decides", "Ks Kh Ad Qc 3s", "Kd Kc Ah Qs 2d", "A"),
    ("H34-same-ranks-different-suits-split", "9s 9c 7h 5h 2c", "9d 9h 7s 5s 2h", "tie"),
    ("H35-ace-jack-high-beats-ace-ten-high", "Ah Js 4d 3c 2h", "As Tc 9h 8d 7s", "A"),
]


@pytest.mark.parametrize(
    ("hand_a", "hand_b", "expected"),
    [pytest.param(a, b, expected, id=vector_id) for vector_id, a, b, expected in HIGH_VECTORS],
)
def test_high_vectors(hand_a: str, hand_b: str, expected: str) -> None:
    assert outcome(value("high", hand_a), value("high", hand_b)) == expected


@pytest.mark.parametrize(
    ("hand", "name"),
    [
        pytest.param("6h 7h 8h 9h Th", "Straight flush, ten high", id="H5-straight-flush-ten-high"),
        pytest.param(
            "Qs Qd 9h 9c Kd", "Two pair, queens and nines, king kicker", id="H19-two-pair-q-9-k"
        ),
        pytest.param(
            "Qs Qd Qh 7c Js",
            "Three of a kind, queens, jack-seven kickers",
            id="H20-three-queens-j-7",
        ),
    ],
)
def test_high_classification_vectors(hand: str, name: str) -> None:
    assert value("high", hand).name == name


def test_H19_kicker_is_the_king() -> None:
    hand = value("high", "Qs Qd 9h 9c Kd")
    assert hand == value("high", "Qh Qc 9s 9d Kc")
    assert hand < value("high", "Qh Qc 9s 9d Ac")
    assert hand > value("high", "Qh Qc 9s 9d Jc")


def test_H20_kickers_are_jack_then_seven() -> None:
    hand = value("high", "Qs Qd Qh 7c Js")
    assert hand < value("high", "Qs Qd Qh 7c Ks")  # first kicker decides first
    assert hand > value("high", "Qs Qd Qh 6c Js")  # then the second
    assert hand < value("high", "Qs Qd Qh 8c Js")
    assert hand == value("high", "Qs Qd Qc 7d Jh")


# §9.2: the low hands, 8 or better (L1-L7) and deuce-to-seven (L8, L9).
@pytest.mark.parametrize(
    ("hand_a", "hand_b", "expected"),
    [
        pytest.param("5c 4d 3h 2s Ac", "6d 4c 3d 2h Ah", "A", id="L2-wheel-beats-six-low"),
        pytest.param("7c 6d 5h 4s 2c", "8d 6c 4d 2h Ah", "A", id="L3-seven-low-beats-eight-low"),
        pytest.param("8c 6d 4h 3s 2c", "8d 7c 4d 2h Ah", "A", id="L4-eight-six-beats-eight-seven"),
        pytest.param("5h 4h 3h 2h Ah", "5c 4d 3s 2c Ad", "tie", id="L5-suited-wheel-is-a-wheel"),
    ],
)
def test_low8_vectors(hand_a: str, hand_b: str, expected: str) -> None:
    assert outcome(value("low8", hand_a), value("low8", hand_b)) == expected


def test_L1_eight_seven_low_qualifies() -> None:
    assert value("low8", "8c 7d 3h 2s Ac").name == "8-7-3-2-A low"


def test_L2_wheel_is_the_best_low() -> None:
    wheel = value("low8", "5c 4d 3h 2s Ac")
    assert wheel.name == "5-4-3-2-A low"
    # One hand for each of the 56 possible lows (five of A, 2..8), suits mixed.
    for ranks in combinations("A2345678", 5):
        hand = " ".join(rank + suit for rank, suit in zip(ranks, "shdcs", strict=True))
        low = value("low8", hand)
        assert low < wheel or set(ranks) == set("A2345")


def test_L5_suited_wheel_is_best_low_and_a_straight_flush() -> None:
    assert value("low8", "5h 4h 3h 2h Ah").name == "5-4-3-2-A low"
    assert value("high", "5h 4h 3h 2h Ah").name == "Straight flush, five high"


@pytest.mark.parametrize(
    "hand",
    [
        pytest.param("9c 6d 4h 3s 2c", id="L6-nine-high-does-not-qualify"),
        pytest.param("8c 8d 4h 3s 2c", id="L6-paired-eight-does-not-qualify"),
    ],
)
def test_L6_non_qualifying_lows(hand: str) -> None:
    assert rank_hand("low8", parse_cards(hand)) is None


def test_L7_no_qualifying_low_means_no_low_value() -> None:
    # The pot rule (high takes all) lives with the showdown; the ranking's part is to say None.
    assert rank_hand("low8", parse_cards("Kc Qd 9h 9s 2c 3d Jh")) is None
    assert (
        rank_hand("omaha-low8", parse_cards("Ac 2d Kh Qs"), parse_cards("9c Td Jh 3s 4s")) is None
    )


@pytest.mark.parametrize(
    ("hand_a", "hand_b", "expected"),
    [
        pytest.param("7c 5d 4h 3s 2c", "7d 6c 4d 3h 2s", "A", id="L8-seven-five-is-the-best-2-7"),
        pytest.param("Ac 5d 4h 3s 2c", "Kc Qd Jh 9s 8c", "B", id="L9-A-5-4-3-2-is-ace-high"),
        pytest.param("Ac 5d 4h 3s 2c", "3c 3d 7h 5s 2h", "A", id="L9-A-5-4-3-2-beats-a-pair"),
        pytest.param("Ac 5d 4h 3s 2c", "6d 5c 4s 3h 2d", "A", id="X14-ace-high-beats-straight"),
        pytest.param("Kc Qd Jh Ts 8c", "Ac 5d 4h 3s 2c", "A", id="X15-king-high-beats-ace-high"),
        pytest.param("8c 7d 6h 5s 3c", "7h 5h 4h 3h 2h", "A", id="X16-flush-counts-against"),
        pytest.param("Ac Kd Qh Js 9c", "2c 2d 3h 4s 5c", "A", id="X17-any-no-pair-beats-a-pair"),
    ],
)
def test_deuce_seven_vectors(hand_a: str, hand_b: str, expected: str) -> None:
    assert outcome(value("deuce-seven", hand_a), value("deuce-seven", hand_b)) == expected


def test_L9_A_5_4_3_2_is_ace_high_no_pair() -> None:
    assert value("deuce-seven", "Ac 5d 4h 3s 2c").name == "A-5-4-3-2 (ace low)"


def test_X18_omaha_uses_exactly_two_hole_and_three_board_cards() -> None:
    hand = value("omaha-high", "Qs Jh Th 3c", "As Ks 7s 2s 9d")
    assert hand.name == "High card, ace-king-queen-jack-nine"
    # No flush (one spade in hand), no straight (it would need three hole cards): A-K-Q-J-9.
    assert hand.strength == value("high", "Ac Kd Qh Js 9c").strength


def test_X19_omaha_hi_lo_high_and_low_chosen_independently() -> None:
    hole, board = "Ah 2d Ks Kd", "3c 5s 8h Kh 9c"
    high = value("omaha-high", hole, board)
    assert high.name == "Three of a kind, kings, nine-eight kickers"
    assert high.strength == value("high", "Ks Kd Kh 9c 8h").strength
    low = value("omaha-low8", hole, board)
    assert low.name == "8-5-3-2-A low"
    assert low.strength == value("low8", "Ah 2d 3c 5s 8h").strength


def test_omaha_full_house_beats_the_flush_it_could_also_make() -> None:
    # Kh-less hole: 2h 3h + 7h 9h Jh is a flush, but Ks Kd + Kc 7h 7d is kings full.
    assert (
        value("omaha-high", "Ks Kd 2h 3h", "Kc 7h 7d 9h Jh").name == "Full house, kings over sevens"
    )
    assert (
        value("omaha-high", "As Qd 2h 3h", "Kc 7h 7d 9h Jh").name
        == "Flush, jack-nine-seven-three-deuce"
    )


def test_X20_two_low_board_cards_allow_no_omaha_low() -> None:
    board = parse_cards("2c 5d 9h Kd Qs")
    rest = [card for card in DECK_52 if card not in board]
    ranking = get_ranking("omaha-low8")
    assert all(ranking.evaluate(hole, board) is None for hole in combinations(rest, 4))


@pytest.mark.parametrize(
    ("ranking", "hand", "name"),
    [
        ("high", "As Ks Qs Js Ts", "Royal flush"),
        ("high", "6h 7h 8h 9h Th", "Straight flush, ten high"),
        ("high", "9s 9h 9d 9c 2s", "Four of a kind, nines, deuce kicker"),
        ("high", "9s 9h 9d 9c Ks 2d 3d", "Four of a kind, nines, king kicker"),
        ("high", "Kh Kd 5c 5s Kc", "Full house, kings over fives"),
        ("high", "6s 6h 6d 2c 2d", "Full house, sixes over deuces"),
        ("high", "Kh 7h 5h 3h 2h", "Flush, king-seven-five-three-deuce"),
        ("high", "Kh Jh 9h 7h 3h", "Flush, king-jack-nine-seven-three"),
        ("high", "5h 4s 3d 2h Ac", "Straight, five high"),
        ("high", "Qs Qd Qh 7c Js", "Three of a kind, queens, jack-seven kickers"),
        ("high", "Qs Qd 9h 9c Kd", "Two pair, queens and nines, king kicker"),
        ("high", "Jh Jd 9c 5s 2h", "One pair, jacks, nine-five-deuce kickers"),
        ("high", "Jh Jd 9c 4s Ah", "One pair, jacks, ace-nine-four kickers"),
        ("high", "Ah Js 4d 3c 2h", "High card, ace-jack-four-three-deuce"),
        ("high", "Ah Qs 9d 5c 3h", "High card, ace-queen-nine-five-three"),
        ("high", "9c 9d 8c 7d 6s 5h 2c", "Straight, nine high"),
        ("high", "9c 8c 7c 6c 5c Ac 2d", "Straight flush, nine high"),
        ("high", "Kh Kd 5c 5s Kc 2d 3h", "Full house, kings over fives"),
        ("low8", "8c 6d 4h 2s Ac Kd", "8-6-4-2-A low"),
        ("deuce-seven", "7c 5d 4h 3s 2c", "7-5-4-3-2 (seven low)"),
        ("deuce-seven", "Kc Qd Jh Ts 8c", "K-Q-J-T-8 (king low)"),
        ("deuce-seven", "3c 3d 7h 5s 2c", "One pair, threes, seven-five-deuce kickers"),
        ("deuce-seven", "7h 5h 4h 3h 2h", "Flush, seven-five-four-three-deuce"),
        ("deuce-seven", "6d 5c 4s 3h 2d", "Straight, six high"),
        ("deuce-seven", "As Ks Qs Js Ts", "Royal flush"),
    ],
)
def test_names(ranking: str, hand: str, name: str) -> None:
    assert value(ranking, hand).name == name


def test_best_of_seven_uses_the_board() -> None:
    hand = value("high", "2c 7d", "Ah Kh Qh Jh Th")
    assert hand.name == "Royal flush"
    assert value("high", "", "Ah Kh Qh Jh Th") == hand  # playing the board


def test_seven_cards_with_flush_and_trips() -> None:
    # Three sevens and five hearts: with seven cards the flush is the best hand.
    assert value("high", "7h 7c 7d 2h 9h Jh Kh").name == "Flush, king-jack-nine-seven-deuce"


@pytest.mark.parametrize(
    ("ranking", "hole", "board", "message"),
    [
        ("high", "As Ad", "", "The high ranking needs 5 to 7 cards in all; 2 were given."),
        ("high", "As Ad Kc Kd", "2c 3c 4c 5c", "needs 5 to 7 cards in all; 8 were given."),
        ("high", "As Ad Kc Kd As", "", "The same card appears more than once: As."),
        ("high", "As Kd", "Qc Jh As", "The same card appears more than once: As."),
        ("low8", "As 2d 3c 4h", "", "The low8 ranking needs 5 to 7 cards in all; 4 were given."),
        ("omaha-high", "As Kd Qc", "2c 3d 4h 5s", "needs 4 or 5 hole cards; 3 were given."),
        ("omaha-low8", "As Kd Qc Jd 9h", "2c 3d", "needs 3 to 5 board cards; 2 were given."),
        ("omaha-high", "As Kd Qc Jd", "As 3d 4h", "The same card appears more than once: As."),
        ("deuce-seven", "7c 5d 4h 3s 2c 9d", "", "needs 5 cards in all; 6 were given."),
        ("deuce-seven", "7c 5d 4h 3s", "2c", "needs 5 hole cards; 4 were given."),
    ],
)
def test_bad_cards_raise_a_sentence(ranking: str, hole: str, board: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        rank_hand(ranking, parse_cards(hole), parse_cards(board))


def test_non_cards_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^0 is not a card\.$"):
        rank_hand("high", [0, 1, 2, 3, 4])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="is not a hand ranking"):
        rank_hand("razz", parse_cards("As 2d 3c 4h 5s"))


def test_values_of_different_rankings_do_not_compare() -> None:
    high, low = value("high", "As 2d 3c 4h 5s"), value("low8", "As 2d 3c 4h 5s")
    with pytest.raises(TypeError):
        assert high < low
    assert high != low
