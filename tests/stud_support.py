"""Helpers for stud hand tests: decks stacked street by street, played through the hand Table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from poker.engine.betting import BettingRules, Stakes, Structure, stud_stakes
from poker.engine.cards import Card, parse_cards
from poker.engine.games import get_game
from poker.engine.hand.rake import RakeSchedule
from tests.hand_support import FL, Table

STUD = "seven-card-stud"
STUD_HI_LO = "seven-card-stud-hi-lo"
STAKES = stud_stakes(10, 20, ante=2, bring_in=5)


def stud_deck(
    game_key: str,
    order: Sequence[int],
    hole: Mapping[int, str],
    folds: Mapping[int, int] | None = None,
    board: str = "",
) -> tuple[Card, ...]:
    """A deck that deals each seat of ``order`` (dealing order, clockwise from the left of the
    dealer position) the cards ``hole[seat]`` in the order he receives them, street by street.

    ``folds[seat]`` is the index of the street on which the seat folds: he is dealt no card
    after it. ``board`` is dealt on the streets that deal community cards (Telesina's vela).
    Seats short of cards, and the rest of the deck, take the unused cards in order.
    """
    game = get_game(game_key)
    wanted = {seat: list(parse_cards(text)) for seat, text in hole.items()}
    board_cards = list(parse_cards(board))
    used = {card for cards in wanted.values() for card in cards} | set(board_cards)
    spare = [card for card in game.deck if card not in used]
    folds = folds or {}
    deck: list[Card] = []
    for street_index, street in enumerate(game.streets):
        players = [seat for seat in order if folds.get(seat, len(game.streets)) >= street_index]
        if len(deck) + (street.down + street.up) * len(players) > len(game.deck):
            break  # the stub runs short: the rest of the deck, the common card first
        for _ in range(street.down + street.up):
            for seat in players:
                cards = wanted.get(seat)
                deck.append(cards.pop(0) if cards else spare.pop(0))
        deck.extend(
            board_cards.pop(0) if board_cards else spare.pop(0) for _ in range(street.board)
        )
    deck += [card for card in spare if card not in deck]
    return tuple(deck)


def stud_table(
    stacks: Mapping[int, int],
    hole: Mapping[int, str],
    *,
    button: int | None = None,
    game: str = STUD,
    structure: Structure = FL,
    stakes: Stakes = STAKES,
    rules: BettingRules | None = None,
    rake: RakeSchedule | None = None,
    folds: Mapping[int, int] | None = None,
    board: str = "",
) -> Table:
    """A stud hand; the dealer position defaults to the last seat (the chip box before seat 1)."""
    seats = sorted(stacks)
    dealer = seats[-1] if button is None else button
    start = (seats.index(dealer) + 1) % len(seats)
    order = seats[start:] + seats[:start]
    deck = stud_deck(game, order, hole, folds, board)
    return Table(
        stacks,
        button=dealer,
        game=game,
        structure=structure,
        stakes=stakes,
        rules=rules,
        rake=rake,
        deck=deck,
    )


def call_down(table: Table) -> None:
    """Every player brings in, calls or checks until the hand is over."""
    while not table.state.ended:
        seat = table.to_act
        assert seat is not None
        legal = table.legal()
        action = "bring_in" if "bring_in" in legal else "call" if "call" in legal else "check"
        table.act(seat, action)
