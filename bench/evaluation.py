"""Hand-evaluation benchmarks: our rankings against pure-Python peers, on the same random deals.

* The headline: 7-card ``high`` evaluations per second with
  :func:`poker.engine.evaluation.high.best_high`
  against phevaluator 0.5.3.1 (``evaluate_cards(*ids)``) and treys 0.1.8
  (``Evaluator().evaluate(hand, board)``). Each library gets the same hands converted beforehand
  to its own card representation (conversion is not timed), and the three must order the hands
  identically, or the run stops: a race between evaluators that disagree would mean nothing.
* :func:`rank_hand` end to end (card checks included) for 7-card ``high``.
* ``Ranking.evaluate`` of each of the nine rankings on valid deals of its game's shape, with the
  fastest available peer where one exists (phevaluator and treys for high and Omaha high, pokerkit
  for the lows). Rankings whose module is not importable yet are skipped with a note.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from bench.harness import Result, rates
from poker.engine.cards import DECK_32, DECK_52, Card, format_cards
from poker.engine.evaluation import Ranking, get_ranking, rank_hand
from poker.engine.evaluation.high import best_high

SEED: Final = 20_260_101
HANDS: Final = 30_000
"""7-card hands of the headline race."""
DEALS: Final = 10_000
"""Deals per ranking."""
SLOW_PEER_DEALS: Final = 1_000
"""Deals for peers below about 20,000 evaluations per second (treys' Omaha)."""
SLOWEST_PEER_DEALS: Final = 150
"""Deals for peers that manage only hundreds of evaluations per second (pokerkit)."""
REPEATS: Final = 5
TARGET_PER_SECOND: Final = 100_000
"""Every ranking should evaluate at least this many deals per second."""

Deal = tuple[tuple[Card, ...], tuple[Card, ...]]
EVALS: Final = "evaluations/s"


def loop_one(evaluate: Callable[[Any], object], items: Sequence[Any]) -> Callable[[], int]:
    """A batch calling ``evaluate(item)`` for each item."""

    def batch() -> int:
        for item in items:
            evaluate(item)
        return len(items)

    return batch


def loop_two(evaluate: Callable[[Any, Any], object], items: Sequence[Any]) -> Callable[[], int]:
    """A batch calling ``evaluate(first, second)`` for each pair."""

    def batch() -> int:
        for first, second in items:
            evaluate(first, second)
        return len(items)

    return batch


def loop_star(evaluate: Callable[..., object], items: Sequence[Sequence[Any]]) -> Callable[[], int]:
    """A batch calling ``evaluate(*item)`` for each item."""

    def batch() -> int:
        for item in items:
            evaluate(*item)
        return len(items)

    return batch


@dataclass(frozen=True, slots=True)
class Peer:
    """Another library's evaluator: how to convert a deal, call it and read its verdict.

    ``strength`` turns the library's result into something where greater is better (None when
    no hand qualifies), to check that it orders hands as we do.
    """

    name: str
    convert: Callable[[Deal], tuple[Any, ...]]
    evaluate: Callable[..., Any]
    strength: Callable[[Any], Any]
    deals: int = DEALS


def phevaluator_id(card: Card) -> int:
    """phevaluator's card id: ``rank * 4 + suit`` with suits in the order c d h s."""
    return (card.rank - 2) * 4 + (3 - card.suit)


def to_treys(deal: Deal) -> tuple[list[int], list[int]]:
    """A deal as treys' (hand, board) lists of card ints."""
    from treys import Card as TreysCard

    hole, board = ([TreysCard.new(str(card)) for card in cards] for cards in deal)
    return hole, board


def high_peers() -> list[Peer]:
    """Peers for the best five of seven cards."""
    peers: list[Peer] = []
    try:
        from phevaluator import evaluate_cards
    except ImportError:
        print("  note: phevaluator is not installed; no phevaluator peer")
    else:
        peers.append(
            Peer(
                "phevaluator 0.5.3.1 evaluate_cards",
                lambda deal: tuple(map(phevaluator_id, deal[0] + deal[1])),
                evaluate_cards,
                lambda rank: -rank,
            )
        )
    try:
        from treys import Evaluator
    except ImportError:
        print("  note: treys is not installed; no treys peer")
    else:
        peers.append(
            Peer("treys 0.1.8 Evaluator.evaluate", to_treys, Evaluator().evaluate, lambda r: -r)
        )
    return peers


def omaha_high_peers(hole_size: int) -> list[Peer]:
    """Peers for Omaha high; phevaluator's handles four hole cards only."""
    peers: list[Peer] = []
    if hole_size == 4:
        try:
            from phevaluator import evaluate_omaha_cards
        except ImportError:
            pass
        else:
            peers.append(
                Peer(
                    "phevaluator 0.5.3.1 evaluate_omaha_cards",
                    lambda deal: tuple(map(phevaluator_id, deal[1] + deal[0])),
                    evaluate_omaha_cards,
                    lambda rank: -rank,
                )
            )
    try:
        from treys import PLOEvaluator
    except ImportError:
        pass
    else:
        evaluate = PLOEvaluator().evaluate
        peers.append(
            Peer("treys 0.1.8 PLOEvaluator", to_treys, evaluate, lambda r: -r, SLOW_PEER_DEALS)
        )
    return peers


def pokerkit_peer(hand_class: str) -> list[Peer]:
    """pokerkit's ``<hand_class>.from_game_or_none(hole, board)`` as a peer, if installed."""
    try:
        import pokerkit
    except ImportError:
        return []

    def to_pokerkit(deal: Deal) -> tuple[Any, ...]:
        return tuple(tuple(pokerkit.Card.parse(format_cards(cards))) for cards in deal)

    hand_type = getattr(pokerkit, hand_class)
    return [
        Peer(
            f"pokerkit 0.7.7 {hand_class}",
            to_pokerkit,
            hand_type.from_game_or_none,
            lambda hand: hand,
            deals=SLOWEST_PEER_DEALS,
        )
    ]


@dataclass(frozen=True, slots=True)
class Shape:
    """What a ranking is benchmarked on: deals of ``hole`` + ``board`` cards from ``deck``."""

    ranking: str
    hole: int
    board: int
    deck: tuple[Card, ...] = DECK_52
    peers: Callable[[], list[Peer]] = list

    @property
    def label(self) -> str:
        board = f"+{self.board}" if self.board else ""
        return f"{self.ranking} {self.hole}{board} cards"


SHAPES: Final = (
    Shape("high", 2, 5, peers=high_peers),
    Shape("omaha-high", 4, 5, peers=partial(omaha_high_peers, 4)),
    Shape("omaha-high", 5, 5, peers=partial(omaha_high_peers, 5)),
    Shape("low8", 7, 0, peers=partial(pokerkit_peer, "EightOrBetterLowHand")),
    Shape("omaha-low8", 4, 5, peers=partial(pokerkit_peer, "OmahaEightOrBetterLowHand")),
    Shape("omaha-low8", 5, 5, peers=partial(pokerkit_peer, "OmahaEightOrBetterLowHand")),
    Shape("deuce-seven", 5, 0, peers=partial(pokerkit_peer, "StandardLowHand")),
    Shape("soko", 5, 0),
    Shape("americana", 5, 0, DECK_32),
    Shape("telesina", 5, 1, DECK_32),
    Shape("draw32", 5, 0, DECK_32),
)


def random_deals(rng: random.Random, shape: Shape, count: int) -> list[Deal]:
    """``count`` deals of distinct cards in the shape."""
    deals = []
    for _ in range(count):
        cards = rng.sample(shape.deck, shape.hole + shape.board)
        deals.append((tuple(cards[: shape.hole]), tuple(cards[shape.hole :])))
    return deals


def compare(first: Any, second: Any) -> int:
    """-1, 0 or 1; None (no qualifying hand) is below everything."""
    if first is None or second is None:
        return int(first is not None) - int(second is not None)
    return int(first > second) - int(first < second)


def check_same_order(ours: Sequence[Any], theirs: Sequence[Any], peer: str) -> None:
    """Stop the run if a peer orders consecutive deals differently from us."""
    for index in range(len(ours) - 1):
        if compare(ours[index], ours[index + 1]) != compare(theirs[index], theirs[index + 1]):
            raise RuntimeError(f"{peer} disagrees with us on deals {index} and {index + 1}")


def headline(rng: random.Random) -> list[Result]:
    """7-card high: ``best_high`` against each high peer, all timed in the same repeats."""
    deals = random_deals(rng, Shape("high", 2, 5), HANDS)
    hands = [hole + board for hole, board in deals]
    peers = high_peers()
    batches = {"ours": loop_one(best_high, hands)}
    ours = [best_high(hand) for hand in hands[:2000]]
    for peer in peers:
        converted = [peer.convert(deal) for deal in deals]
        theirs = [peer.strength(peer.evaluate(*args)) for args in converted[:2000]]
        check_same_order(ours, theirs, peer.name)
        batches[peer.name] = loop_star(peer.evaluate, converted)
    measured = rates(batches, REPEATS)
    name = "high 7 cards best_high"
    if not peers:
        return [Result(name, measured["ours"], EVALS)]
    results = []
    for peer in peers:
        library = peer.name.split()[0]
        results.append(
            Result(f"{name} vs {library}", measured["ours"], EVALS, peer.name, measured[peer.name])
        )
    return results


def end_to_end(rng: random.Random) -> Result:
    """``rank_hand("high", hole, board)`` with its card checks, 2 + 5 cards."""
    deals = random_deals(rng, Shape("high", 2, 5), DEALS)
    measured = rates({"rank_hand": loop_two(partial(rank_hand, "high"), deals)}, REPEATS)
    return Result("high 2+5 cards rank_hand (checked)", measured["rank_hand"], EVALS)


def load(shape: Shape, sample: Deal) -> Ranking | None:
    """The shape's ranking if it can be imported and accepts the shape; else a note and None."""
    try:
        ranking = get_ranking(shape.ranking)
        ranking.verify_cards(*sample)
    except (ImportError, KeyError, AttributeError, ValueError) as error:
        print(f"  note: skipping {shape.label}: {error}")
        return None
    return ranking


def ranking_result(rng: random.Random, shape: Shape) -> Result | None:
    """``Ranking.evaluate`` on the shape's deals, with its fastest peer, if any."""
    deals = random_deals(rng, shape, DEALS)
    ranking = load(shape, deals[0])
    if ranking is None:
        return None
    batches = {"ours": loop_two(ranking.evaluate, deals)}
    for peer in shape.peers():
        converted = [peer.convert(deal) for deal in deals[: peer.deals]]
        ours = [ranking.evaluate(*deal) for deal in deals[: peer.deals]]
        check_same_order(ours, [peer.strength(peer.evaluate(*a)) for a in converted], peer.name)
        batches[peer.name] = loop_star(peer.evaluate, converted)
    measured = rates(batches, REPEATS)
    ours_rate = measured.pop("ours")
    name = f"{shape.label} Ranking.evaluate"
    if not measured:
        return Result(name, ours_rate, EVALS)
    fastest = max(measured, key=measured.__getitem__)
    return Result(name, ours_rate, EVALS, fastest, measured[fastest])


def run() -> list[Result]:
    """All evaluation benchmarks, on deals from a fixed seed."""
    rng = random.Random(SEED)
    results = headline(rng)
    results.append(end_to_end(rng))
    for shape in SHAPES:
        result = ranking_result(rng, shape)
        if result is not None:
            results.append(result)
    slow = [r.name for r in results if r.unit == EVALS and r.value < TARGET_PER_SECOND]
    if slow:
        print(f"  warning: below {TARGET_PER_SECOND:,}/s: {', '.join(slow)}")
    return results
