"""The rules a table command must satisfy (``verify_*``): each raises a
:class:`~poker.engine.table.errors.TableRuleError` with a sentence and changes nothing.

The same functions answer clients (:mod:`poker.engine.table.queries`), so what a player is shown and
what ``decide`` accepts cannot disagree.
"""

from __future__ import annotations

from poker.engine.betting import Structure
from poker.engine.games import ForcedBets, GameDefinition, get_game
from poker.engine.hand.errors import HandRuleError
from poker.engine.hand.setup import verify_stakes
from poker.engine.table.config import DAY_MS, BringInRule, ButtonRule, DealerMode, TableConfig
from poker.engine.table.errors import (
    AlreadySeated,
    BuyInOutOfRange,
    EmptySeat,
    HandInProgress,
    InvalidRequest,
    InvalidTableConfig,
    NoHandRunning,
    NoSuchSeat,
    NotEnoughPlayers,
    NotYourSeat,
    SeatTaken,
    TableAlreadyExists,
    TableNotOpen,
    TooEarly,
)
from poker.engine.table.plan import Plan, eligible_seats, plan_hand
from poker.engine.table.state import Seat, TableState

_WITH_MAXIMUM = (Structure.POT_LIMIT, Structure.HALF_POT_LIMIT, Structure.NO_LIMIT)
_PROTECTED = (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)

# --- configuration ---------------------------------------------------------------------------


def verify_config(config: TableConfig) -> GameDefinition:
    """A configuration that can be played (RULES.md §6.1, §11); returns the game."""
    try:
        game = get_game(config.game)
    except ValueError as error:
        raise InvalidTableConfig(str(error)) from None
    _verify_bring_in_rule(config, game)
    try:
        verify_stakes(config.hand, game)
    except HandRuleError as error:
        raise InvalidTableConfig(str(error)) from None
    if not 2 <= config.seat_count <= game.max_players:
        raise InvalidTableConfig(f"A {game.name} table has 2 to {game.max_players} seats.")
    _verify_buy_in_limits(config)
    _verify_switches(config, game)
    return game


def _verify_bring_in_rule(config: TableConfig, game: GameDefinition) -> None:
    """The bring-in rule (decision A2) must have something to work from."""
    rule = config.bring_in_rule
    if rule is None:
        return
    if not isinstance(rule, BringInRule):
        raise InvalidTableConfig("The bring-in rule is twice_ante, half_small_bet or fixed_amount.")
    if game.forced_bets is not ForcedBets.ANTE_BRING_IN:
        raise InvalidTableConfig(f"{game.name} has blinds: a bring-in rule is for stud games.")
    stakes = config.stakes
    if rule is BringInRule.TWICE_ANTE and stakes.ante <= 0:
        raise InvalidTableConfig("A bring-in of twice the ante needs an ante.")
    if rule is BringInRule.HALF_SMALL_BET and config.structure is not Structure.FIXED_LIMIT:
        raise InvalidTableConfig("A bring-in of half the small bet needs a fixed-limit table.")
    if rule is BringInRule.FIXED_AMOUNT and stakes.bring_in <= 0:
        raise InvalidTableConfig("A fixed bring-in needs its amount in the stakes.")


def _verify_buy_in_limits(config: TableConfig) -> None:
    unit = config.rules.chip_unit
    low, high = config.min_buy_in, config.max_buy_in
    if type(low) is not int or low <= 0 or low % unit:
        raise InvalidTableConfig(f"The minimum buy-in must be positive, in whole chips of {unit}.")
    if high is None:
        if config.structure in _WITH_MAXIMUM:
            raise InvalidTableConfig("Pot-limit and no-limit tables need a maximum buy-in.")
        return
    if type(high) is not int or high < low or high % unit:
        raise InvalidTableConfig("The maximum buy-in must be whole chips, not below the minimum.")


def _verify_switches(config: TableConfig, game: GameDefinition) -> None:
    if not isinstance(config.button_rule, ButtonRule):
        raise InvalidTableConfig("The button rule must be the moving or the dead button.")
    if config.dealer_mode is DealerMode.FIXED_DEALER and game.forced_bets is ForcedBets.BLINDS:
        raise InvalidTableConfig("A fixed dealer position is for the ante (stud-type) games.")
    if not config.real_money and config.rake is not None:
        raise InvalidTableConfig("Play-money tables are never raked.")
    if config.artificial_allin_enabled and (
        not config.real_money or config.structure not in _PROTECTED
    ):
        raise InvalidTableConfig(
            "Disconnection protection exists only in real-money fixed and spread limit games."
        )
    if min(config.artificial_allin_per_24h, config.pause_between_hands_ms) < 0:
        raise InvalidTableConfig("Allowances and pauses cannot be negative.")
    gathering = config.gathering_ms
    if gathering is not None and (type(gathering) is not int or gathering < 0):
        raise InvalidTableConfig("The gathering delay (gathering_ms) cannot be negative.")
    if config.rejoin_window_ms < 0:
        raise InvalidTableConfig("The re-join window cannot be negative.")
    # RULES.md §11: a whole number of hands, at least 1 (decision A41). None is only what a log
    # from before the setting reads back as (no limit, as that table was played).
    limit = config.sit_out_max_hands
    if type(limit) is not int or limit < 1:
        raise InvalidTableConfig(
            "The sit-out limit (sit_out_max_hands) must be a whole number of hands, at least 1."
        )


# --- the table itself ------------------------------------------------------------------------


def verify_no_table(state: TableState | None) -> None:
    """CreateTable needs a table that does not exist yet."""
    if state is not None:
        raise TableAlreadyExists("This table already exists.")


def verify_table_open(state: TableState | None) -> TableState:
    """The table must exist and not be closed."""
    if state is None:
        raise TableNotOpen("There is no such table.")
    if state.closed:
        raise TableNotOpen("This table is closed.")
    return state


def verify_id(what: str, value: object) -> str:
    """Ids are non-empty strings."""
    if type(value) is not str or not value:
        raise InvalidRequest(f"A {what} is required.")
    return value


# --- seats -----------------------------------------------------------------------------------


def verify_seat_number(state: TableState, number: object) -> int:
    """The seat must be one of the table's seats."""
    if type(number) is not int or not 1 <= number <= len(state.seats):
        raise NoSuchSeat(f"This table has seats 1 to {len(state.seats)}; {number} is not one.")
    return number


def verify_seat_free(state: TableState, number: int) -> None:
    """Nobody may sit in the seat."""
    if state.seats[number - 1] is not None:
        raise SeatTaken(f"Seat {number} is taken.")


def verify_not_seated(state: TableState, player_id: str) -> None:
    """A player holds at most one seat per table."""
    seat = state.seat_of(player_id)
    if seat is not None:
        raise AlreadySeated(f"You already sit in seat {seat} at this table.")


def verify_occupant(state: TableState, number: object, player_id: str) -> Seat:
    """The seat must be taken, and by this player."""
    checked = verify_seat_number(state, number)
    seat = state.seats[checked - 1]
    if seat is None:
        raise EmptySeat(f"Seat {checked} is empty.")
    if seat.player_id != player_id:
        raise NotYourSeat(f"Seat {checked} is not yours.")
    return seat


def verify_seat_taken(state: TableState, number: object) -> Seat:
    """The seat must be taken (commands from the service that name only a seat)."""
    checked = verify_seat_number(state, number)
    seat = state.seats[checked - 1]
    if seat is None:
        raise EmptySeat(f"Seat {checked} is empty.")
    return seat


def verify_not_in_hand(state: TableState, number: int, doing: str) -> None:
    """Chips cannot be added or taken while the player is dealt in (RULES.md §6.1)."""
    if state.in_hand(number):
        raise HandInProgress(f"You cannot {doing} during a hand you are playing; wait for its end.")


# --- money -----------------------------------------------------------------------------------


def buy_in_range(state: TableState, player_id: str, now: int) -> tuple[int, int | None]:
    """The buy-in allowed to ``player_id`` now: the table's limits, raised to the stack he left
    with if he left less than ``rejoin_window_ms`` ago (RULES.md §6.1)."""
    config = state.config
    low, high = config.min_buy_in, config.max_buy_in
    for player, stack, at in state.departures:
        if player == player_id and now - at < config.rejoin_window_ms:
            low = max(low, stack)
            high = None if high is None else max(high, stack)
    return low, high


def verify_chips(amount: object, unit: int) -> int:
    """A positive whole number of chips."""
    if type(amount) is not int or amount <= 0 or amount % unit:
        raise BuyInOutOfRange(f"The amount must be a positive number of chips of {unit}.")
    return amount


def verify_buy_in(state: TableState, player_id: str, amount: object, now: int) -> int:
    """The buy-in must lie within the table's limits (RULES.md §6.1)."""
    checked = verify_chips(amount, state.config.rules.chip_unit)
    low, high = buy_in_range(state, player_id, now)
    if checked < low:
        raise BuyInOutOfRange(f"The minimum buy-in here is {low}; {checked} is not enough.")
    if high is not None and checked > high:
        raise BuyInOutOfRange(f"The maximum buy-in here is {high}; {checked} is too much.")
    return checked


def verify_top_up(state: TableState, seat: Seat, amount: object) -> int:
    """A top-up may bring the stack up to the maximum; a busted player's rebuy must reach the
    minimum buy-in (RULES.md §6.1)."""
    config = state.config
    checked = verify_chips(amount, config.rules.chip_unit)
    after = seat.stack + checked
    if config.max_buy_in is not None and after > config.max_buy_in:
        room = max(config.max_buy_in - seat.stack, 0)
        raise BuyInOutOfRange(
            f"Your stack may not exceed {config.max_buy_in}; you may add at most {room}."
        )
    if after < config.min_buy_in:
        raise BuyInOutOfRange(f"Your stack must reach the minimum buy-in of {config.min_buy_in}.")
    return checked


# --- hands -----------------------------------------------------------------------------------


def verify_hand_running(state: TableState) -> None:
    """A hand command needs a hand in progress."""
    if not state.hand_running:
        raise NoHandRunning("No hand is being played at this table.")


def verify_no_hand_running(state: TableState) -> None:
    """The next hand cannot start while one is running."""
    if state.hand_running:
        raise HandInProgress("A hand is already being played at this table.")


def verify_can_start(state: TableState, now: int) -> Plan:
    """The pause is over and at least two players can be dealt in; returns the plan."""
    verify_no_hand_running(state)
    if now < state.next_hand_at:
        raise TooEarly(f"The next hand can start at {state.next_hand_at}.")
    plan = plan_hand(_without_leavers(state))
    if plan is None:
        raise NotEnoughPlayers("A hand needs at least two players with chips who are sitting in.")
    return plan


def gathering_ends(before: TableState | None, after: TableState, now: int) -> int | None:
    """The gathering delay (a room setting, not a rule; RULES.md §6.2 deals every player at a
    starting table in without extra posts): a command that takes the table from fewer than two
    players who can play to two or more while no hand runs makes the next hand
    wait ``gathering_ms`` (by default the pause), so that players who sit down together are
    dealt in together. A new game deals in every eligible player, where one who sat down a
    moment after it started would wait for the big blind. Returns the instant the next hand may
    start, or None when nothing changes: no game gathers, the delay is 0, or a start at least
    as late is already scheduled (a schedule never moves earlier). Who can play is counted as
    ``plan.eligible_seats`` (two or more exactly when ``queries.who_can_play``, which the
    dealer's clock reads, names two or more)."""
    if before is None or after.closed or before.hand_running or after.hand_running:
        return None
    delay = after.config.gathering_delay_ms
    if delay <= 0 or len(eligible_seats(before)) >= 2 or len(eligible_seats(after)) < 2:
        return None
    not_before = now + delay
    return not_before if not_before > after.next_hand_at else None


def _without_leavers(state: TableState) -> TableState:
    """The table as it will be once the busted and those who sat out too long are unseated."""
    leaving = set(busted_seats(state)) | set(sat_out_too_long(state))
    if not leaving:
        return state
    seats = tuple(None if number in leaving else seat for number, seat in enumerate(state.seats, 1))
    return state._replace(seats=seats)


def busted_seats(state: TableState) -> tuple[int, ...]:
    """Seats of players with no chips (they did not rebuy; unseated before the next hand)."""
    return tuple(number for number, seat in enumerate(state.seats, 1) if seat and not seat.stack)


def sat_out_too_long(state: TableState) -> tuple[int, ...]:
    """Seats of players (with chips) who have sat out ``sit_out_max_hands`` hands in a row:
    stood up, their chips cashed out, before the next hand (RULES.md §6.3, decision A41)."""
    limit = state.config.sit_out_max_hands
    if limit is None:
        return ()
    return tuple(
        number
        for number, seat in enumerate(state.seats, 1)
        if seat and seat.stack and seat.sitting_out and seat.hands_sat_out >= limit
    )


# --- disconnection protection ------------------------------------------------------------------


def protection_uses_left(state: TableState, player_id: str, now: int) -> int:
    """Artificial all-ins left to ``player_id`` in the rolling 24 hours before ``now``."""
    used = sum(
        1 for player, at in state.protection_uses if player == player_id and now - at < DAY_MS
    )
    return max(state.config.artificial_allin_per_24h - used, 0)


def protection_open(state: TableState, player_id: str, now: int) -> bool:
    """Whether a disconnected ``player_id`` who times out now is protected (RULES.md §6.5)."""
    config = state.config
    return config.artificial_allin_enabled and protection_uses_left(state, player_id, now) > 0
