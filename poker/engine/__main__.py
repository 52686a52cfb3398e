"""Command line of the rules engine: ``python -m poker.engine {rank,demo,phh,rules}``.

``rank`` names the value of one hand under one ranking; ``demo`` deals a few random hands of each
ranking and shows how they compare; ``phh replay FILE ...`` plays PHH hand histories through the
hand machine (see :mod:`poker.engine.phh.cli`); ``rules --markdown [--output FILE]`` writes the
rules reference from the engine's definitions (:mod:`poker.engine.reference`, ``docs/rules.md``).
Randomness lives here, at the edge, never in the
engine.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from poker.engine.cards import DECK_32, Card, format_cards, parse_cards
from poker.engine.evaluation import RANKING_NAMES, HandValue, get_ranking, rank_hand
from poker.engine.phh.cli import replay_files
from poker.engine.reference import rules_markdown

# How many hole and board cards a demo deal gives under each ranking.
_DEMO_SHAPES: dict[str, tuple[int, int]] = {
    "high": (2, 5),
    "omaha-high": (4, 5),
    "low8": (7, 0),
    "omaha-low8": (4, 5),
    "deuce-seven": (5, 0),
    "soko": (5, 0),
    "americana": (5, 0),
    "telesina": (5, 1),
    "telesina-ranks-then-suits": (5, 1),
    "draw32": (5, 0),
}


def _rank_command(args: argparse.Namespace) -> int:
    try:
        value = rank_hand(args.ranking, parse_cards(args.hole), parse_cards(args.board or ""))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("no qualifying hand" if value is None else value.name)
    return 0


def _deal(deck: Sequence[Card], count: int, rng: secrets.SystemRandom) -> list[Card]:
    return rng.sample(list(deck), count)


def _demo_command(args: argparse.Namespace) -> int:
    rng = secrets.SystemRandom()
    for ranking in RANKING_NAMES:
        deck = get_ranking(ranking).deck
        hole_count, board_count = _DEMO_SHAPES[ranking]
        print(f"== {ranking} ({'32' if deck is DECK_32 else '52'}-card deck)")
        for _ in range(args.hands):
            cards = _deal(deck, hole_count * 2 + board_count, rng)
            board = cards[:board_count]
            first, second = cards[board_count::2], cards[board_count + 1 :: 2]
            values = [rank_hand(ranking, hole, board) for hole in (first, second)]
            shown = ", ".join(
                f"[{format_cards(hole)}] {'no low' if value is None else value.name}"
                for hole, value in zip((first, second), values, strict=True)
            )
            board_text = f" board [{format_cards(board)}]" if board else ""
            print(f"  {shown}{board_text}: {_verdict(values[0], values[1])}")
    return 0


def _verdict(first: HandValue | None, second: HandValue | None) -> str:
    if first is None or second is None:
        if first is second:
            return "neither qualifies"
        return "second wins" if first is None else "first wins"
    if first == second:
        return "split"
    return "first wins" if first > second else "second wins"


def _phh_replay_command(args: argparse.Namespace) -> int:
    return replay_files(args.files, sys.stdout)


def _rules_command(args: argparse.Namespace) -> int:
    text = rules_markdown()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the engine's command line; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="python -m poker.engine", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    rank = commands.add_parser("rank", help="name the value of one hand")
    rank.add_argument("ranking", choices=RANKING_NAMES)
    rank.add_argument("hole", help='hole cards, e.g. "As Kd"')
    rank.add_argument("board", nargs="?", help='board cards, e.g. "Qh Jh Th 2c 3d"')
    rank.set_defaults(handler=_rank_command)
    demo = commands.add_parser("demo", help="deal random hands of every ranking")
    demo.add_argument("--hands", type=int, default=3, help="hands per ranking (default 3)")
    demo.set_defaults(handler=_demo_command)
    phh = commands.add_parser("phh", help="PHH hand histories")
    phh_commands = phh.add_subparsers(dest="phh_command", required=True)
    phh_replay = phh_commands.add_parser("replay", help="replay PHH files, one JSON line a hand")
    phh_replay.add_argument("files", nargs="+", metavar="FILE")
    phh_replay.set_defaults(handler=_phh_replay_command)
    rules = commands.add_parser("rules", help="the rules reference from the engine's definitions")
    rules.add_argument(
        "--markdown", action="store_true", help="as Markdown (the only format; the default)"
    )
    rules.add_argument("--output", default="", help="write it to this file (default: stdout)")
    rules.set_defaults(handler=_rules_command)
    args = parser.parse_args(argv)
    handler = args.handler
    return int(handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
