"""Between engine values and the wire: hand configuration and cards.

Cards travel as card strings, their text forms one after the other ("AsKd"), see events.proto.

>>> config = HandConfig("holdem", Structure.NO_LIMIT, Stakes(1, 2), rake=RakeSchedule())
>>> config_from_wire(*config_to_wire(config)) == config
True
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from poker.engine.betting import (
    DRAW_TIMER_MS,
    BettingRules,
    HeadsUpUncap,
    IncompleteRaiseRule,
    OddChipCards,
    OddChipStud,
    PatRestrictionLift,
    PostDrawFirstActor,
    Stakes,
    Structure,
    StudTieBreak,
)
from poker.engine.cards import DECK_52, Card
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.core import remembered
from poker.engine.hand.rake import RakeDistribution, RakeSchedule
from poker.v1 import events_pb2 as pb

CARD_BY_TEXT: Final[dict[str, Card]] = {str(card): card for card in DECK_52}
CARD_TEXT: Final[tuple[str, ...]] = tuple(str(card) for card in DECK_52)

# The open-pair switch on the wire: None is the game's default (unspecified).
_OPEN_PAIR_TO_WIRE: Final = {None: pb.OPEN_PAIR_RULE_UNSPECIFIED, True: pb.OPEN_PAIR_RULE_ON}
_OPEN_PAIR_TO_WIRE[False] = pb.OPEN_PAIR_RULE_OFF
_OPEN_PAIR_FROM_WIRE: Final = {wire: value for value, wire in _OPEN_PAIR_TO_WIRE.items()}
# Telesina's switches on the wire (0 is the default, the first name).
_TELESINA_HIGH_CARD: Final = ("card_by_card", "card_by_card", "ranks_then_suits")
_TELESINA_HEADS_UP: Final = ("exact", "exact", "any_low_sf_beats_royal", "off")
# The draw switches: the split offer as the open pair (None: the game's default), the folded
# hands' reshuffle as include / exclude (0 reads as include, the spec's default).
_SPLIT_POT_TO_WIRE: Final = {None: pb.SPLIT_POT_RULE_UNSPECIFIED, True: pb.SPLIT_POT_RULE_ON}
_SPLIT_POT_TO_WIRE[False] = pb.SPLIT_POT_RULE_OFF
_SPLIT_POT_FROM_WIRE: Final = {wire: value for value, wire in _SPLIT_POT_TO_WIRE.items()}
_RESHUFFLE_FOLDED: Final = (True, True, False)


def cards_to_wire(cards: Iterable[Card]) -> str:
    """The card string of ``cards``: their text forms one after the other.

    >>> from poker.engine.cards import parse_cards
    >>> cards_to_wire(parse_cards("As Kd 7c"))
    'AsKd7c'
    """
    return "".join([CARD_TEXT[card] for card in cards])


# Every one- and two-card string, read once: events are read far more often than written.
_SINGLE: Final[dict[str, tuple[Card, ...]]] = {text: (card,) for text, card in CARD_BY_TEXT.items()}
PAIR_CARDS: Final[dict[str, tuple[Card, ...]]] = {
    first + second: (CARD_BY_TEXT[first], CARD_BY_TEXT[second])
    for first in CARD_TEXT
    for second in CARD_TEXT
}
"""Every two-card string's cards (a Hold'em hand, for instance), for readers that inline the
usual case of :func:`cards_from_wire`."""
_PAIR: Final = PAIR_CARDS


def cards_from_wire(text: str) -> tuple[Card, ...]:
    """The cards of a card string (trusted: it comes from our own events).

    >>> cards_from_wire("AsKd7c"), cards_from_wire("")
    ((Card('As'), Card('Kd'), Card('7c')), ())
    """
    length = len(text)
    if length == 4:
        return _PAIR[text]
    cards: tuple[Card, ...] = ()
    for start in range(0, length - 3, 4):
        cards += _PAIR[text[start : start + 4]]
    if length % 4:
        cards += _SINGLE[text[-2:]]
    return cards


def config_to_wire(config: HandConfig) -> tuple[str, int, pb.Stakes, pb.HandRules]:
    """Game key, structure number, stakes and rules of ``config`` as protobuf values."""
    stakes = config.stakes
    rules = config.rules
    wire_rules = pb.HandRules(
        chip_unit=rules.chip_unit,
        max_raises=rules.max_raises,
        heads_up_uncap=rules.heads_up_uncap.value,  # type: ignore[arg-type]
        incomplete_raise_rule=rules.incomplete_raise_rule.value,  # type: ignore[arg-type]
        spread_round_ceiling=rules.spread_round_ceiling,
        action_timer_ms=rules.action_timer_ms,
        open_pair_double_bet=_OPEN_PAIR_TO_WIRE[rules.open_pair_double_bet],
        stud_common_card_betting=rules.stud_common_card_betting,
        stud_board_tie_break=rules.stud_board_tie_break.value,  # type: ignore[arg-type]
        bring_in_suit_order=rules.bring_in_suit_order,
        telesina_high_card=_TELESINA_HIGH_CARD.index(rules.telesina_high_card, 1),  # type: ignore[arg-type]
        telesina_headsup_sf=_TELESINA_HEADS_UP.index(rules.telesina_headsup_sf, 1),  # type: ignore[arg-type]
        draw_timer_ms=rules.draw_timer_ms,
        max_discard=rules.max_discard,
        pat_restriction_lift=rules.pat_restriction_lift.value,  # type: ignore[arg-type]
        reshuffle_include_folded=_RESHUFFLE_FOLDED.index(rules.reshuffle_include_folded, 1),  # type: ignore[arg-type]
        post_draw_first_actor=(
            rules.post_draw_first_actor.value if rules.post_draw_first_actor is not None else 0  # type: ignore[arg-type]
        ),
        split_pot_function=_SPLIT_POT_TO_WIRE[rules.split_pot_function],
        odd_chip_stud=rules.odd_chip_stud.value,  # type: ignore[arg-type]
        odd_chip_cards=rules.odd_chip_cards.value,  # type: ignore[arg-type]
        burn_cards=rules.burn_cards,
        spread_max_raises=rules.spread_max_raises,
    )
    if config.rake is not None:
        rake = config.rake
        wire_rules.rake.CopyFrom(
            pb.RakeSchedule(
                per=rake.per,
                step=rake.step,
                minimum_pot=rake.minimum_pot,
                band_below=rake.band_below,
                band_rake=rake.band_rake,
                caps=[pb.RakeCap(up_to_players=up_to, cap=cap) for up_to, cap in rake.caps],
                trigger_street=rake.trigger_street,
                distribution=rake.distribution.value,  # type: ignore[arg-type]
            )
        )
    wire_stakes = pb.Stakes(
        small_blind=stakes.small_blind,
        big_blind=stakes.big_blind,
        ante=stakes.ante,
        small_bet=stakes.small_bet,
        big_bet=stakes.big_bet,
        spread_round_max=stakes.spread_round_max,
        bring_in=stakes.bring_in,
    )
    return config.game, config.structure.value, wire_stakes, wire_rules


def config_from_wire(
    game: str, structure: int, stakes: pb.Stakes, rules: pb.HandRules
) -> HandConfig:
    """The :class:`HandConfig` that :func:`config_to_wire` wrote."""
    rake: RakeSchedule | None = None
    if rules.HasField("rake"):
        wire_rake = rules.rake
        rake = RakeSchedule(
            per=wire_rake.per,
            step=wire_rake.step,
            minimum_pot=wire_rake.minimum_pot,
            band_below=wire_rake.band_below,
            band_rake=wire_rake.band_rake,
            caps=tuple((cap.up_to_players, cap.cap) for cap in wire_rake.caps),
            trigger_street=wire_rake.trigger_street,
            distribution=RakeDistribution(
                wire_rake.distribution or RakeDistribution.PROPORTIONAL.value
            ),
        )
    return HandConfig(
        game=game,
        structure=Structure(structure),
        stakes=Stakes(
            small_blind=stakes.small_blind,
            big_blind=stakes.big_blind,
            ante=stakes.ante,
            small_bet=stakes.small_bet,
            big_bet=stakes.big_bet,
            spread_round_max=tuple(stakes.spread_round_max),
            bring_in=stakes.bring_in,
        ),
        rules=BettingRules(
            chip_unit=rules.chip_unit,
            max_raises=rules.max_raises,
            heads_up_uncap=HeadsUpUncap(rules.heads_up_uncap or HeadsUpUncap.ROUND_START.value),
            incomplete_raise_rule=IncompleteRaiseRule(
                rules.incomplete_raise_rule or IncompleteRaiseRule.HALF_BET.value
            ),
            spread_round_ceiling=rules.spread_round_ceiling,
            action_timer_ms=rules.action_timer_ms,
            open_pair_double_bet=_OPEN_PAIR_FROM_WIRE[rules.open_pair_double_bet],
            stud_common_card_betting=rules.stud_common_card_betting,
            stud_board_tie_break=StudTieBreak(
                rules.stud_board_tie_break or StudTieBreak.POSITION.value
            ),
            bring_in_suit_order=rules.bring_in_suit_order,
            telesina_high_card=_TELESINA_HIGH_CARD[rules.telesina_high_card],
            telesina_headsup_sf=_TELESINA_HEADS_UP[rules.telesina_headsup_sf],
            draw_timer_ms=rules.draw_timer_ms or DRAW_TIMER_MS,
            max_discard=rules.max_discard,
            pat_restriction_lift=PatRestrictionLift(
                rules.pat_restriction_lift or PatRestrictionLift.ANY_TIMELY_DRAW.value
            ),
            reshuffle_include_folded=_RESHUFFLE_FOLDED[rules.reshuffle_include_folded],
            post_draw_first_actor=(
                PostDrawFirstActor(rules.post_draw_first_actor)
                if rules.post_draw_first_actor
                else None
            ),
            split_pot_function=_SPLIT_POT_FROM_WIRE[rules.split_pot_function],
            odd_chip_stud=OddChipStud(rules.odd_chip_stud or OddChipStud.HIGH_CARD_BY_SUIT.value),
            odd_chip_cards=OddChipCards(rules.odd_chip_cards or OddChipCards.ALL_CARDS.value),
            burn_cards=rules.burn_cards,
            spread_max_raises=(
                rules.spread_max_raises if rules.HasField("spread_max_raises") else None
            ),
        ),
        rake=rake,
    )


@lru_cache(maxsize=64)
def _config_from_bytes(game: str, structure: int, stakes: bytes, rules: bytes) -> HandConfig:
    return config_from_wire(
        game, structure, pb.Stakes.FromString(stakes), pb.HandRules.FromString(rules)
    )


def cached_config_from_wire(
    game: str, structure: int, stakes: pb.Stakes, rules: pb.HandRules
) -> HandConfig:
    """:func:`config_from_wire`, remembered: a table deals hand after hand with one config.

    The key is the sub-messages' serialized bytes. Without ``deterministic=True`` (a third
    cheaper): these messages hold no map fields, the only thing that flag orders, and a key that
    differed anyway would only cost a fresh read, never a wrong config. (A one-entry memo in
    front of the cache saved 0.09 us a hand, 1,070 -> 980 ns a call: removed.)
    """
    return _config_from_bytes(
        game, structure, stakes.SerializeToString(), rules.SerializeToString()
    )


def _config_message(config: HandConfig) -> bytes:
    game, structure, stakes, rules = config_to_wire(config)
    message = pb.HandStarted(
        game=game,
        structure=structure,  # type: ignore[arg-type]
        stakes=stakes,
        rules=rules,
    )
    return message.SerializeToString()


started_config_bytes: Final = remembered(_config_message)
"""A HandStarted holding only ``config``'s fields (game, structure, stakes, rules), serialized,
remembered per config (:data:`poker.engine.hand.core.remembered`). Parsing it is the cheapest
way to a HandStarted that carries the configuration: building the two sub-messages from
keywords costs several times more."""
