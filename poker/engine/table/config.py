"""Table configuration: everything a table is set up with (RULES.md §11), fixed for its life.

:func:`make_config` fills in the room's defaults (buy-ins per §6.1 and decision A35, the seed's
rake for real money, the game's seat count, disconnection protection for real-money fixed and
spread limit); :class:`TableConfig` holds the resolved values, recorded in TableCreated.

>>> from poker.engine.betting import Structure, fixed_limit_stakes, Stakes
>>> config = make_config("holdem", Structure.FIXED_LIMIT, fixed_limit_stakes(25, 50))
>>> config.min_buy_in, config.max_buy_in, config.seat_count, config.artificial_allin_enabled
(300, None, 10, True)
>>> nl = make_config("omaha", Structure.NO_LIMIT, Stakes(1, 2), real_money=False)
>>> nl.min_buy_in, nl.max_buy_in, nl.rake, nl.artificial_allin_enabled
(40, 200, None, False)
>>> config_from_wire(config_to_wire(config)) == config
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Final

from poker.engine.betting import BettingRules, Stakes, Structure
from poker.engine.games import DealerKind, ForcedBets, get_game
from poker.engine.hand.codec import config_from_wire as hand_config_from_wire
from poker.engine.hand.codec import config_to_wire as hand_config_to_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.rake import RakeSchedule
from poker.v1 import events_pb2 as pb

MINUTE_MS: Final = 60_000
DAY_MS: Final = 24 * 60 * MINUTE_MS
#: The room's default number of consecutive hands sat out after which a player is stood up
#: (RULES.md §11, decision A41).
DEFAULT_SIT_OUT_MAX_HANDS: Final = 30


class ButtonRule(Enum):
    """How the button and blinds move (RULES.md §4.2.1); values match ``poker.v1.ButtonRule``."""

    MOVING = 1  # simplified moving button (the default)
    DEAD_BUTTON = 2  # the big blind advances one seat a hand; dead button, dead small blind


class DealerMode(Enum):
    """Where the dealer position is (RULES.md §1.2, A20, A25); values match the proto."""

    ROTATING_BUTTON = 1
    FIXED_DEALER = 2  # the chip box: stud-type (ante) games


class MissedBlindsPolicy(Enum):
    """What a player who missed blinds posts to come back (decision A8)."""

    ROBERTS = 1  # missed BB: BB live; both: BB live + SB dead; SB only: SB dead
    SEED_LITERAL = 2  # missed BB: BB live; both or SB only: SB dead


class BringInRule(Enum):
    """How a stud table's bring-in follows its stakes (decision A2); values match the proto.

    ``TableConfig.bring_in_rule`` None: the stakes' bring-in as given, or, when none is given,
    twice the ante (:func:`make_config`, the spec's default).
    """

    TWICE_ANTE = 1  # 2 x ante (seed 000)
    HALF_SMALL_BET = 2  # 1/2 x the fixed-limit small bet (seed 001)
    FIXED_AMOUNT = 3  # the amount in the stakes, whatever the ante


def rule_bring_in(rule: BringInRule | None, stakes: Stakes, chip_unit: int) -> int | None:
    """The bring-in ``rule`` sets for ``stakes``, rounded down to the chip unit; None when the
    stakes' own amount stands (no rule, or a fixed amount).

    >>> stakes = Stakes(0, 0, ante=3, small_bet=10, big_bet=20, bring_in=7)
    >>> [rule_bring_in(rule, stakes, 2) for rule in (*BringInRule, None)]
    [6, 4, None, None]
    """
    if rule is BringInRule.TWICE_ANTE:
        amount = 2 * stakes.ante
    elif rule is BringInRule.HALF_SMALL_BET:
        amount = stakes.small_bet // 2
    else:
        return None
    return amount - amount % chip_unit


# Seed 000's minimum buy-ins for its fixed-limit stakes (cents), keyed by (small bet, big bet).
_SEED_MIN_BUY_INS: Final = {(25, 50): 300, (100, 200): 1000, (200, 400): 2000, (300, 600): 3000}
_SEED_MIN_BUY_INS[(500, 1000)] = 5000


def default_buy_ins(structure: Structure, stakes: Stakes) -> tuple[int, int | None]:
    """The suggested minimum and maximum buy-in (RULES.md §6.1, decision A35).

    Fixed limit: the seed's table, else 10 small bets, no maximum; spread limit: 10 big blinds,
    no maximum; pot, half-pot and no limit: 20 to 100 big blinds. Stud-type games have no
    blinds: their minimum bet, the bring-in, stands for the big blind (decision A34).

    >>> default_buy_ins(Structure.FIXED_LIMIT, Stakes(200, 500, small_bet=500, big_bet=1000))
    (5000, None)
    >>> default_buy_ins(Structure.POT_LIMIT, Stakes(50, 100))
    (2000, 10000)
    """
    if structure is Structure.FIXED_LIMIT:
        seed = _SEED_MIN_BUY_INS.get((stakes.small_bet, stakes.big_bet))
        return (seed if seed is not None else 10 * stakes.small_bet), None
    minimum_bet = stakes.big_blind or stakes.bring_in
    if structure is Structure.SPREAD_LIMIT:
        return 10 * minimum_bet, None
    return 20 * minimum_bet, 100 * minimum_bet


@dataclass(frozen=True, slots=True)
class TableConfig:
    """A table's settings (RULES.md §11), resolved. ``max_buy_in`` None = no maximum; ``rake``
    None = no rake (always so for play money). Build with :func:`make_config`.

    ``gathering_ms``: the gathering delay. When a command gives a table with no hand running its
    second player who can play, the next hand waits this long (None: the pause between hands;
    0: none), so that players who sit down together are dealt in together (RULES.md §6.2)."""

    game: str
    structure: Structure
    stakes: Stakes
    min_buy_in: int
    max_buy_in: int | None
    seat_count: int
    real_money: bool = True
    rules: BettingRules = field(default_factory=BettingRules)  # chip unit, caps, action timer
    rake: RakeSchedule | None = None
    pause_between_hands_ms: int = 3_000
    # The gathering delay (a room setting, not a rule; RULES.md §6.2 deals every player at a
    # starting table in without extra posts): when the table comes to have two players who can
    # play and no hand runs, the next hand waits this long, so that players who sit down
    # together are dealt in together. None: the pause between hands; 0: no delay.
    gathering_ms: int | None = None
    button_rule: ButtonRule = ButtonRule.MOVING
    dealer_mode: DealerMode = DealerMode.ROTATING_BUTTON
    missed_blinds_policy: MissedBlindsPolicy = MissedBlindsPolicy.ROBERTS
    rejoin_window_ms: int = 30 * MINUTE_MS
    artificial_allin_enabled: bool = False
    artificial_allin_per_24h: int = 2
    artificial_allin_counts_forced_bets: bool = True
    # Stand up and cash out a player once he has sat out this many hands in a row (RULES.md
    # §6.3, §11, decision A41; at least 1). None: a table logged before the setting, no limit.
    sit_out_max_hands: int | None = DEFAULT_SIT_OUT_MAX_HANDS
    # How the bring-in follows the stakes (decision A2); None: the stakes' bring-in as given.
    bring_in_rule: BringInRule | None = None
    hand: HandConfig = field(init=False, repr=False, compare=False)  # what every hand is dealt

    def __post_init__(self) -> None:
        # A bring-in rule sets the amount (decision A2), also when a switch arrives after the
        # stakes were resolved (the dealer merges settings into make_config's result).
        amount = rule_bring_in(self.bring_in_rule, self.stakes, self.rules.chip_unit)
        if amount is not None and amount != self.stakes.bring_in:
            forced = get_game(self.game).forced_bets is ForcedBets.ANTE_BRING_IN
            if forced:  # a blind game keeps its stakes; verify_config names the mistake
                object.__setattr__(self, "stakes", replace(self.stakes, bring_in=amount))
        # One HandConfig object per table: the hand machine memoises per config identity.
        hand = HandConfig(self.game, self.structure, self.stakes, self.rules, self.rake)
        object.__setattr__(self, "hand", hand)

    @property
    def gathering_delay_ms(self) -> int:
        """How long a gathering game waits before its next hand (``gathering_ms``, by default
        the pause between hands)."""
        return self.pause_between_hands_ms if self.gathering_ms is None else self.gathering_ms


def make_config(
    game: str, structure: Structure, stakes: Stakes, *, real_money: bool = True, **settings: Any
) -> TableConfig:
    """A configuration with the room's defaults; ``settings`` override any field by name.

    Stud-type games without a bring-in get the room's default, twice the ante (decision A2);
    ``bring_in_rule=BringInRule.HALF_SMALL_BET`` (or ``TWICE_ANTE``) sets it by rule instead.

    >>> make_config("seven-card-stud", Structure.FIXED_LIMIT,
    ...             Stakes(0, 0, ante=2, small_bet=10, big_bet=20)).stakes.bring_in
    4
    """
    definition = get_game(game)
    if definition.forced_bets is ForcedBets.ANTE_BRING_IN and not stakes.bring_in:
        stakes = replace(stakes, bring_in=2 * stakes.ante)
    min_buy_in, max_buy_in = default_buy_ins(structure, stakes)
    protected = real_money and structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)
    fixed = definition.dealer is DealerKind.FIXED
    config = TableConfig(
        game=game,
        structure=structure,
        stakes=stakes,
        min_buy_in=min_buy_in,
        max_buy_in=max_buy_in,
        seat_count=definition.max_players,
        real_money=real_money,
        rake=RakeSchedule() if real_money else None,
        dealer_mode=DealerMode.FIXED_DEALER if fixed else DealerMode.ROTATING_BUTTON,
        artificial_allin_enabled=protected,
    )
    return replace(config, **settings) if settings else config


def config_to_wire(config: TableConfig) -> pb.TableConfig:
    """The configuration as recorded in TableCreated."""
    game, structure, stakes, rules = hand_config_to_wire(config.hand)
    return pb.TableConfig(
        game=game,
        structure=structure,  # type: ignore[arg-type]
        stakes=stakes,
        rules=rules,
        real_money=config.real_money,
        seat_count=config.seat_count,
        min_buy_in=config.min_buy_in,
        max_buy_in=config.max_buy_in or 0,
        pause_between_hands_ms=config.pause_between_hands_ms,
        gathering_ms=config.gathering_ms,
        button_rule=config.button_rule.value,  # type: ignore[arg-type]
        dealer_mode=config.dealer_mode.value,  # type: ignore[arg-type]
        missed_blinds_policy=config.missed_blinds_policy.value,  # type: ignore[arg-type]
        rejoin_window_ms=config.rejoin_window_ms,
        artificial_allin_enabled=config.artificial_allin_enabled,
        artificial_allin_per_24h=config.artificial_allin_per_24h,
        artificial_allin_counts_forced_bets=config.artificial_allin_counts_forced_bets,
        sit_out_max_hands=config.sit_out_max_hands,
        bring_in_rule=config.bring_in_rule.value if config.bring_in_rule else 0,  # type: ignore[arg-type]
    )


def config_from_wire(wire: pb.TableConfig) -> TableConfig:
    """The :class:`TableConfig` that :func:`config_to_wire` wrote."""
    hand = hand_config_from_wire(wire.game, wire.structure, wire.stakes, wire.rules)
    fixed = get_game(wire.game).dealer is DealerKind.FIXED
    default_mode = DealerMode.FIXED_DEALER if fixed else DealerMode.ROTATING_BUTTON
    return TableConfig(
        game=hand.game,
        structure=hand.structure,
        stakes=hand.stakes,
        min_buy_in=wire.min_buy_in,
        max_buy_in=wire.max_buy_in or None,
        seat_count=wire.seat_count,
        real_money=wire.real_money,
        rules=hand.rules,
        rake=hand.rake,
        pause_between_hands_ms=wire.pause_between_hands_ms,
        # Unset (the default, and every log from before the setting): the pause between hands.
        gathering_ms=wire.gathering_ms if wire.HasField("gathering_ms") else None,
        button_rule=ButtonRule(wire.button_rule or ButtonRule.MOVING.value),
        dealer_mode=DealerMode(wire.dealer_mode) if wire.dealer_mode else default_mode,
        missed_blinds_policy=MissedBlindsPolicy(
            wire.missed_blinds_policy or MissedBlindsPolicy.ROBERTS.value
        ),
        rejoin_window_ms=wire.rejoin_window_ms,
        artificial_allin_enabled=wire.artificial_allin_enabled,
        artificial_allin_per_24h=wire.artificial_allin_per_24h,
        artificial_allin_counts_forced_bets=wire.artificial_allin_counts_forced_bets,
        # Unset (a log from before the setting): no limit, as the table was played.
        sit_out_max_hands=(wire.sit_out_max_hands if wire.HasField("sit_out_max_hands") else None),
        # Unset: the recorded stakes' bring-in stands, as the table was played.
        bring_in_rule=BringInRule(wire.bring_in_rule) if wire.bring_in_rule else None,
    )
