"""Between a :class:`HandConfig` and the PHH fields that describe the game.

PHH fields carry the variant, the antes, the blinds and the bet sizes. What PHH has no field for
is written as user-defined fields (names beginning with ``_``, which PHH readers keep and
otherwise ignore), and only when it differs from our defaults:

* ``_spread_limits``: spread limit's maximum bet or raise of each betting round (required for the
  ``S`` variant codes);
* ``_chip_unit``, ``_max_raises``, ``_heads_up_uncap`` (``"round_start"``, ``"before_cap"`` or
  ``"never"``), ``_incomplete_raise_rule`` (``"half_bet"`` or ``"full_bet"``),
  ``_spread_round_ceiling`` and ``_spread_max_raises``: the table switches of
  :class:`poker.engine.betting.BettingRules`;
* ``_open_pair_double_bet``, ``_stud_common_card_betting``, ``_stud_board_tie_break``
  (``"position"`` or ``"suit"``), ``_bring_in_suit_order``, ``_odd_chip_stud``
  (``"high_card_by_suit"``, ``"nearest_to_dealer"`` or ``"first_shown"``), ``_odd_chip_cards``
  (``"all_cards"`` or ``"five_card_hand"``), ``_telesina_high_card`` and
  ``_telesina_headsup_sf``: the stud-type switches;
* ``_max_discard``, ``_pat_restriction_lift`` (``"any_timely_draw"`` or
  ``"at_least_one_card"``), ``_reshuffle_include_folded``, ``_post_draw_first_actor``
  (``"left_of_big_blind"`` or ``"left_of_button"``) and ``_split_pot_function``: the draw
  switches;
* ``_burn_cards``: a card burned before each street's community cards (decision A31);
* ``_rake``: the rake schedule as an inline table (``per``, ``step``, ``minimum_pot``,
  ``band_below``, ``band_rake``, ``caps`` as ``[[players, cap], ...]``, ``trigger_street``,
  and ``distribution`` (``"main_pot_first"``) when it is not the default).
  A file without ``_rake`` is played without rake.

>>> config = HandConfig("omaha", Structure.POT_LIMIT, Stakes(5, 10))
>>> fields, user = config_to_fields(config, 3)
>>> fields, user
({'antes': (0, 0, 0), 'blinds_or_straddles': (5, 10, 0), 'min_bet': 10}, {})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields as dataclass_fields
from typing import Any, Final

from poker.engine.betting import (
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
from poker.engine.games import ForcedBets, get_game
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.rake import RakeDistribution, RakeSchedule
from poker.engine.phh.model import Amount, HandHistory, PHHError, whole_amount
from poker.engine.phh.variants import parse_variant

_DEFAULT_RULES: Final = BettingRules()


def config_to_fields(config: HandConfig, players: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The PHH fields (antes, blinds or bring-in, bet sizes) and the user-defined fields of
    ``config``."""
    stakes = config.stakes
    phh: dict[str, Any] = {"antes": (stakes.ante,) * players}
    stud = get_game(config.game).forced_bets is ForcedBets.ANTE_BRING_IN
    if stud:
        phh["bring_in"] = stakes.bring_in  # stud-type games have no blinds
    else:
        # p1 is the small blind; heads-up PHH reverses the blinds, so p1 (the player left of the
        # button) posts the big one, as here.
        phh["blinds_or_straddles"] = (stakes.small_blind, stakes.big_blind) + (0,) * (players - 2)
    if config.structure is Structure.FIXED_LIMIT:
        phh.update(small_bet=stakes.small_bet, big_bet=stakes.big_bet)
    else:
        phh["min_bet"] = stakes.bring_in if stud else stakes.big_blind
    user: dict[str, Any] = {}
    if config.structure is Structure.SPREAD_LIMIT:
        user["_spread_limits"] = list(stakes.spread_round_max)
    user.update(_rules_fields(config.rules))
    if config.rake is not None:
        user["_rake"] = _rake_table(config.rake)
    return phh, user


def _rules_fields(rules: BettingRules) -> dict[str, Any]:
    user: dict[str, Any] = {}
    if rules.chip_unit != _DEFAULT_RULES.chip_unit:
        user["_chip_unit"] = rules.chip_unit
    if rules.max_raises != _DEFAULT_RULES.max_raises:
        user["_max_raises"] = rules.max_raises
    if rules.heads_up_uncap is not _DEFAULT_RULES.heads_up_uncap:
        user["_heads_up_uncap"] = rules.heads_up_uncap.name.lower()
    if rules.incomplete_raise_rule is not _DEFAULT_RULES.incomplete_raise_rule:
        user["_incomplete_raise_rule"] = rules.incomplete_raise_rule.name.lower()
    if rules.spread_round_ceiling:
        user["_spread_round_ceiling"] = True
    if rules.open_pair_double_bet is not None:
        user["_open_pair_double_bet"] = rules.open_pair_double_bet
    if rules.stud_common_card_betting:
        user["_stud_common_card_betting"] = True
    if rules.stud_board_tie_break is not _DEFAULT_RULES.stud_board_tie_break:
        user["_stud_board_tie_break"] = rules.stud_board_tie_break.name.lower()
    for name in ("bring_in_suit_order", "telesina_high_card", "telesina_headsup_sf"):
        if getattr(rules, name) != getattr(_DEFAULT_RULES, name):
            user[f"_{name}"] = getattr(rules, name)
    if rules.odd_chip_stud is not _DEFAULT_RULES.odd_chip_stud:
        user["_odd_chip_stud"] = rules.odd_chip_stud.name.lower()
    if rules.odd_chip_cards is not _DEFAULT_RULES.odd_chip_cards:
        user["_odd_chip_cards"] = rules.odd_chip_cards.name.lower()
    if rules.burn_cards:
        user["_burn_cards"] = True
    if rules.spread_max_raises is not None:
        user["_spread_max_raises"] = rules.spread_max_raises
    if rules.max_discard:
        user["_max_discard"] = rules.max_discard
    if rules.pat_restriction_lift is not _DEFAULT_RULES.pat_restriction_lift:
        user["_pat_restriction_lift"] = rules.pat_restriction_lift.name.lower()
    if not rules.reshuffle_include_folded:
        user["_reshuffle_include_folded"] = False
    if rules.post_draw_first_actor is not None:
        user["_post_draw_first_actor"] = rules.post_draw_first_actor.name.lower()
    if rules.split_pot_function is not None:
        user["_split_pot_function"] = rules.split_pot_function
    return user


def _rake_table(rake: RakeSchedule) -> dict[str, Any]:
    return {
        "per": rake.per,
        "step": rake.step,
        "minimum_pot": rake.minimum_pot,
        "band_below": rake.band_below,
        "band_rake": rake.band_rake,
        "caps": [[players, cap] for players, cap in rake.caps],
        "trigger_street": rake.trigger_street,
    } | (
        {"distribution": rake.distribution.name.lower()}
        if rake.distribution is not RakeDistribution.PROPORTIONAL
        else {}
    )


# --- reading ------------------------------------------------------------------------------------


def config_from_history(history: HandHistory) -> HandConfig:
    """Our hand configuration for ``history`` (amounts in whole units: see
    :func:`poker.engine.phh.units.scaled_history`); PHHError with a sentence when our engine cannot
    play its forced bets or stakes.

    Antes that differ between players (a big-blind or button ante) are not part of the
    configuration: the replay posts them as dead money (:func:`dead_antes`). A hand without a
    small blind has its big blind as the configuration's small blind too, which nobody posts
    (:func:`blind_players` names who posts what)."""
    try:
        game, structure = parse_variant(history.variant)
    except ValueError as error:
        raise PHHError(str(error)) from None
    players = history.player_count
    user = history.fields
    if get_game(game).forced_bets is ForcedBets.ANTE_BRING_IN:
        ante = _uniform_ante(history.antes, players, stud=True)
        stakes = _stud_stakes(history, structure, ante)
        return HandConfig(game, structure, stakes, _rules(user), _rake(user.get("_rake")))
    ante = _uniform_ante(history.antes, players, stud=False)
    small_blind, big_blind = _blinds(history.blinds_or_straddles, players)
    if structure is Structure.FIXED_LIMIT:
        if history.small_bet is None or history.big_bet is None:
            raise PHHError(f"The {history.variant} variant needs small_bet and big_bet.")
        stakes = Stakes(
            small_blind,
            big_blind,
            ante=ante,
            small_bet=_whole(history.small_bet, "small_bet"),
            big_bet=_whole(history.big_bet, "big_bet"),
        )
    else:
        _check_min_bet(history, big_blind)
        spread = _spread_limits(user) if structure is Structure.SPREAD_LIMIT else ()
        stakes = Stakes(small_blind, big_blind, ante=ante, spread_round_max=spread)
    return HandConfig(game, structure, stakes, _rules(user), _rake(user.get("_rake")))


def blind_players(history: HandHistory) -> tuple[int | None, int] | None:
    """Who posts the blinds when our engine must be told (PHH player indexes, 0-based): the small
    blind's poster (None: nobody) and the big blind's; None when both blinds are posted where
    they always are (our engine then places them from the button).

    PHH gives the blinds by position: ``blinds_or_straddles[0]`` is the small blind, posted by
    ``p1`` (heads-up, where PHH reverses the forced bets: by ``p2``, the button), and
    ``blinds_or_straddles[1]`` the big blind, posted by ``p2`` (heads-up: ``p1``). When only one
    of them is posted (``[0, 200, ...]``: no small blind), its poster is our big blind."""
    blinds = history.blinds_or_straddles or ()
    heads_up = history.player_count == 2
    small_poster, big_poster = (1, 0) if heads_up else (0, 1)
    if len(blinds) < 2 or (blinds[0] and blinds[1]):
        return None
    if blinds[1]:
        return None, big_poster
    return None, small_poster  # the lone blind is the big one


def dead_antes(history: HandHistory) -> tuple[int, ...] | None:
    """Each player's ante when the antes differ between players (PHH order; heads-up reversed, as
    PHH reverses the forced bets), else None. Such antes are dead money: they go to the main
    pot and do not count in what a player can win from each opponent, as the big-blind ante of
    tournaments (and PokerKit's untrimmed antes) have it."""
    antes = tuple(_whole(ante, "antes") for ante in history.antes)
    if len(set(antes)) <= 1:
        return None
    return antes[::-1] if len(antes) == 2 else antes


def _whole(amount: Amount, name: str) -> int:
    return whole_amount(amount, name)


def _stud_stakes(history: HandHistory, structure: Structure, ante: int) -> Stakes:
    """Stakes of a stud-type hand: antes and a bring-in, no blinds."""
    if history.bring_in is None:
        raise PHHError(f"The {history.variant} variant needs bring_in.")
    if any(history.blinds_or_straddles or ()):
        raise PHHError(f"The {history.variant} variant has no blinds or straddles.")
    bring_in = _whole(history.bring_in, "bring_in")
    if structure is Structure.FIXED_LIMIT:
        if history.small_bet is None or history.big_bet is None:
            raise PHHError(f"The {history.variant} variant needs small_bet and big_bet.")
        return Stakes(
            0,
            0,
            ante=ante,
            small_bet=_whole(history.small_bet, "small_bet"),
            big_bet=_whole(history.big_bet, "big_bet"),
            bring_in=bring_in,
        )
    if history.min_bet != bring_in:
        raise PHHError(
            f"Our minimum bet in stud is the bring-in ({bring_in}); this hand has a minimum bet "
            f"of {history.min_bet}."
        )
    spread = _spread_limits(history.fields) if structure is Structure.SPREAD_LIMIT else ()
    return Stakes(0, 0, ante=ante, spread_round_max=spread, bring_in=bring_in)


def _uniform_ante(antes: tuple[Amount, ...], players: int, *, stud: bool) -> int:
    """The ante every player posts; 0 when they differ (dead antes, see :func:`dead_antes`),
    which our stud games cannot post."""
    if len(antes) != players:
        raise PHHError(f"There are {players} starting stacks but {len(antes)} antes.")
    whole = [_whole(ante, "antes") for ante in antes]
    if len(set(whole)) == 1:
        return whole[0]
    if stud:
        raise PHHError(
            f"Our stud games take the same ante from every player; this hand has antes {whole}."
        )
    return 0


def _blinds(blinds: tuple[Amount, ...] | None, players: int) -> tuple[int, int]:
    """The small and big blind amounts; without a small blind, the big blind twice (the small
    one is then posted by nobody, :func:`blind_players`)."""
    if blinds is None:
        raise PHHError("The required field blinds_or_straddles is missing.")
    if len(blinds) != players:
        raise PHHError(f"There are {players} starting stacks but {len(blinds)} blinds.")
    if players < 2:
        raise PHHError("A hand needs at least two players.")
    if any(blinds[2:]):
        raise PHHError(
            f"Our engine plays a small and a big blind only; this hand has straddles "
            f"{list(blinds)}."
        )
    small, big = _whole(blinds[0], "blinds_or_straddles"), _whole(blinds[1], "blinds_or_straddles")
    if not small and not big:
        raise PHHError("Our engine needs a big blind; this hand has no blinds.")
    if not small or not big:
        lone = small or big
        return lone, lone
    return small, big


def _check_min_bet(history: HandHistory, big_blind: int) -> None:
    if history.min_bet is None:
        raise PHHError(f"The {history.variant} variant needs min_bet.")
    if history.min_bet != big_blind:
        raise PHHError(
            f"Our minimum bet is the big blind ({big_blind}); this hand has a minimum bet of "
            f"{history.min_bet}."
        )


def _spread_limits(user: Mapping[str, Any]) -> tuple[int, ...]:
    limits = user.get("_spread_limits")
    if not isinstance(limits, list):
        raise PHHError("A spread-limit hand needs _spread_limits, the maximum of each round.")
    return tuple(whole_amount(limit, "_spread_limits") for limit in limits)


def _rules(user: Mapping[str, Any]) -> BettingRules:
    values: dict[str, Any] = {}
    for name in ("chip_unit", "max_raises", "max_discard", "spread_max_raises"):
        if f"_{name}" in user:
            values[name] = whole_amount(user[f"_{name}"], f"_{name}")
    if "_heads_up_uncap" in user:
        values["heads_up_uncap"] = _enum_value(HeadsUpUncap, user["_heads_up_uncap"])
    if "_incomplete_raise_rule" in user:
        values["incomplete_raise_rule"] = _enum_value(
            IncompleteRaiseRule, user["_incomplete_raise_rule"]
        )
    if "_spread_round_ceiling" in user:
        ceiling = user["_spread_round_ceiling"]
        if not isinstance(ceiling, bool):
            raise PHHError("The field _spread_round_ceiling must be true or false.")
        values["spread_round_ceiling"] = ceiling
    for name in (
        "open_pair_double_bet",
        "stud_common_card_betting",
        "reshuffle_include_folded",
        "split_pot_function",
        "burn_cards",
    ):
        if f"_{name}" in user:
            switch = user[f"_{name}"]
            if not isinstance(switch, bool):
                raise PHHError(f"The field _{name} must be true or false.")
            values[name] = switch
    if "_stud_board_tie_break" in user:
        values["stud_board_tie_break"] = _enum_value(StudTieBreak, user["_stud_board_tie_break"])
    if "_odd_chip_stud" in user:
        values["odd_chip_stud"] = _enum_value(OddChipStud, user["_odd_chip_stud"])
    if "_odd_chip_cards" in user:
        values["odd_chip_cards"] = _enum_value(OddChipCards, user["_odd_chip_cards"])
    if "_pat_restriction_lift" in user:
        values["pat_restriction_lift"] = _enum_value(
            PatRestrictionLift, user["_pat_restriction_lift"]
        )
    if "_post_draw_first_actor" in user:
        values["post_draw_first_actor"] = _enum_value(
            PostDrawFirstActor, user["_post_draw_first_actor"]
        )
    for name in ("bring_in_suit_order", "telesina_high_card", "telesina_headsup_sf"):
        if f"_{name}" in user:
            text = user[f"_{name}"]
            if not isinstance(text, str):
                raise PHHError(f"The field _{name} must be a string.")
            values[name] = text
    return BettingRules(**values)


def _enum_value(
    kind: type[HeadsUpUncap]
    | type[IncompleteRaiseRule]
    | type[StudTieBreak]
    | type[PatRestrictionLift]
    | type[PostDrawFirstActor]
    | type[OddChipStud]
    | type[OddChipCards]
    | type[RakeDistribution],
    value: object,
) -> Any:
    names = [member.name.lower() for member in kind]
    if not isinstance(value, str) or value not in names:
        raise PHHError(f"{value!r} is not one of {', '.join(names)}.")
    return kind[value.upper()]


_RAKE_FIELDS: Final = frozenset(
    entry.name for entry in dataclass_fields(RakeSchedule) if entry.name != "caps"
)


def _rake(table: object) -> RakeSchedule | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise PHHError("The field _rake must be a table such as {per = 20, step = 1}.")
    unknown = set(table) - _RAKE_FIELDS - {"caps", "distribution"}
    if unknown:
        raise PHHError(f"The rake table has unknown entries: {', '.join(sorted(unknown))}.")
    values: dict[str, Any] = {
        name: whole_amount(value, "_rake")
        for name, value in table.items()
        if name not in {"caps", "distribution"}
    }
    if "distribution" in table:
        values["distribution"] = _enum_value(RakeDistribution, table["distribution"])
    if "caps" in table:
        caps = table["caps"]
        if not isinstance(caps, list) or not all(
            isinstance(cap, list) and len(cap) == 2 for cap in caps
        ):
            raise PHHError("The rake caps must be [[players, cap], ...].")
        values["caps"] = tuple(
            (whole_amount(players, "_rake"), whole_amount(cap, "_rake")) for players, cap in caps
        )
    return RakeSchedule(**values)
