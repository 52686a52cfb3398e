"""Checking a finished hand of a committed deck (:mod:`poker.engine.fairness`): the commitment,
the derivation, and that every card dealt follows from it.

:func:`verify_hand` takes the hand's events as a viewer may read them (the operator: all of
them; a player dealt in: his own cards, the others' as ``??`` until shown, and the reveal). It
rebuilds the hand with the engine's own handlers from the derived deck and, at each dealing
event, asks the engine's dealing rules what they deal from that deck (:func:`~poker.engine.hand.
dealing.deal_street`, the draws' stub and reshuffle), comparing every card the viewer can see.
A card hidden from the viewer is taken from the derivation, so the replay goes on; only another
player's unseen discards stop it (what is left in his hand is then unknown): the check says so.

>>> from poker.engine.betting import Stakes, Structure
>>> from poker.engine.table import Act, Action, CreateTable, SitDown, StartNextHand, execute
>>> from poker.engine.table import envelopes, make_config
>>> table, events = execute(None, CreateTable(make_config("holdem", Structure.NO_LIMIT,
...                                                       Stakes(1, 2)), now=0))
>>> for seat in (1, 2):
...     table, _ = execute(table, SitDown(seat, f"p{seat}", 200, f"h{seat}", now=0))
>>> before = table
>>> table, started = execute(table, StartNextHand("t.1", (), 10**6, server_seed=bytes(32)))
>>> hand = envelopes(before, started, table_id="t", now=10**6)
>>> folder = table.hand.setup.seats[table.hand.to_act]
>>> after, ended = execute(table, Act(folder, f"p{folder}", Action.FOLD, now=10**6 + 1))
>>> hand += envelopes(table, ended, table_id="t", now=10**6 + 1)
>>> check = verify_hand([event for event in hand if event.hand_id == "t.1"])
>>> check.ok, check.cards_checked
(True, 4)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from poker.engine.fairness import PlayerSeed, commitment, derive_deck, derive_reshuffle
from poker.engine.games import GAMES
from poker.engine.hand.codec import cards_to_wire
from poker.engine.hand.dealing import deal_street
from poker.engine.hand.draws import barred_cards, reshuffled_stub, stub_text, take_cards
from poker.engine.hand.events import HandEvent
from poker.engine.hand.evolve import HANDLERS, apply
from poker.engine.hand.state import HandState
from poker.v1 import events_pb2 as pb

HIDDEN: Final = "??"
#: A tampered hand could differ at every card: the first ones tell enough.
MAX_PROBLEMS: Final = 20


@dataclass(slots=True)
class HandCheck:
    """What :func:`verify_hand` found: ``problems`` (sentences; none: the hand is fair as far as
    the viewer can see), how many cards it compared, and ``unchecked`` (why the rest could not
    be, or "")."""

    hand_id: str
    problems: list[str] = field(default_factory=list)
    cards_checked: int = 0
    unchecked: str = ""
    player_seeds: tuple[PlayerSeed, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether nothing was found wrong."""
        return not self.problems

    def add(self, problem: str) -> None:
        """Record one problem (at most :data:`MAX_PROBLEMS`)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)


def verify_hand(
    events: Sequence[pb.TableEvent], *, given_seeds: Mapping[int, bytes] | None = None
) -> HandCheck:
    """Check the finished hand whose events are ``events`` (in order, HandStarted first).
    ``given_seeds``: seeds a player says he gave, by seat; each must be the one the hand used."""
    start = next((event for event in events if event.HasField("hand_started")), None)
    if start is None:
        return HandCheck("", ["These events hold no HandStarted: there is no hand to check."])
    started = start.hand_started
    check = HandCheck(started.hand_id)
    name = started.hand_id
    if not started.deck_commitment:
        check.add(f"Hand {name} was not dealt from a committed deck (it predates the scheme).")
        return check
    reveal = next(
        (event.deck_revealed for event in events if event.HasField("deck_revealed")), None
    )
    if reveal is None:
        check.add(f"Hand {name} has no DeckRevealed: it is not over, or not yours to see.")
        return check
    server_seed = reveal.server_seed
    if commitment(server_seed) != started.deck_commitment:
        check.add(
            f"The commitment of hand {name} does not match its revealed server seed: HandStarted"
            f" committed {started.deck_commitment.hex()}, the seed hashes to "
            f"{commitment(server_seed).hex()}."
        )
        return check
    seeds = tuple((entry.seat, entry.seed) for entry in started.player_seeds)
    check.player_seeds = seeds
    _check_given_seeds(check, seeds, given_seeds or {})
    game = GAMES.get(started.game)
    if game is None:
        check.add(f"Hand {name} names the game {started.game!r}, which is not played here.")
        return check
    deck = cards_to_wire(derive_deck(game.deck, server_seed, seeds, name))
    if started.deck and started.deck != deck:
        check.add(f"The deck of hand {name} is not the deck its seeds derive.")
    _check_cards(check, events, started, deck=deck, server_seed=server_seed, seeds=seeds)
    return check


def _check_given_seeds(
    check: HandCheck, used: tuple[PlayerSeed, ...], given: Mapping[int, bytes]
) -> None:
    recorded = dict(used)
    for seat, seed in sorted(given.items()):
        actual = recorded.get(seat)
        if actual != seed:
            what = actual.hex() if actual is not None else "no seed"
            check.add(
                f"Hand {check.hand_id} was dealt with {what} as seat {seat}'s seed, not the seed"
                f" given ({seed.hex()})."
            )


class _Dealer:
    """A recorder for the engine's dealing rules: collects what they deal from a state."""

    def __init__(self, state: HandState) -> None:
        self.state = state
        self.events: list[HandEvent] = []

    def emit(self, event: HandEvent) -> HandState:
        self.state = apply(self.state, event)
        self.events.append(event)
        return self.state


def _check_cards(
    check: HandCheck,
    events: Sequence[pb.TableEvent],
    started: pb.HandStarted,
    *,
    deck: str,
    server_seed: bytes,
    seeds: tuple[PlayerSeed, ...],
) -> None:
    """Replay the hand from the derived deck, comparing every dealt card the viewer sees."""
    first = pb.HandStarted()
    first.CopyFrom(started)
    first.deck = deck
    state = apply(None, first)
    pending: list[HandEvent] = []  # what the engine dealt for the street, not yet recorded
    seen_start = False
    for envelope in events:
        body_name = envelope.WhichOneof("body")
        if body_name == "hand_started":
            seen_start = True
            continue
        if not seen_start or body_name is None or body_name not in HANDLERS:
            continue
        body = getattr(envelope, body_name)
        if body_name in ("hole_cards_dealt", "board_dealt"):
            if not pending or type(pending[0]) is not type(body):
                dealer = _Dealer(state)
                deal_street(dealer, body.street)
                pending = dealer.events
            if not pending or type(pending[0]) is not type(body):
                check.add(
                    f"Hand {check.hand_id} deals cards at street {body.street} where its"
                    " rules deal none."
                )
                return
            expected = pending.pop(0)
            _compare_deal(check, body, expected)
            state = apply(state, expected)
        elif body_name == "discards_reshuffled":
            setup = state.setup
            order = derive_reshuffle(
                setup.game.deck,
                server_seed,
                seeds,
                setup.hand_id,
                street=state.street,
                seat=body.seat,
            )
            stub = reshuffled_stub(state, order)
            if body.stub and body.stub != stub:
                check.add(
                    f"Hand {check.hand_id}: the reshuffle for seat {body.seat} is not the"
                    " one its seeds derive."
                )
            check.cards_checked += len(body.stub) // 2
            state = apply(state, pb.DiscardsReshuffled(seat=body.seat, stub=stub))
        elif body_name == "cards_drawn":
            drawn = _expected_draw(check, state, body)
            if drawn is None:
                return
            state = apply(state, drawn)
        else:
            state = apply(state, body)


def _expected_draw(check: HandCheck, state: HandState, body: pb.CardsDrawn) -> pb.CardsDrawn | None:
    """The draw as the stub serves it (None when the viewer cannot follow it: the check ends)."""
    if HIDDEN in body.discarded:
        check.unchecked = (
            f"seat {body.seat}'s discards are not yours to see: the cards from his draw on were"
            " not checked"
        )
        return None
    index = state.setup.index_of(body.seat)
    drawn = take_cards(stub_text(state), body.count, barred_cards(state, index)) or ""
    _compare_cards(check, f"seat {body.seat}'s draw", body.drawn, drawn)
    expected = pb.CardsDrawn()
    expected.CopyFrom(body)
    expected.drawn = drawn
    return expected


def _compare_deal(check: HandCheck, recorded: HandEvent, expected: HandEvent) -> None:
    if isinstance(recorded, pb.BoardDealt) and isinstance(expected, pb.BoardDealt):
        _compare_cards(
            check, f"the board of street {recorded.street}", recorded.cards, expected.cards
        )
        return
    assert isinstance(recorded, pb.HoleCardsDealt) and isinstance(expected, pb.HoleCardsDealt)
    wanted = {hand.seat: hand for hand in expected.hands}
    if sorted(wanted) != sorted(hand.seat for hand in recorded.hands):
        check.add(
            f"Hand {check.hand_id} deals street {recorded.street} to other seats than its rules do."
        )
        return
    for hand in recorded.hands:
        where = f"seat {hand.seat}'s cards of street {recorded.street}"
        _compare_cards(check, where, hand.down, wanted[hand.seat].down)
        _compare_cards(check, where, hand.up, wanted[hand.seat].up)


def _compare_cards(check: HandCheck, where: str, recorded: str, expected: str) -> None:
    """Compare card strings card by card, skipping the cards hidden from the viewer."""
    if len(recorded) != len(expected):
        check.add(
            f"Hand {check.hand_id}: {where} are {recorded or 'none'}; the seeds derive"
            f" {expected or 'none'}."
        )
        return
    for offset in range(0, len(recorded), 2):
        card = recorded[offset : offset + 2]
        if card == HIDDEN:
            continue
        check.cards_checked += 1
        if card != expected[offset : offset + 2]:
            check.add(f"Hand {check.hand_id}: {where} are {recorded}; the seeds derive {expected}.")
            return


__all__ = ["MAX_PROBLEMS", "HandCheck", "verify_hand"]
