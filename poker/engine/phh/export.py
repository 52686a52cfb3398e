"""From a finished hand's events to a PHH hand history.

Players are numbered as PHH numbers them: ``p1`` is the first player left of the button, ``pN`` the
button (heads-up ``p1`` is the big blind). ``seats`` records the table seat numbers and ``hand``
the hand id. Every hole card dealt is written (the events hold them all), the board as far as it
was dealt, and the showdown as it happened (``pK sm cards`` for a shown hand, ``pK sm`` for a
mucked one). Forced bets, returned bets and pot awards are not actions in PHH: a reader derives
them. Time-outs are written as the fold or check they caused, with a ``# timed out`` commentary.
Stud-type games: the bring-in is PHH's ``pK pb`` (``# timed out`` when it was posted for a player
whose time ran out, then his fold), a completion is a ``cbr``, each street's hole cards are written
down cards first, then up cards, and the 7th-street common card is a ``d db``. ``finishing_stacks``
holds our result, so that a reader can check its own. Draw games: a draw is PHH's ``pK sd`` with
the cards thrown away (none: stood pat; ``# timed out`` when the draw time ran out; a player
all-in by the disconnection protection stands pat unasked, RULES.md §6.5, written the same)
followed by ``d dh pK`` with their replacements; a reshuffle of the discards is not written (a
reader deals the replacements the file shows).

Two table rules have no PHH form and are written as extensions that other PHH readers ignore
(the leading comment says so): forced posts beyond the blinds (an entering player's big blind, a
missed small blind) as the user-defined field ``_extra_posts = [{player = "p3", live = 2,
dead = 1}]``, and the disconnection protection as a no-op commentary ``# p3 artificial all-in
for 6`` at the point of the time-out; 32-Card Draw's answers to the split offer as no-op
commentaries ``# p2 split`` and ``# p2 no split`` (``# p2 no split timed out``), the split pots
following from them. A voided hand has no hand history: it did not happen.

A dead-button hand (``button_rule = dead_button``) is written as it was played when both blinds
were posted: PHH positions are relative (``p1`` the small blind, ``p2`` the big blind, ``pN`` the
last player before the button), so a button on an empty seat changes nothing a reader needs;
``seats`` keeps the table seats. A hand dealt without a small blind (a dead small blind) is
refused: PHH derives the blinds from the positions and cannot say that nobody posted one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from poker.engine.betting import Structure
from poker.engine.games import get_game
from poker.engine.hand.codec import config_from_wire
from poker.engine.hand.events import HandEvent
from poker.engine.phh.config import config_to_fields
from poker.engine.phh.model import HandHistory, dump_phh
from poker.engine.phh.variants import is_standard, parse_variant, variant_code
from poker.v1 import events_pb2 as pb

Players = dict[int, str]  # seat number -> "pK"


def export_hand(events: Iterable[HandEvent | pb.TableEvent]) -> str:
    """The PHH text of one finished hand, given its events (bare or in their envelopes).

    ValueError with a sentence when the events are not one whole hand.
    """
    history = history_from_events(events)
    comment = _comment(history.variant)
    if "_extra_posts" in history.fields or any(
        "artificial all-in" in a or a.endswith((" split", " no split", "split timed out"))
        for a in history.actions
    ):
        comment += (
            "\nuses poker.engine.phh extensions (extra posts, artificial all-ins) others ignore"
        )
    return dump_phh(history, comment)


def history_from_events(events: Iterable[HandEvent | pb.TableEvent]) -> HandHistory:
    """The :class:`HandHistory` of one finished hand, given its events."""
    # The deck's reveal follows HandEnded (provably fair decks): no part of the PHH record.
    bodies = [body for body in map(_body, events) if not isinstance(body, pb.DeckRevealed)]
    if not bodies or not isinstance(bodies[0], pb.HandStarted):
        raise ValueError("The events do not begin with the start of a hand.")
    started = bodies[0]
    ended = bodies[-1]
    if any(isinstance(body, pb.HandVoided) for body in bodies):
        raise ValueError("A voided hand has no hand history: every chip was given back.")
    if not isinstance(ended, pb.HandEnded):
        raise ValueError("The hand is not over yet; only finished hands can be exported.")
    config = config_from_wire(started.game, started.structure, started.stakes, started.rules)
    order = _phh_order([entry.seat for entry in started.seats], started.button)
    if started.HasField("big_blind"):
        _check_blinds_relative(started, order)
    players = {seat: f"p{number}" for number, seat in enumerate(order, start=1)}
    stacks = {entry.seat: entry.stack for entry in started.seats}
    finishing = {result.seat: result.stack for result in ended.results}
    phh, user = config_to_fields(config, len(order))
    if started.posts:
        user["_extra_posts"] = [
            {"player": players[post.seat], "live": post.live, "dead": post.dead}
            for post in started.posts
        ]
    return HandHistory(
        variant=variant_code(config.game, config.structure),
        starting_stacks=tuple(stacks[seat] for seat in order),
        actions=tuple(_actions(bodies[1:], players)),
        hand=started.hand_id or None,
        seats=tuple(order),
        finishing_stacks=tuple(finishing[seat] for seat in order),
        fields=user,
        **phh,
    )


def _body(event: HandEvent | pb.TableEvent) -> Any:
    if isinstance(event, pb.TableEvent):
        name = event.WhichOneof("body")
        return None if name is None else getattr(event, name)
    return event


def _phh_order(seats: Sequence[int], button: int) -> list[int]:
    """Seats clockwise from the first one left of the button's seat (dealt in or, for a dead
    button, not); the button, or the last player before it, last."""
    ordered = sorted(seats)
    start = bisect_right(ordered, button)
    return ordered[start:] + ordered[:start]


def _check_blinds_relative(started: pb.HandStarted, order: list[int]) -> None:
    """Explicit blinds (a dead button) must sit where PHH puts them: ``p1`` the small blind and
    ``p2`` the big blind (heads-up: ``pN``, the button, and ``p1``)."""
    small = started.small_blind if started.HasField("small_blind") else None
    if small not in order:
        raise ValueError(
            "This hand was dealt without a small blind (a dead small blind under the dead-button "
            "rule); PHH derives the blinds from the positions and cannot record it."
        )
    expected = (order[-1], order[0]) if len(order) == 2 else (order[0], order[1])
    if (small, started.big_blind) != expected:
        raise ValueError(
            "The blinds of this hand are not where PHH puts them; it cannot be exported."
        )


def _actions(events: Iterable[Any], players: Players) -> list[str]:
    actions: list[str] = []
    for event in events:
        writer = _WRITERS.get(type(event))
        if writer is not None:
            actions.extend(writer(event, players))
    return actions


def _hole(event: pb.HoleCardsDealt, players: Players) -> list[str]:
    return [f"d dh {players[hand.seat]} {hand.down}{hand.up}" for hand in event.hands]


def _board(event: pb.BoardDealt, players: Players) -> list[str]:
    return [f"d db {event.cards}"] if event.cards else []


def _timed(text: str, timed_out: bool) -> list[str]:
    return [f"{text} # timed out" if timed_out else text]


def _folded(event: pb.Folded, players: Players) -> list[str]:
    return _timed(f"{players[event.seat]} f", event.timed_out)


def _checked(event: pb.Checked, players: Players) -> list[str]:
    return _timed(f"{players[event.seat]} cc", event.timed_out)


def _called(event: pb.Called, players: Players) -> list[str]:
    return [f"{players[event.seat]} cc"]


def _wager(event: pb.BetPlaced | pb.RaisedTo | pb.Completed, players: Players) -> list[str]:
    return [f"{players[event.seat]} cbr {event.amount}"]


def _bring_in(event: pb.BringInPosted, players: Players) -> list[str]:
    return _timed(f"{players[event.seat]} pb", event.timed_out)


def _shown(event: pb.HandShown, players: Players) -> list[str]:
    return [f"{players[event.seat]} sm {event.cards}"]


def _mucked(event: pb.HandMucked, players: Players) -> list[str]:
    return [f"{players[event.seat]} sm"]


def _drawn(event: pb.CardsDrawn, players: Players) -> list[str]:
    player = players[event.seat]
    lines = _timed(f"{player} sd {event.discarded}".rstrip(), event.timed_out)
    if event.drawn:
        lines.append(f"d dh {player} {event.drawn}")
    return lines


def _split_agreed(event: pb.SplitAgreed, players: Players) -> list[str]:
    return [f"# {players[event.seat]} split"]


def _split_refused(event: pb.SplitRefused, players: Players) -> list[str]:
    return [f"# {players[event.seat]} no split" + (" timed out" if event.timed_out else "")]


def _artificial_all_in(event: pb.ArtificialAllIn, players: Players) -> list[str]:
    return [f"# {players[event.seat]} artificial all-in for {event.contributed}"]


_WRITERS: Final[dict[type, Callable[[Any, Players], list[str]]]] = {
    pb.HoleCardsDealt: _hole,
    pb.BoardDealt: _board,
    pb.Folded: _folded,
    pb.Checked: _checked,
    pb.Called: _called,
    pb.BetPlaced: _wager,
    pb.RaisedTo: _wager,
    pb.Completed: _wager,
    pb.BringInPosted: _bring_in,
    pb.HandShown: _shown,
    pb.HandMucked: _mucked,
    pb.ArtificialAllIn: _artificial_all_in,
    pb.CardsDrawn: _drawn,
    pb.SplitAgreed: _split_agreed,
    pb.SplitRefused: _split_refused,
}

_STRUCTURE_NAMES: Final = {
    Structure.FIXED_LIMIT: "fixed limit",
    Structure.SPREAD_LIMIT: "spread limit",
    Structure.POT_LIMIT: "pot limit",
    Structure.HALF_POT_LIMIT: "half-pot limit",
    Structure.NO_LIMIT: "no limit",
}


def _comment(code: str) -> str:
    """A leading comment naming the game; for our extension codes, saying they are ours."""
    game, structure = parse_variant(code)
    name = f"{get_game(game).name}, {_STRUCTURE_NAMES[structure]}"
    if is_standard(code):
        return name
    return f"{name}: variant {code} is poker.engine.phh's extension of the PHH variant codes"
