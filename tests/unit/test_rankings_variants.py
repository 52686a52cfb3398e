"""The variant rankings: Soko (§3.4), Americana (§3.5), Telesina (§3.6), 32-card Draw (§3.7).

Every vector of RULES.md §9.3 and X1-X13 of §9.4 is a named case below; the ids carry the vector
number. Exhaustive and property checks live in tests/property/test_rankings_variants_properties.py.
"""

from __future__ import annotations

import pytest

from poker.engine.cards import parse_cards
from poker.engine.evaluation import HandValue, rank_hand
from poker.engine.evaluation.telesina import compare_telesina, telesina_pot_winners


def value(ranking: str, hole: str, board: str = "") -> HandValue:
    """The value of a hand given as text; these rankings always return a value."""
    result = rank_hand(ranking, parse_cards(hole), parse_cards(board))
    assert result is not None
    return result


def outcome(first: HandValue, second: HandValue) -> str:
    """``A``, ``B`` or ``tie``, as the vectors of §9 write the expected result."""
    if first == second:
        return "tie"
    return "A" if first > second else "B"


# --- §9.3 and §9.4: two-hand vectors -------------------------------------------------------------

TWO_HAND_VECTORS = [
    # Soko (§3.4)
    pytest.param("soko", "Ah 9h 6h 2h Kc", "As Ad Qc Js 3d", "A", id="S1-four-flush-beats-pair"),
    pytest.param("soko", "5c 6d 7h 8s Kc", "Ac Ad Qs Jh 3c", "A", id="S2-four-straight-beats-pair"),
    pytest.param(
        "soko", "Ah 9h 6h 2h Kc", "9c Td Js Qc 3h", "A", id="S3-four-flush-beats-four-straight"
    ),
    pytest.param(
        "soko", "3c 3d 2c 2s 7d", "Ah Kh Qh 9h 2d", "A", id="S4-two-pair-beats-four-flush"
    ),
    pytest.param(
        "soko", "5c 6d 7h 8s 8c", "As Ad Kc 9h 4s", "A", id="X3-four-straight-with-pair-beats-pair"
    ),
    pytest.param(
        "soko", "Ah Kh 7h 3h 2c", "Ad Qd Jd 9d Kc", "A", id="X4-four-flush-suited-cards-first"
    ),
    pytest.param(
        "soko", "Jc Qd Kh As 3c", "Ah 2d 3s 4c Kd", "A", id="X5-four-straight-ace-high-run"
    ),
    pytest.param("soko", "9c Td Jh Qs 2c", "9d Th Js Qc 3d", "B", id="X6-four-straight-odd-card"),
    # Americana (§3.5)
    pytest.param(
        "americana",
        "7h 8h 9h Jh Kh",
        "Ac Ad As Kc Kd",
        "A",
        id="M1-americana-flush-beats-full-house",
    ),
    pytest.param(
        "americana", "As 7d 8h 9c Ts", "7c 8d 9h Tc Js", "B", id="M2-americana-ace-low-straight"
    ),
    pytest.param(
        "americana", "Ah Kd Qc Js 9h", "Ad Kc Qs Jh 9d", "tie", id="X12-americana-ties-split"
    ),
    pytest.param(
        "americana",
        "As 7d 8h 9c Ts",
        "Ah Ad Ac Kc Qd",
        "A",
        id="X13-americana-straight-beats-trips",
    ),
    # 32-card Draw (§3.7); M1 and M2 hold for it too
    pytest.param(
        "draw32", "7h 8h 9h Jh Kh", "Ac Ad As Kc Kd", "A", id="M1-draw32-flush-beats-full-house"
    ),
    pytest.param(
        "draw32", "As 7d 8h 9c Ts", "7c 8d 9h Tc Js", "B", id="M2-draw32-ace-low-straight"
    ),
    pytest.param(
        "draw32", "Ah Kh Qh Jh Th", "Ad Kd Qd Jd Td", "A", id="C1-royal-flush-higher-suit"
    ),
    pytest.param(
        "draw32", "As 7s 8s 9s Ts", "7h 8h 9h Th Jh", "B", id="C2-ace-low-straight-flush-lowest"
    ),
    pytest.param(
        "draw32",
        "Ah Qh Jh 9h 7h",
        "Ad Qd Jd 9d 7d",
        "A",
        id="C3-flush-same-ranks-hearts-beat-diamonds",
    ),
    pytest.param(
        "draw32",
        "As Qs Js 9s 7s",
        "Ac Qc Jc 9c 7c",
        "A",
        id="C3-flush-same-ranks-spades-beat-clubs",
    ),
    pytest.param(
        "draw32", "Ac Kc 9c 8c 7c", "Ah Qh Jh 9h 8h", "A", id="C4-flush-ranks-before-suits"
    ),
    pytest.param(
        "draw32", "Kh Kc Qs Jd 9c", "Kd Ks Qc Jh 9d", "A", id="C5-pair-higher-suited-pair"
    ),
    pytest.param(
        "draw32", "Kd Ks Ah 8c 7c", "Kh Kc Qd Jh 9d", "A", id="C6-pair-kickers-before-suits"
    ),
    pytest.param("draw32", "Kh Qs Jc Td 9s", "Kd Qc Js Th 9c", "A", id="X8-straight-top-card-suit"),
    pytest.param("draw32", "Kh Kc Qh Qc 9s", "Kd Ks Qd Qs 9c", "A", id="X9-two-pair-higher-suit"),
    pytest.param(
        "draw32", "Kd Ks Qd Qs Ac", "Kh Kc Qh Qc 9s", "A", id="X10-two-pair-kicker-before-suit"
    ),
    pytest.param("draw32", "Ah Qs Jd 9c 7c", "Ad Qh Js 9d 7s", "A", id="X11-high-card-suit-of-ace"),
]


@pytest.mark.parametrize(("ranking", "hand_a", "hand_b", "expected"), TWO_HAND_VECTORS)
def test_two_hand_vector(ranking: str, hand_a: str, hand_b: str, expected: str) -> None:
    assert outcome(value(ranking, hand_a), value(ranking, hand_b)) == expected
    # The order is antisymmetric: swapping the hands swaps the result.
    swapped = {"A": "B", "B": "A", "tie": "tie"}[expected]
    assert outcome(value(ranking, hand_b), value(ranking, hand_a)) == swapped


# Telesina (§3.6): (hand A, hand B, the vela, players contesting the pot, expected).
# T6 gives four cards and the vela; a fifth, lower card is added to each hand (the 7c and 7d
# cannot play: the vela 9d is the better kicker for both).
TELESINA_VECTORS = [
    pytest.param(
        "Ts 9s 8s 7s As",
        "Ah Kh Qh Jh Th",
        "",
        2,
        "A",
        id="T1-heads-up-low-spade-sf-beats-royal",
    ),
    pytest.param(
        "Kh Qh Jh Th 9h", "Kd Qd Jd Td 9d", "", 3, "A", id="T2-straight-flush-higher-suit"
    ),
    pytest.param(
        "7h 8h 9h Jh Qh", "Ad Kd Qd Jd 9d", "", 3, "A", id="T3-flush-suit-only-ranks-ignored"
    ),
    pytest.param("7s 8s 9s Js Ks", "Ah Ad Ac Kh Kd", "", 3, "A", id="T4-flush-beats-full-house"),
    pytest.param("Ah Kd Qc Js Th", "Ad Kh Qs Jc Td", "", 3, "A", id="T5-straight-top-card-suit"),
    pytest.param(
        "Kh Kc Qh Qc 7c",
        "Kd Ks Qd Qs 7d",
        "9d",
        3,
        "A",
        id="T6-two-pair-vela-kicker-pair-suit",
    ),
    pytest.param("Kh Kd Qh Jc 9s", "Kc Ks Qd Jh 9c", "", 3, "A", id="T7-pair-kicker-suits"),
    pytest.param(
        "Ah Qd Jc 9s 7h", "Ad Kc Jh 9c 8s", "", 3, "A", id="T8-high-card-ace-of-hearts-first"
    ),
    pytest.param(
        "Ts 9s 8s 7s As", "Ah Kh Qh Jh Th", "", 3, "B", id="X1-royal-wins-with-three-players"
    ),
    pytest.param(
        "Ts 9s 8s 7s As", "Kh Qh Jh Th 9h", "", 2, "B", id="X2-heads-up-rule-only-for-the-royal"
    ),
]


@pytest.mark.parametrize(("hand_a", "hand_b", "vela", "contestants", "expected"), TELESINA_VECTORS)
def test_telesina_vector(
    hand_a: str, hand_b: str, vela: str, contestants: int, expected: str
) -> None:
    first, second = value("telesina", hand_a, vela), value("telesina", hand_b, vela)
    result = compare_telesina(first, second, contestants=contestants)
    assert {1: "A", -1: "B", 0: "tie"}[result] == expected
    assert compare_telesina(second, first, contestants=contestants) == -result


def test_T1_total_order_keeps_the_royal_on_top() -> None:
    """The heads-up rule is outside the order: the plain strengths still rank the royal first."""
    low, royal = value("telesina", "Ts 9s 8s 7s As"), value("telesina", "Ah Kh Qh Jh Th")
    assert royal > low
    assert compare_telesina(low, royal, contestants=2) == 1


# --- classifications (§9.3 M3, §9.4 X7) and names ------------------------------------------------

NAMES = [
    pytest.param(
        "americana",
        "7c 8d 9h Js Qc",
        "",
        "High card, queen-jack-nine-eight-seven",
        id="M3-americana-high-card",
    ),
    pytest.param(
        "draw32",
        "7c 8d 9h Js Qc",
        "",
        "High card, queen-jack-nine-eight-seven (queen of clubs)",
        id="M3-draw32-high-card",
    ),
    pytest.param(
        "soko",
        "5h 6h 7h 8h Kc",
        "",
        "Four-flush, eight-seven-six-five, king kicker",
        id="X7-four-flush-not-four-straight",
    ),
    pytest.param(
        "soko",
        "Ah 9h 6h 2h 2c",
        "",
        "Four-flush, ace-nine-six-deuce, deuce kicker",
        id="soko-four-flush-not-pair",
    ),
    pytest.param(
        "soko",
        "5c 6d 7h 8s 8c",
        "",
        "Four-straight, eight high, eight kicker",
        id="soko-four-straight-odd-card-pairs",
    ),
    pytest.param(
        "soko",
        "Ah 2d 3s 4c Kd",
        "",
        "Four-straight, four high, king kicker",
        id="soko-four-straight-ace-low",
    ),
    pytest.param(
        "soko",
        "Ah Kh 9h 6h Kc",
        "",
        "Four-flush, ace-king-nine-six, king kicker",
        id="soko-four-flush-odd-card-pairs",
    ),
    pytest.param(
        "soko",
        "5c 6d 7h 8s Ac",
        "",
        "Four-straight, eight high, ace kicker",
        id="soko-four-straight-ace-kicker",
    ),
    pytest.param(
        "soko", "5h 6h 7h 8h 9c", "", "Straight, nine high", id="soko-straight-beats-four-flush"
    ),
    pytest.param(
        "soko",
        "Tc Td 7h 8s 4c",
        "",
        "One pair, tens, eight-seven-four kickers",
        id="soko-pair",
    ),
    pytest.param("soko", "As 2s 3s 4s 5s", "", "Straight flush, five high", id="soko-steel-wheel"),
    pytest.param("soko", "As Ks Qs Js Ts", "", "Royal flush", id="soko-royal-flush"),
    pytest.param("soko", "Ac Ad Ah 9s 9d", "", "Full house, aces over nines", id="soko-full-house"),
    pytest.param(
        "americana",
        "As 7s 8s 9s Ts",
        "",
        "Straight flush, ten high (ace low)",
        id="americana-lowest-straight-flush",
    ),
    pytest.param(
        "americana",
        "As 7d 8h 9c Ts",
        "",
        "Straight, ten high (ace low)",
        id="americana-lowest-straight",
    ),
    pytest.param(
        "americana",
        "Ks Kd 9h 9c Qd",
        "",
        "Two pair, kings and nines, queen kicker",
        id="americana-two-pair",
    ),
    pytest.param(
        "draw32",
        "As 7d 8h 9c Ts",
        "",
        "Straight, ten high (ace low; ten of spades)",
        id="draw32-lowest-straight",
    ),
    pytest.param("draw32", "Ah Kh Qh Jh Th", "", "Royal flush of hearts", id="draw32-royal"),
    pytest.param(
        "draw32",
        "As 7s 8s 9s Ts",
        "",
        "Straight flush of spades, ten high (ace low)",
        id="draw32-lowest-straight-flush",
    ),
    pytest.param(
        "draw32",
        "Ah Qh Jh 9h 7h",
        "",
        "Flush of hearts, ace-queen-jack-nine-seven",
        id="draw32-flush",
    ),
    pytest.param(
        "draw32",
        "Kh Kc Qs Jd 9c",
        "",
        "One pair, kings, queen-jack-nine kickers (king of hearts)",
        id="draw32-pair",
    ),
    pytest.param(
        "draw32",
        "Ah Ad Ac As 7d",
        "",
        "Four of a kind, aces, seven kicker",
        id="draw32-quads-no-suit",
    ),
    pytest.param(
        "draw32",
        "Kh Kc Qh Qc 9s",
        "",
        "Two pair, kings and queens, nine kicker (king of hearts)",
        id="draw32-two-pair",
    ),
    pytest.param("telesina", "7h 8h 9h Jh Qh", "", "Flush of hearts", id="telesina-flush"),
    pytest.param(
        "telesina",
        "Kh Kc Qh Qc 7c",
        "9d",
        "Two pair, kings and queens, nine kicker [Kh Kc Qh Qc 9d]",
        id="telesina-two-pair-vela-kicker",
    ),
    pytest.param(
        "telesina",
        "Kh Qh Jh Th 9h",
        "",
        "Straight flush of hearts, king high",
        id="telesina-straight-flush",
    ),
    pytest.param(
        "telesina",
        "Ah Qd Jc 9s 7h",
        "",
        "High card, ace-queen-jack-nine-seven [Ah Qd Jc 9s 7h]",
        id="telesina-high-card",
    ),
    pytest.param(
        "telesina",
        "Th 9d 8c 7s Ah",
        "",
        "Straight, ten high (ace low) [Th 9d 8c 7s Ah]",
        id="telesina-lowest-straight",
    ),
    pytest.param(
        "telesina",
        "Kh Kd Qh Jc 7s",
        "9s",
        "One pair, kings, queen-jack-nine kickers [Kh Kd Qh Jc 9s]",
        id="telesina-pair-with-vela",
    ),
    pytest.param(
        "telesina",
        "As 7s 8s 9s Ts",
        "Js",
        "Straight flush of spades, jack high; also ten high (ace low)",
        id="telesina-two-straight-flushes",
    ),
]


@pytest.mark.parametrize(("ranking", "hole", "board", "name"), NAMES)
def test_name(ranking: str, hole: str, board: str, name: str) -> None:
    assert value(ranking, hole, board).name == name


# --- Soko rules (§3.4, A24) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand_a", "hand_b", "expected"),
    [
        pytest.param("As Ks Qs Js Ts", "Ah Kh Qh Jh Th", "tie", id="two-royals-split"),
        pytest.param("Ah Kd 9c 7s 4h", "Ad Kc 9s 7h 4d", "tie", id="suits-never-break-ties"),
        pytest.param("Ah Kh 9h 6h 3c", "Ad Kd 9d 6d 2c", "A", id="four-flush-odd-card-decides"),
        pytest.param(
            "2c 3d 4h 5s 9c", "Ah 2d 3s 4c Kd", "A", id="four-straight-five-high-beats-four"
        ),
        pytest.param("As 2s 3s 4s 5s", "Kd Kc Kh Ks 2c", "A", id="steel-wheel-beats-quads"),
        pytest.param("6c 5d 4h 3s 2c", "5h 4s 3d 2h Ac", "A", id="wheel-is-the-lowest-straight"),
        pytest.param("2c 2d 7h 8s 9c", "Ah Kd Qc 9s 7c", "A", id="pair-beats-high-card"),
        pytest.param("Kh Qh Jh 9h 2c", "Kd Qd Jd 9d 3c", "B", id="four-flushes-equal-odd-card"),
    ],
)
def test_soko_rule(hand_a: str, hand_b: str, expected: str) -> None:
    assert outcome(value("soko", hand_a), value("soko", hand_b)) == expected


# --- Americana rules (§3.5) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand_a", "hand_b", "expected"),
    [
        pytest.param("As Ks Qs Js Ts", "Ah Kh Qh Jh Th", "tie", id="two-royals-split"),
        pytest.param("7h 8h 9h Th Jh", "As 7s 8s 9s Ts", "A", id="ace-low-straight-flush-lowest"),
        pytest.param("As 7s 8s 9s Ts", "Ah Ad Ac As Kd", "A", id="straight-flush-beats-quads"),
        pytest.param("Ah Ad Ac As 7d", "7h 8h 9h Jh Kh", "A", id="quads-beat-flush"),
        pytest.param("Kh Kd 9s 8c 7c", "Kc Ks 9h 8d 7h", "tie", id="equal-pairs-split"),
    ],
)
def test_americana_rule(hand_a: str, hand_b: str, expected: str) -> None:
    assert outcome(value("americana", hand_a), value("americana", hand_b)) == expected


# --- Telesina rules (§3.6, A18, A19) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand_a", "board", "hand_b", "expected"),
    [
        # Both use the vela Ah as the top card: the next card's suit decides [A19].
        pytest.param(
            "Kh Qs Jc Ts 7s", "Ah", "Kd Qh Js Tc 7c", "A", id="straight-vela-top-then-king"
        ),
        # Kickers Q-J-9 in both; the vela Jd is shared: Q♥ vs Q♣ decides first [A19].
        pytest.param("Kh Ks Qh 9s 7c", "Jd", "Kd Kc Qc 9h 7d", "A", id="pair-kicker-suits-first"),
        # The vela Qd is both players' first kicker: skipped, the J♣ beats the J♠, although the
        # first player holds the K♥.
        pytest.param("Kh Ks Js 9h 7d", "Qd", "Kd Kc Jc 9s 7c", "B", id="pair-shared-vela-skipped"),
        # The second player holds the K♥, but the kickers' suits come first: Q♥ > Q♣.
        pytest.param("Kc Ks Qh 9h 7c", "Jd", "Kh Kd Qc 9s 7d", "A", id="pair-kickers-before-pair"),
        # Card by card: both play the vela A♥; K♥ beats K♦ before the queen can count [A19].
        pytest.param(
            "Kh Jd 9c 8c 7c", "Ah", "Kd Qs Js 9s 7s", "A", id="high-card-suit-before-rank"
        ),
        # Two pair of equal ranks with the vela as kicker: the high pair's suits, A♥ first.
        pytest.param("Ah As Qh Qs 7c", "9d", "Ad Ac Qd Qc 7d", "A", id="two-pair-high-pair-suits"),
        pytest.param("Kh Kd Kc 8s 8d", "7c", "Qh Qd Qc Js Jd", "A", id="full-house-trips-decide"),
        pytest.param("Ah Kh Qh Jh 9h", "7c", "As Ks Qs Js 8s", "A", id="flush-suit-decides"),
    ],
)
def test_telesina_rule(hand_a: str, board: str, hand_b: str, expected: str) -> None:
    assert outcome(value("telesina", hand_a, board), value("telesina", hand_b, board)) == expected


def test_telesina_six_cards_take_the_best_five() -> None:
    assert (
        value("telesina", "Kh Kd 7s 8c 9d", "Ks").name
        == "Three of a kind, kings, nine-eight kickers"
    )
    assert value("telesina", "7h 8h 9h Jh Qh", "Kh").name == "Flush of hearts"
    assert value("telesina", "Ah Ad Ac Kh Kd", "Ks").name == "Full house, aces over kings"


def test_heads_up_low_spade_sf_made_with_the_vela_still_beats_the_royal() -> None:
    """A♠ 7♠ 8♠ 9♠ T♠ with the vela J♠ is a jack-high straight flush, but the player may show
    A-7-8-9-T of spades instead, which beats the royal heads-up [A18]."""
    spades = value("telesina", "As 7s 8s 9s Ts", "Js")
    royal = value("telesina", "Ah Kh Qh Jh Th", "Js")
    assert royal > spades
    assert compare_telesina(spades, royal, contestants=2) == 1
    assert compare_telesina(spades, royal, contestants=3) == -1


def test_heads_up_royal_with_the_nine_of_hearts_shows_the_king_high_straight_flush() -> None:
    """Holding A♥-K♥-Q♥-J♥-T♥ and the vela 9♥, the player may show K♥-high, which the low
    spade straight flush does not beat."""
    royal = value("telesina", "Ah Kh Qh Jh Th", "9h")
    spades = value("telesina", "As 7s 8s 9s Ts", "9h")
    assert compare_telesina(royal, spades, contestants=2) == 1
    assert compare_telesina(spades, royal, contestants=2) == -1


@pytest.mark.parametrize(
    ("rule", "low", "royal", "expected"),
    [
        pytest.param(
            "exact", "Td 9d 8d 7d Ad", "Ac Kc Qc Jc Tc", -1, id="exact-only-spades-vs-hearts"
        ),
        pytest.param(
            "any_low_sf_beats_royal",
            "Td 9d 8d 7d Ad",
            "Ac Kc Qc Jc Tc",
            1,
            id="any-low-beats-any-royal",
        ),
        pytest.param("off", "Ts 9s 8s 7s As", "Ah Kh Qh Jh Th", -1, id="off-plain-order"),
    ],
)
def test_heads_up_rule_parameter(rule: str, low: str, royal: str, expected: int) -> None:
    low_value, royal_value = value("telesina", low), value("telesina", royal)
    assert compare_telesina(low_value, royal_value, contestants=2, rule=rule) == expected  # type: ignore[arg-type]


def test_telesina_pot_winners_apply_the_rule_only_heads_up() -> None:
    low, royal = value("telesina", "Ts 9s 8s 7s As"), value("telesina", "Ah Kh Qh Jh Th")
    other = value("telesina", "Kd Qd Jd Td 9d")
    assert telesina_pot_winners([royal, low]) == [1]
    assert telesina_pot_winners([royal, low, other]) == [0]
    assert telesina_pot_winners([low]) == [0]


def test_compare_telesina_rejects_other_rankings_and_lone_contestants() -> None:
    telesina, draw = value("telesina", "Ts 9s 8s 7s As"), value("draw32", "Ts 9s 8s 7s As")
    with pytest.raises(ValueError, match="compares telesina values"):
        compare_telesina(telesina, draw, contestants=2)
    with pytest.raises(ValueError, match="two contestants"):
        compare_telesina(telesina, telesina, contestants=1)
    with pytest.raises(ValueError, match="at least one contestant"):
        telesina_pot_winners([])


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranking", "hole", "board", "message"),
    [
        pytest.param(
            "americana",
            "2c 7d 8h 9c Ts",
            "",
            "2c is not in the 32-card deck.",
            id="americana-deuce",
        ),
        pytest.param(
            "draw32", "As Ks Qs Js 6s", "", "6s is not in the 32-card deck.", id="draw32-six"
        ),
        pytest.param(
            "telesina",
            "As Ks Qs Js Ts",
            "2h",
            "2h is not in the 32-card deck.",
            id="telesina-deuce-vela",
        ),
        pytest.param(
            "soko",
            "As As Qs Js Ts",
            "",
            "The same card appears more than once: As.",
            id="soko-duplicate",
        ),
        pytest.param(
            "telesina",
            "As Ks Qs Js Ts",
            "As",
            "The same card appears more than once: As.",
            id="telesina-vela-duplicate",
        ),
        pytest.param(
            "soko",
            "As Ks Qs Js",
            "",
            "The soko ranking needs 5 cards in all; 4 were given.",
            id="soko-four-cards",
        ),
        pytest.param(
            "americana",
            "As Ks Qs Js Ts 9s",
            "",
            "The americana ranking needs 5 cards in all; 6 were given.",
            id="americana-six-cards",
        ),
        pytest.param(
            "draw32",
            "As Ks Qs Js",
            "Ts",
            "The draw32 ranking needs 5 hole cards; 4 were given.",
            id="draw32-board",
        ),
        pytest.param(
            "telesina",
            "As Ks Qs Js",
            "Ts 9s",
            "The telesina ranking needs 5 hole cards; 4 were given.",
            id="telesina-two-velas",
        ),
        pytest.param(
            "telesina",
            "As Ks Qs Js",
            "",
            "The telesina ranking needs 5 or 6 cards in all; 4 were given.",
            id="telesina-four-cards",
        ),
    ],
)
def test_bad_input_is_a_sentence(ranking: str, hole: str, board: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        rank_hand(ranking, parse_cards(hole), parse_cards(board))
    assert str(error.value) == message
