"""The rules reference, written from the engine's own definitions (``docs/rules.md``).

``python -m poker.engine rules --markdown`` prints it; the committed ``docs/rules.md`` is its
output, and a test checks that it is current. Everything comes from the definitions the engine
deals by: the games (:data:`poker.engine.games.GAMES`), the betting structures, the room's
defaults per table (:func:`poker.engine.table.config.make_config`), and every table switch
with its default (the fields of :class:`~poker.engine.table.config.TableConfig`,
:class:`~poker.engine.betting.BettingRules` and :class:`~poker.engine.hand.rake.RakeSchedule`),
the enumerated ones with their choices. Pure: a string, no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import re
import typing
from collections.abc import Iterable
from typing import Any

from poker.engine import betting, games
from poker.engine.betting import BettingRules, Stakes, Structure
from poker.engine.evaluation import RANKING_NAMES
from poker.engine.games import GAMES, DealerKind, ForcedBets, GameDefinition, Street
from poker.engine.hand.rake import RakeSchedule
from poker.engine.table import commands, plan, rules, state
from poker.engine.table import config as table_config
from poker.engine.table.config import TableConfig, default_buy_ins, make_config

#: The module ``decide`` (the package's ``decide`` is the function of that name, which shadows it).
decide = importlib.import_module("poker.engine.table.decide")
#: The modules whose docstrings the decisions index reads (the table and the games: where the
#: room's decisions are applied between hands and in the definitions).
_DECISION_SOURCES = (games, betting, table_config, plan, rules, decide, commands, state)
_DECISION = re.compile(r"\bA(\d{1,2})\b")

_HEADER = """# Rules reference

Generated from the engine's definitions by `python -m poker.engine rules --markdown`
(`poker/engine/reference.py`); do not edit: change the engine and regenerate
(`tests/unit/test_rules_reference.py` fails while this file is out of date).
"""

#: Fields of TableConfig set per table by CreateTable itself, not switches.
_NOT_SWITCHES = frozenset({"game", "structure", "stakes", "rules", "rake", "hand"})


def rules_markdown() -> str:
    """The whole reference as Markdown."""
    parts = [
        _HEADER,
        _games(),
        _streets(),
        _structures(),
        _room_defaults(),
        _switches("Table switches", TableConfig, skip=_NOT_SWITCHES),
        _switches("Betting switches (`TableConfig.rules`)", BettingRules),
        _switches("Rake (`TableConfig.rake`, real-money tables)", RakeSchedule),
        _choices(),
        _decisions(),
    ]
    return "\n".join(parts).rstrip("\n") + "\n"


def _table(head: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    head = list(head)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.extend("| " + " | ".join(_cell(value) for value in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _doc(thing: Any, *, one_line: bool = False) -> str:
    text = inspect.cleandoc(thing.__doc__ or "")
    return " ".join(text.split()) if one_line else text


def _games() -> str:
    rows = [
        (
            f"`{game.key}`",
            game.name,
            f"{len(game.deck)} cards",
            game.max_players,
            _forced(game),
            game.dealer.value,
            _rankings(game),
            _extras(game),
        )
        for game in GAMES.values()
    ]
    head = ("key", "game", "deck", "seats", "forced bets", "dealer", "rankings", "special rules")
    rankings = ", ".join(f"`{name}`" for name in RANKING_NAMES)
    return (
        f"## Games\n\nThe {len(GAMES)} games the hand machine deals (`poker/engine/games.py`).\n\n"
        + _table(head, rows)
        + f"\nHand rankings (`poker.engine.evaluation`): {rankings}.\n"
    )


def _forced(game: GameDefinition) -> str:
    return "blinds" if game.forced_bets is ForcedBets.BLINDS else "ante and bring-in"


def _rankings(game: GameDefinition) -> str:
    names = [name for name in (game.high_ranking, game.low_ranking) if name]
    kind = "high" if game.high_ranking and not game.low_ranking else "hi/lo"
    if not game.high_ranking:
        kind = "low"
    return f"{kind}: " + " / ".join(f"`{name}`" for name in names)


def _extras(game: GameDefinition) -> str:
    flags = {
        "open_pair_double_bet": "open pair doubles the bet",
        "common_card": "7th-street common card",
        "heads_up_straight_flush": "heads-up straight flush rule",
        "split_offer": "split-the-pot offer",
    }
    named = [text for name, text in flags.items() if getattr(game, name, False)]
    return ", ".join(named) or "-"


def _streets() -> str:
    lines = ["## Streets\n", "What each street deals and which bet size it uses.\n"]
    for game in GAMES.values():
        steps = "; ".join(_street(street) for street in game.streets)
        lines.append(f"- **{game.name}** (`{game.key}`): {steps}")
    return "\n".join(lines) + "\n"


def _street(street: Street) -> str:
    dealt = []
    if street.down:
        dealt.append(f"{street.down} down")
    if street.up:
        dealt.append(f"{street.up} up")
    if street.board:
        dealt.append(f"{street.board} to the board")
    if street.draw:
        dealt.append(f"draw 0-{street.draw}")
    what = ", ".join(dealt) or "no cards"
    return f"{street.name} ({what}; {street.bet_size.value} bet, first: {street.first_actor.value})"


def _structures() -> str:
    examples = {
        Structure.FIXED_LIMIT: Stakes(1, 2, small_bet=2, big_bet=4),
        Structure.SPREAD_LIMIT: Stakes(1, 2),
        Structure.POT_LIMIT: Stakes(1, 2),
        Structure.HALF_POT_LIMIT: Stakes(1, 2),
        Structure.NO_LIMIT: Stakes(1, 2),
    }
    rows = []
    for structure, stakes in examples.items():
        low, high = default_buy_ins(structure, stakes)
        rows.append(
            (
                f"`{structure.name.lower().replace('_', '-')}`",
                structure.value,
                f"{low} to {high if high is not None else 'no maximum'}",
            )
        )
    return (
        f"## Betting structures\n\n{_doc(Structure)}\n\n"
        "Default buy-ins at blinds 1/2 (fixed limit: bets 2/4), from "
        f"`default_buy_ins`: {_doc(default_buy_ins).split(chr(10) + chr(10))[0]}\n\n"
        + _table(("structure", "wire value", "buy-in at 1/2"), rows)
    )


def _room_defaults() -> str:
    rows = []
    for game in GAMES.values():
        stud = game.forced_bets is ForcedBets.ANTE_BRING_IN
        stakes = Stakes(0, 0, ante=1, small_bet=4, big_bet=8) if stud else Stakes(1, 2)
        structure = Structure.FIXED_LIMIT if stud else Structure.NO_LIMIT
        real = make_config(game.key, structure, stakes)
        play = make_config(game.key, structure, stakes, real_money=False)
        rows.append(
            (
                f"`{game.key}`",
                real.seat_count,
                real.dealer_mode.name.lower(),
                "ante 1, bring-in " + str(real.stakes.bring_in) if stud else "blinds 1/2",
                f"{real.min_buy_in}-{real.max_buy_in or 'no max'}",
                "on" if real.artificial_allin_enabled else "off",
                "on" if play.artificial_allin_enabled else "off",
            )
        )
    head = (
        "game",
        "seats",
        "dealer",
        "example stakes",
        "buy-in",
        "disconnection protection (real money)",
        "(play money)",
    )
    return (
        "## The room's defaults per table\n\n"
        f"`make_config`: {_doc(make_config).split(chr(10) + chr(10))[0]}\n\n"
        + _table(head, rows)
        + "\nReal-money tables take the default rake (below); play-money tables none.\n"
    )


def _switches(title: str, kind: type, skip: frozenset[str] = frozenset()) -> str:
    hints = typing.get_type_hints(kind)
    rows = []
    for item in dataclasses.fields(kind):
        if item.name in skip or not item.init:
            continue
        rows.append((f"`{item.name}`", _type_name(hints[item.name]), _default(item)))
    where = (
        "Every one can be set per table in `CreateTable.settings` (a `poker.v1.TableConfig`, "
        "whose non-zero fields replace the room's defaults).\n\n"
    )
    return f"## {title}\n\n{_doc(kind)}\n\n{where}" + _table(("switch", "type", "default"), rows)


def _type_name(hint: Any) -> str:
    text = getattr(hint, "__name__", None) if not typing.get_args(hint) else None
    return "`" + re.sub(r"\b[a-z_][\w]*\.", "", text or str(hint)) + "`"


#: What a switch's default of None stands for, where it is not the game's or the stakes' own.
_NONE_MEANS = {"gathering_ms": "the pause (`pause_between_hands_ms`)"}


def _default(item: dataclasses.Field[Any]) -> str:
    if item.default is not dataclasses.MISSING:
        value = item.default
    elif item.default_factory is not dataclasses.MISSING:
        value = item.default_factory()
    else:
        return "per table (room default below)"
    if isinstance(value, enum.Enum):
        return f"`{value.name.lower()}`"
    if value is None:
        return _NONE_MEANS.get(item.name, "none (the game's or the stakes' own)")
    if dataclasses.is_dataclass(value):
        return "see its section"
    return f"`{value!r}`"


def _choices() -> str:
    enums: dict[str, type[enum.Enum]] = {}
    for owner in (TableConfig, BettingRules, RakeSchedule):
        hints = typing.get_type_hints(owner)
        for item in dataclasses.fields(owner):
            for candidate in (hints[item.name], *typing.get_args(hints[item.name])):
                if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
                    enums.setdefault(candidate.__name__, candidate)
    for extra in (DealerKind, ForcedBets):
        enums.setdefault(extra.__name__, extra)
    lines = ["## Choices of the enumerated switches\n"]
    for name, choice in enums.items():
        members = ", ".join(f"`{member.name.lower()}`" for member in choice)
        lines.append(f"- **{name}**: {members}. {_doc(choice, one_line=True)}")
    return "\n".join(lines) + "\n"


def _decisions() -> str:
    """Every decision of the room's rule book that the table's and the games' definitions cite,
    with the sentence that applies it and where."""
    cited: dict[int, list[str]] = {}
    for module in _DECISION_SOURCES:
        name = module.__name__.removeprefix("poker.engine.")
        for where, doc in _docstrings(module, name):
            for sentence in re.split(r"(?<=[.;])\s+", " ".join(doc.split())):
                for number in sorted({int(n) for n in _DECISION.findall(sentence)}):
                    entry = f"`{where}`: {sentence[:400]}"
                    if entry not in cited.setdefault(number, []):
                        cited[number].append(entry)
    lines = [
        "## Decisions cited by the definitions\n",
        "Where the table's and the games' definitions apply a decision of the room's rule book "
        "(from their docstrings).\n",
    ]
    for number in sorted(cited):
        lines.append(f"- **A{number}**")
        lines.extend(f"  - {entry}" for entry in cited[number])
    return "\n".join(lines) + "\n"


def _docstrings(module: Any, name: str) -> Iterable[tuple[str, str]]:
    if module.__doc__:
        yield name, module.__doc__
    for member_name, member in sorted(vars(module).items()):
        if member_name.startswith("_") or getattr(member, "__module__", None) != module.__name__:
            continue
        if not member.__doc__:
            continue
        if inspect.isclass(member) or inspect.isfunction(member):
            yield f"{name}.{member_name}", member.__doc__
