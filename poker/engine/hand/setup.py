"""Setting a hand up (RULES.md §1, §4.2, §11): the rules a StartHand must satisfy
(``verify_*``: players, deck, stakes and switches), the hand's setup and first state from
HandStarted (seats, button and blinds, the table's game with its draw switches, each street's
fresh betting round), and the handlers of the hand's first and voided events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Final

from poker.engine.betting import (
    STRUCTURES,
    OddChipCards,
    OddChipStud,
    PatRestrictionLift,
    PostDrawFirstActor,
    Round,
    Structure,
)
from poker.engine.cards import Card, format_cards
from poker.engine.games import (
    GAMES,
    BetSize,
    FirstActor,
    ForcedBets,
    GameDefinition,
    get_game,
    with_draw_switches,
)
from poker.engine.hand import core
from poker.engine.hand.codec import cached_config_from_wire
from poker.engine.hand.commands import HandConfig, StartHand
from poker.engine.hand.errors import (
    HandAlreadyStarted,
    InvalidDeck,
    InvalidHandSetup,
    TooFewPlayers,
)
from poker.engine.hand.events import HandEventHandler
from poker.engine.hand.posts import positions
from poker.engine.hand.state import (
    NOBODY,
    HandSetup,
    HandState,
)
from poker.engine.hand.void import hand_voided
from poker.v1 import events_pb2 as pb

# --- verifying a StartHand ----------------------------------------------------------------


def verify_no_hand(state: HandState | None) -> None:
    """A hand cannot start on top of a running one."""
    if state is not None and not state.ended:
        raise HandAlreadyStarted("A hand is already being played at this table.")


def verify_start(command: StartHand) -> GameDefinition:
    """Everything a :class:`StartHand` must satisfy; returns the game."""
    game = _verify_config_once(command.config)
    if not command.hand_id:
        raise InvalidHandSetup("A hand needs an id.")
    verify_players(command, game)
    verify_deck(command.deck, game)
    return game


def _verify_config(config: HandConfig) -> GameDefinition:
    game = GAMES.get(config.game)
    if game is None:
        raise InvalidHandSetup(f"{config.game!r} is not a game played here.")
    verify_stakes(config, game)
    return game


# A configuration that passed once passes again; a failing one raises and is not remembered.
_verify_config_once: Final = core.remembered(_verify_config)


def verify_stakes(config: HandConfig, game: GameDefinition) -> None:
    """Stakes and switches must make sense for the structure."""
    stakes = config.stakes
    rules = config.rules
    unit = rules.chip_unit
    if type(unit) is not int or unit < 1:
        raise InvalidHandSetup("The chip unit must be a whole number of at least 1.")
    if rules.max_raises < 0 or rules.action_timer_ms < 0:
        raise InvalidHandSetup("The raise cap and the action timer cannot be negative.")
    spread_cap = rules.spread_max_raises
    if spread_cap is not None:
        if config.structure is not Structure.SPREAD_LIMIT:
            raise InvalidHandSetup("spread_max_raises is the raise cap of spread-limit tables.")
        if type(spread_cap) is not int or spread_cap < 0:
            raise InvalidHandSetup("The spread-limit raise cap cannot be negative.")
    _verify_draw_switches(config, game)
    if rules.burn_cards and (
        game.forced_bets is not ForcedBets.BLINDS
        or not any(street.board for street in game.streets)
    ):
        raise InvalidHandSetup(
            f"Burn cards go before the flop, the turn and the river (decision A31); {game.name} "
            "has none."
        )
    stud = game.forced_bets is ForcedBets.ANTE_BRING_IN
    if stud:
        _verify_stud_stakes(config, game)
    elif (
        rules.odd_chip_stud is not OddChipStud.HIGH_CARD_BY_SUIT
        or rules.odd_chip_cards is not OddChipCards.ALL_CARDS
    ):
        raise InvalidHandSetup(
            f"In {game.name} odd chips go clockwise from the button: odd_chip_stud and "
            "odd_chip_cards are for stud-type games."
        )
    elif not 0 < stakes.small_blind <= stakes.big_blind:
        raise InvalidHandSetup("The blinds must be positive, the small one not above the big one.")
    elif stakes.bring_in:
        raise InvalidHandSetup(f"{game.name} has blinds, not a bring-in.")
    minimum_bet = stakes.bring_in if stud else stakes.big_blind
    amounts = [stakes.small_blind, stakes.big_blind, stakes.ante, stakes.bring_in]
    if config.structure is Structure.FIXED_LIMIT:
        if not 0 < stakes.small_bet <= stakes.big_bet:
            raise InvalidHandSetup("Fixed limit needs a small bet and a big bet, small <= big.")
        if stud and stakes.bring_in >= stakes.small_bet:
            raise InvalidHandSetup("The bring-in must be smaller than the small bet.")
        amounts += [stakes.small_bet, stakes.big_bet]
    if config.structure is Structure.SPREAD_LIMIT:
        if len(stakes.spread_round_max) != len(game.streets):
            raise InvalidHandSetup(
                f"Spread limit needs a maximum for each of the {len(game.streets)} betting rounds."
            )
        if any(maximum < minimum_bet for maximum in stakes.spread_round_max):
            what = "the bring-in" if stud else "the big blind"
            raise InvalidHandSetup(f"A spread-limit round maximum cannot be below {what}.")
        amounts += list(stakes.spread_round_max)
    if stakes.ante < 0 or any(type(amount) is not int or amount % unit for amount in amounts):
        raise InvalidHandSetup(f"Stakes must be whole chips of {unit}, and the ante not negative.")


def _verify_draw_switches(config: HandConfig, game: GameDefinition) -> None:
    """The draw switches (RULES.md §11, A12-A15, A17) are for draw games only, and a draw
    replaces at most the cards a player holds."""
    rules = config.rules
    maximum = rules.max_discard
    if game.is_draw_game:
        if type(maximum) is not int or not 0 <= maximum <= game.hole_card_count:
            raise InvalidHandSetup(
                f"A draw replaces 1 to {game.hole_card_count} cards (0: the game's own maximum)."
            )
        return
    changed = [
        name
        for name, value in (
            ("max_discard", maximum),
            ("post_draw_first_actor", rules.post_draw_first_actor),
            ("split_pot_function", rules.split_pot_function),
        )
        if value
    ]
    if rules.pat_restriction_lift is not PatRestrictionLift.ANY_TIMELY_DRAW:
        changed.append("pat_restriction_lift")
    if not rules.reshuffle_include_folded:
        changed.append("reshuffle_include_folded")
    if changed:
        raise InvalidHandSetup(f"{game.name} has no draw: {', '.join(changed)} cannot be set.")


def _verify_stud_stakes(config: HandConfig, game: GameDefinition) -> None:
    """Stud-type games: antes and a bring-in, no blinds (RULES.md §4.2.2-4.2.3, §11)."""
    stakes = config.stakes
    rules = config.rules
    if stakes.small_blind or stakes.big_blind:
        raise InvalidHandSetup(f"{game.name} has no blinds: set the ante and the bring-in.")
    if type(stakes.bring_in) is not int or stakes.bring_in <= 0:
        raise InvalidHandSetup(f"{game.name} needs a bring-in of at least one chip.")
    if rules.telesina_high_card not in ("card_by_card", "ranks_then_suits"):
        raise InvalidHandSetup("Telesina's high-card rule is card_by_card or ranks_then_suits.")
    if rules.telesina_headsup_sf not in ("exact", "any_low_sf_beats_royal", "off"):
        raise InvalidHandSetup(
            "Telesina's heads-up straight-flush rule is exact, any_low_sf_beats_royal or off."
        )
    if (
        rules.odd_chip_cards is OddChipCards.FIVE_CARD_HAND
        and rules.odd_chip_stud is not OddChipStud.HIGH_CARD_BY_SUIT
    ):
        raise InvalidHandSetup(
            "odd_chip_cards five_card_hand names the cards high_card_by_suit compares; "
            f"odd_chip_stud {rules.odd_chip_stud.name.lower()} compares no cards."
        )
    order = rules.bring_in_suit_order
    if order and sorted(order) != sorted("shdc"):
        raise InvalidHandSetup(
            "The bring-in suit order must name the four suits s, h, d, c once each, highest first."
        )


_INT_ONLY: Final = {int}


def verify_players(command: StartHand, game: GameDefinition) -> None:
    """Two to the game's maximum of players, distinct seats, chips in front, button dealt in
    (explicit blinds: the big blind dealt in, the small blind another seat, if any)."""
    seats = [entry.seat for entry in command.seats]
    if len(seats) < 2:
        raise TooFewPlayers("A hand needs at least two players.")
    if len(seats) > game.max_players:
        raise InvalidHandSetup(f"{game.name} is played by at most {game.max_players} players.")
    # The types first (an unhashable seat cannot go into a set), all in C: no generator.
    if set(map(type, seats)) != _INT_ONLY or len(set(seats)) != len(seats):
        raise InvalidHandSetup("Every player needs his own seat number.")
    unit = command.config.rules.chip_unit
    for entry in command.seats:
        if type(entry.stack) is not int or entry.stack <= 0 or entry.stack % unit:
            raise InvalidHandSetup(
                f"Seat {entry.seat} needs a stack of whole chips to be dealt in."
            )
    if game.forced_bets is ForcedBets.ANTE_BRING_IN and (
        command.posts or command.big_blind is not None
    ):
        raise InvalidHandSetup(f"{game.name} has no blinds to post; every player antes.")
    if command.big_blind is None:
        if command.button not in seats:
            raise InvalidHandSetup(f"The button is on seat {command.button}, who is not dealt in.")
        return
    # Explicit blinds (the dead button): the button and the small blind may be any seats.
    small, big = command.small_blind, command.big_blind
    if type(command.button) is not int or (small is not None and type(small) is not int):
        raise InvalidHandSetup("The button and the small blind must be seat numbers.")
    if big not in seats:
        raise InvalidHandSetup(f"The big blind is on seat {big}, who is not dealt in.")
    if small == big:
        raise InvalidHandSetup(f"Seat {big} cannot post both blinds.")


def verify_deck(deck: tuple[Card, ...], game: GameDefinition) -> None:
    """The deck must hold every card of the game's deck exactly once."""
    if len(deck) == len(game.deck) and set(deck) == game.card_set:
        return
    if any(type(card) is not Card for card in deck):
        raise InvalidDeck("The deck must be made of cards.")
    counts = Counter(deck)
    repeated = sorted(card for card, count in counts.items() if count > 1)
    if repeated:
        raise InvalidDeck(f"The deck holds {format_cards(repeated)} more than once.")
    allowed = set(game.deck)
    foreign = [card for card in deck if card not in allowed]
    if foreign:
        raise InvalidDeck(f"{format_cards(foreign)} do not belong in the {game.name} deck.")
    missing = sorted(allowed - counts.keys())
    if missing:
        raise InvalidDeck(f"The deck is missing {format_cards(missing)}.")


# --- HandStarted ------------------------------------------------------------------------------


def fresh_round(config: HandConfig, game: GameDefinition, street: int) -> Round:
    """The betting facts at the beginning of ``street``'s round, before any wager."""
    stakes = config.stakes
    structure = config.structure
    if structure is Structure.FIXED_LIMIT:
        size = game.streets[street].bet_size
        unit = stakes.small_bet if size is BetSize.SMALL else stakes.big_bet
        return Round(min_increment=unit, unit=unit)
    unit = 0
    if structure is Structure.SPREAD_LIMIT:
        # Every street of these games holds one betting round, so street = round number.
        unit = stakes.spread_round_max[street]
    # The minimum bet is the big blind in every round (RULES.md §4.3); in stud-type games,
    # which have no blinds, the bring-in (decision A34).
    stud = game.forced_bets is ForcedBets.ANTE_BRING_IN
    return Round(min_increment=stakes.bring_in if stud else stakes.big_blind, unit=unit)


_AFTER_DRAW: Final = {
    None: None,
    PostDrawFirstActor.LEFT_OF_BIG_BLIND: FirstActor.LEFT_OF_BIG_BLIND,
    PostDrawFirstActor.LEFT_OF_BUTTON: FirstActor.LEFT_OF_BUTTON,
}


def _table_game(config: HandConfig) -> GameDefinition:
    """The game of ``config`` with the table's draw switches applied (RULES.md §11, A13, A15,
    A17): the definition the hand walks, ``HandSetup.game``."""
    rules = config.rules
    return with_draw_switches(
        get_game(config.game),
        max_discard=rules.max_discard,
        after_draw=_AFTER_DRAW[rules.post_draw_first_actor],
        split_offer=rules.split_pot_function,
    )


table_game: Final = core.remembered(_table_game)
""":func:`_table_game`, remembered per config (one lookup per hand)."""


def _all_fresh_rounds(config: HandConfig) -> tuple[Round, ...]:
    """Every street's fresh round."""
    game = table_game(config)
    return tuple(fresh_round(config, game, street) for street in range(len(game.streets)))


_fresh_rounds: Final = core.remembered(_all_fresh_rounds)


def _hand_started(state: HandState | None, event: pb.HandStarted) -> HandState:
    """HandStarted: the setup of the hand and its first state (``button`` and the blinds are
    seat numbers in the event; no ``big_blind``: the blinds follow the button)."""
    config = cached_config_from_wire(event.game, event.structure, event.stakes, event.rules)
    # The entries listed once (each read of the repeated field makes wrapper objects), then a
    # comprehension per column: cheaper than one loop appending to two lists.
    entries = list(event.seats)
    seats = tuple([entry.seat for entry in entries])
    stacks = tuple([entry.stack for entry in entries])
    button = event.button
    game = table_game(config)
    if game.forced_bets is ForcedBets.ANTE_BRING_IN:  # no blinds: antes and the bring-in
        button_index, small_index, big_index = seats.index(button), NOBODY, NOBODY
    else:
        # Heads-up the button posts the small blind (RULES.md §4.2.1); explicit blinds: dead
        # button. The small blind is only ever written with the big one, and without the big
        # one positions() ignores it: one presence check in the usual hand.
        explicit = event.HasField("big_blind")
        button_index, small_index, big_index = positions(
            seats,
            button,
            event.small_blind if explicit and event.HasField("small_blind") else None,
            event.big_blind if explicit else None,
        )
    fresh_rounds = _fresh_rounds(config)
    posts = event.posts
    setup = HandSetup(
        hand_id=event.hand_id,
        config=config,
        game=game,
        strategy=STRUCTURES[config.structure],
        seats=seats,
        starting_stacks=stacks,
        button=button_index,
        small_blind=small_index,
        big_blind=big_index,
        deck=event.deck,
        started_at=event.started_at,
        fresh_rounds=fresh_rounds,
        posts=(
            tuple([(seats.index(post.seat), post.live, post.dead) for post in posts])
            if posts
            else ()
        ),
        button_seat=button,
        server_seed=event.server_seed,
        player_seeds=(
            tuple([(entry.seat, entry.seed) for entry in event.player_seeds])
            if event.player_seeds
            else ()
        ),
    )
    return core.first_state(setup=setup, stacks=stacks, round=fresh_rounds[0])


def _deck_revealed(state: HandState, event: pb.DeckRevealed) -> HandState:
    """DeckRevealed: the hand is over and its server seed public; nothing of the hand changes
    (the setup held the seed since HandStarted)."""
    return state


SETUP_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "hand_started": _hand_started,
    "hand_voided": hand_voided,
    "deck_revealed": _deck_revealed,
}
"""The handlers of a hand's first event and of its cancellation, part of evolve's one table."""
