"""Play a PHH hand history through our hand machine.

The deck is arranged so that our dealing (one card per player per pass, clockwise from ``p1``, then
the board, no burn cards) gives every player the hole cards and the board the file shows. Unknown
cards (``??``) are taken from a hole card shown later at the showdown (``pK sm``) when there is
one, else from the cards the file does not mention, in deck order. Then every player action is
played as a command: ``f`` folds, ``cc`` checks or calls, ``cbr X`` bets or raises to ``X``; a fold
or check with the commentary ``# timed out`` (as our export writes a time-out) is played as a
time-out. Forced bets, showdowns and pot awards are our engine's own; ``sm`` actions only reveal
cards. Stud-type games: the deck follows the dealing actions street by street (each street's hole
cards one pass at a time, a ``d db`` the common card); ``pb`` brings in (``# timed out``: a
time-out, which folds the player when his ``f # timed out`` follows, as our export writes it, else
is a protected one) and ``cbr`` over the bring-in completes. A hand our rules do not allow (a raise
too small, a straddle, a player acting out of turn, actions that stop before the end) gives an
error sentence instead of stacks.

Forced bets: PHH gives them by position (``p1`` the small blind, ``p2`` the big one; heads-up
reversed). A hand without a small blind (``blinds_or_straddles = [0, 200, ...]``) is dealt with
explicit blinds: the big blind only, the button on ``pN``. Antes that differ between players (the
big-blind ante of today's tournaments, ``antes = [0, 120000, 0, ...]``, or a button ante) are dead
money: they go to the main pot and do not count in what their owner can win from each opponent,
as the tournament rule and PokerKit's untrimmed antes have it (the ``ante_trimming_status`` field
is not read: PokerKit's trimming gives a lone big-blind ante back, which the WSOP hands' recorded
results contradict). Our engine posts dead money only as the extra post of a player without a
blind, so one such player posts all of them (see :func:`_carry_dead_antes`); our stud games take one
ante from everybody and refuse the others.

The extensions our export writes are played too: ``_extra_posts`` become the hand's extra posts
and a commentary ``# pK artificial all-in for N`` a protected time-out (see
:mod:`poker.engine.phh.export`); in draw games that player's ``pK sd`` (stand pat) is the pat our
engine records for him unasked (RULES.md §6.5 rule 4), so it is checked, not played.

Draw games: the deck deals each player's first five ``d dh`` cards, then the stub holds the
replacements the file deals after each ``pK sd`` (the cards thrown away; none: stand pat, ``#
timed out``: a time-out) in the order of the draws. When our engine must reshuffle the discards,
the Draw command's shuffle puts the replacements still to come first, so the file's cards are
dealt. 32-Card Draw's commentaries ``# pK split`` and ``# pK no split`` answer the split offer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final, NamedTuple

from poker.engine.cards import Card, parse_card
from poker.engine.games import ForcedBets, GameDefinition, get_game
from poker.engine.hand import (
    Act,
    Action,
    AgreeSplit,
    Draw,
    ExtraPost,
    HandConfig,
    HandEvent,
    HandRuleError,
    HandState,
    SeatStack,
    StartHand,
    TimeOut,
    execute,
    legal_actions,
)
from poker.engine.hand.draws import draw_number
from poker.engine.phh.config import blind_players, config_from_history, dead_antes
from poker.engine.phh.model import Amount, HandHistory, PHHError, whole_amount
from poker.engine.phh.units import (
    Mismatch,
    compare_stacks,
    file_units,
    hand_scale,
    scaled_history,
)
from poker.v1 import events_pb2 as pb


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What replaying a hand history gave: the finishing stacks in PHH player order (``p1``
    first) and in the file's unit (``int`` when whole), or ``error``, a sentence saying why the
    hand cannot be played under our rules.

    ``scale`` is how many of our minor units make one unit of the file (1 unless its amounts
    have fractions; the ``events`` count in our units). ``mismatch`` says how the finishing
    stacks differ from those the file records, None when they agree or it records none.
    """

    finishing_stacks: tuple[Amount, ...] | None
    error: str | None = None
    events: tuple[HandEvent, ...] = ()
    scale: int = 1
    mismatch: Mismatch | None = None

    @property
    def ok(self) -> bool:
        """Whether the hand was played to its end."""
        return self.error is None


class PHHAction(NamedTuple):
    """One parsed action notation; ``player`` is a 0-based index, -1 for the dealer."""

    number: int  # 1-based position in the actions array, for error sentences
    text: str
    player: int
    verb: str
    cards: tuple[Card | None, ...] = ()
    amount: int = 0
    timed_out: bool = False  # "# timed out" commentary, as our export writes time-outs


_DEALER: Final = -1
_ARTIFICIAL_ALL_IN: Final = re.compile(r"#\s*p(\d+) artificial all-in for (\d+)\s*$")
_SPLIT_ANSWER: Final = re.compile(r"#\s*p(\d+) (split|no split)( timed out)?\s*$")
_PLAYER_VERBS: Final = frozenset({"f", "cc", "cbr", "sm", "sd", "pb"})


def replay_phh(history: HandHistory) -> ReplayResult:
    """Play ``history`` through our engine: its finishing stacks (compared with the file's
    record, when there is one), or an error sentence."""
    try:
        scale = hand_scale(history)
    except PHHError as error:
        return ReplayResult(None, str(error))
    try:
        stacks, events = _replay(scaled_history(history, scale), scale)
    except PHHError as error:
        # Our rules' sentences count our units: say so when they are not the file's.
        note = f" Amounts here count 1/{scale} of the file's unit." if scale > 1 else ""
        return ReplayResult(None, f"{error}{note}", scale=scale)
    finishing = file_units(stacks, scale)
    recorded = history.finishing_stacks
    mismatch = None if recorded is None else compare_stacks(finishing, recorded, scale)
    return ReplayResult(finishing, None, events, scale, mismatch)


def _replay(history: HandHistory, scale: int) -> tuple[tuple[int, ...], tuple[HandEvent, ...]]:
    """Play ``history`` (its amounts already in our units, its actions' ``scale`` times the
    written amounts): the finishing stacks in our units and the events."""
    config = config_from_history(history)
    game = get_game(config.game)
    players = history.player_count
    actions = [
        action
        for number, text in enumerate(history.actions, start=1)
        if (action := parse_action(number, text, players, scale=scale)) is not None
    ]
    seats = _seats(history)
    deck = arrange_deck(game, actions, players, burn=config.rules.burn_cards)
    state, events = _start(history, config, seats, deck)
    board_after = _board_counts(actions)
    ahead = _replacements_ahead(actions) if game.is_draw_game else {}
    for position, action in enumerate(actions):
        following = actions[position + 1] if position + 1 < len(actions) else None
        state = _play(state, action, seats, board_after, events, following=following, ahead=ahead)
    if not state.ended:
        to_act = state.seat_to_act
        who = f"p{seats.index(to_act) + 1}" if to_act is not None else "nobody"
        raise PHHError(f"The actions stop before the hand is over: {who} is still to act.")
    stacks = tuple(state.stacks[state.setup.index_of(seat)] for seat in seats)
    return stacks, tuple(events)


def _seats(history: HandHistory) -> list[int]:
    """Table seats of p1..pN: the file's when they run clockwise from p1 (the order our engine
    deals in), else 1..N."""
    count = history.player_count
    wanted = list(history.seats or ())
    if len(wanted) == count and len(set(wanted)) == count:
        ordered = sorted(wanted)
        start = ordered.index(wanted[-1]) + 1  # the button is the last player
        if ordered[start:] + ordered[:start] == wanted:
            return wanted
    return list(range(1, count + 1))


def _start(
    history: HandHistory, config: HandConfig, seats: list[int], deck: tuple[Card, ...]
) -> tuple[HandState, list[HandEvent]]:
    forced = _forced_bets(history, config, seats)
    command = StartHand(
        hand_id=str(history.hand or "phh"),
        config=config,
        seats=tuple(map(SeatStack, seats, forced.stacks)),
        button=seats[-1],
        deck=deck,
        now=0,
        posts=forced.posts,
        small_blind=forced.small_blind,
        big_blind=forced.big_blind,
    )
    try:
        state, events = execute(None, command)
    except HandRuleError as error:
        raise PHHError(f"The hand cannot be dealt under our rules: {error}") from None
    return state, list(events)


class _ForcedBets(NamedTuple):
    """What our StartHand needs for the file's forced bets: the stacks it deals (p1 first), the
    extra posts, and the explicit blinds' seats (both None: they follow the button)."""

    stacks: tuple[int, ...]
    posts: tuple[ExtraPost, ...]
    small_blind: int | None = None
    big_blind: int | None = None


def _forced_bets(history: HandHistory, config: HandConfig, seats: list[int]) -> _ForcedBets:
    """The blinds where the file puts them (explicit when one is missing) and the antes that
    differ between players as dead money (:func:`_carry_dead_antes`)."""
    stacks = [whole_amount(stack, "starting_stacks") for stack in history.starting_stacks]
    posts = list(_extra_posts(history, seats))
    explicit = blind_players(history)
    antes = dead_antes(history)
    if antes is not None:
        explicit = _carry_dead_antes(
            history, config, seats, antes, stacks=stacks, posts=posts, explicit=explicit
        )
    return _ForcedBets(tuple(stacks), tuple(posts), *_blind_seats(explicit, seats))


def _carry_dead_antes(
    history: HandHistory,
    config: HandConfig,
    seats: list[int],
    antes: tuple[int, ...],
    *,
    stacks: list[int],
    posts: list[ExtraPost],
    explicit: tuple[int | None, int] | None,
) -> tuple[int | None, int] | None:
    """Post ``antes`` as dead money, changing ``stacks`` and ``posts`` in place; the explicit
    blinds (PHH player indexes) that then apply.

    Our engine takes dead money only as an extra post from a player who posts no blind. So one
    such player, the carrier, posts the antes for everybody: each anted player is dealt his
    stack less his ante and the carrier his stack plus all the antes, which he posts. Every
    stack after the antes, the pot and its main-pot-only dead money are the file's. Heads-up,
    where both players post a blind, the small blind is the carrier: our engine is told there
    is no small blind, and he posts his as the live part of his post (a bet, as a small blind).
    """
    for player, (ante, stack) in enumerate(zip(antes, stacks, strict=True)):
        if ante and ante >= stack:
            raise PHHError(
                f"p{player + 1}'s ante of {ante} takes his whole stack of {stack}; our engine "
                "posts antes that differ between players as dead money before the deal and "
                "cannot deal him in without chips."
            )
        stacks[player] -= ante
    small, big = explicit or ((1, 0) if len(seats) == 2 else (0, 1))
    posters = {seats.index(post.seat) for post in posts}
    free = [player for player in range(len(seats)) if player not in {small, big} | posters]
    live = 0
    if free:
        carrier = free[0]
    elif len(seats) == 2 and small is not None and small not in posters:
        carrier, live, explicit = small, config.stakes.small_blind, (None, big)
        if stacks[carrier] < live:
            raise PHHError(
                f"p{carrier + 1} cannot post both his ante and his small blind; our engine "
                "cannot post a short small blind with a big-blind ante heads-up."
            )
    else:
        raise PHHError(
            f"Our engine takes antes that differ between players ({list(history.antes)}) as "
            "dead money from a player who posts no blind; every player of this hand posts one."
        )
    total = sum(antes)
    stacks[carrier] += total
    posts.append(ExtraPost(seats[carrier], live, total))
    return explicit


def _blind_seats(
    explicit: tuple[int | None, int] | None, seats: list[int]
) -> tuple[int | None, int | None]:
    if explicit is None:
        return None, None
    small, big = explicit
    return (None if small is None else seats[small]), seats[big]


def _board_counts(actions: Sequence[PHHAction]) -> dict[int, int]:
    """For each board-dealing action (by number), how many board cards are out after it."""
    counts: dict[int, int] = {}
    dealt = 0
    for action in actions:
        if action.verb == "db":
            dealt += len(action.cards)
            counts[action.number] = dealt
    return counts


def _extra_posts(history: HandHistory, seats: list[int]) -> tuple[ExtraPost, ...]:
    """The ``_extra_posts`` user field as our extra posts."""
    entries = history.fields.get("_extra_posts", [])
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise PHHError('The field _extra_posts must be [{player = "p3", live = 2, dead = 0}, ...].')
    posts = []
    for entry in entries:
        player = _player(str(entry.get("player", "")), len(seats), "The field _extra_posts")
        live = whole_amount(entry.get("live", 0), "_extra_posts")
        dead = whole_amount(entry.get("dead", 0), "_extra_posts")
        posts.append(ExtraPost(seats[player], live, dead))
    return tuple(posts)


def _play(
    state: HandState,
    action: PHHAction,
    seats: list[int],
    board_after: dict[int, int],
    events: list[HandEvent],
    *,
    following: PHHAction | None = None,
    ahead: dict[int, tuple[Card, ...]] | None = None,
) -> HandState:
    """Apply one action; dealing and showdown actions only check that the hand is there."""
    if action.verb in {"dh", "sm"}:
        return state
    where = f'Action {action.number} "{action.text}"'
    if action.verb == "db":
        # Our engine deals each street as soon as the betting before it is over.
        if len(state.board) < board_after[action.number]:
            raise PHHError(f"{where} deals the board while our rules still expect a bet.")
        return state
    if action.verb == "aai":
        return _artificial_all_in(state, action, seats[action.player], events)
    stud = state.setup.game.forced_bets is ForcedBets.ANTE_BRING_IN
    draw = state.setup.game.is_draw_game
    if (action.verb == "sd" and not draw) or (action.verb == "pb" and not stud):
        raise PHHError(f"{where} is a draw or a bring-in, which the game does not have.")
    if action.verb in {"sd", "split", "nosplit"}:
        if _answered_by_next_action(state, action, seats[action.player], following):
            return state
        return _draw_game_step(state, action, seats[action.player], events, ahead or {})
    seat = seats[action.player]
    if (
        action.verb == "f"
        and action.timed_out
        and state.folded[state.setup.index_of(seat)]
        and any(isinstance(event, pb.BringInPosted) and event.timed_out for event in events)
    ):
        return state  # the fold that followed a bring-in time-out, already played with it
    if state.ended:
        raise PHHError(f"{where} comes after the hand is over under our rules.")
    command = _command(state, action, seat, following)
    try:
        state, more = execute(state, command)
    except HandRuleError as error:
        raise PHHError(f"{where} cannot be played under our rules: {error}") from None
    events += more
    return state


def _replacements_ahead(actions: Sequence[PHHAction]) -> dict[int, tuple[Card, ...]]:
    """For each ``sd`` action (by number): the replacements the file deals from it on, in the
    order of the draws (each ``sd`` is answered by the next ``d dh`` to the same player)."""
    draws: list[tuple[int, tuple[Card, ...]]] = []
    waiting: dict[int, int] = {}  # player -> position in ``draws`` of his unanswered sd
    for action in actions:
        if action.verb == "sd":
            waiting[action.player] = len(draws)
            draws.append((action.number, ()))
        elif action.verb == "dh" and action.player in waiting:
            position = waiting.pop(action.player)
            known = tuple(card for card in action.cards if card is not None)
            draws[position] = (draws[position][0], known)
    ahead: dict[int, tuple[Card, ...]] = {}
    later: tuple[Card, ...] = ()
    for number, cards in reversed(draws):
        later = cards + later
        ahead[number] = later
    return ahead


def _answered_by_next_action(
    state: HandState, action: PHHAction, seat: int, following: PHHAction | None
) -> bool:
    """Whether ``# pK no split`` was written for the player's betting action that follows it: a
    bet, check or fold instead of an answer refuses the offer itself (decision A17 rule 4), and
    the export writes the refusal and the action. Playing the refusal alone could end the round
    (everyone else all-in) before the action, so the action is played in its place."""
    if (
        action.verb != "nosplit"
        or action.timed_out
        or state.ended
        or following is None
        or following.player != action.player
        or following.verb not in {"f", "cc", "cbr"}
    ):
        return False
    try:
        after, _ = execute(state, AgreeSplit(seat, False, action.number))
    except HandRuleError:
        return False
    return after.ended or after.to_act != after.setup.index_of(seat)


def _draw_game_step(
    state: HandState,
    action: PHHAction,
    seat: int,
    events: list[HandEvent],
    ahead: dict[int, tuple[Card, ...]],
) -> HandState:
    """A draw (``sd``) or an answer to the split offer."""
    where = f'Action {action.number} "{action.text}"'
    index = state.setup.index_of(seat)
    pat = action.verb == "sd" and not action.cards and not action.timed_out
    if pat and _stood_pat_unasked(state, index, events):
        # A protected player's pat, recorded when the draw reached him (the hand may have
        # ended with it, everyone else being all-in too).
        return state
    if state.ended:
        raise PHHError(f"{where} comes after the hand is over under our rules.")
    command: Draw | AgreeSplit | TimeOut
    if action.timed_out and state.to_act == index and not action.cards:
        command = TimeOut(seat, state.deadline)
    elif action.verb == "sd":
        order = list(dict.fromkeys([*ahead.get(action.number, ()), *state.setup.game.deck]))
        discard = tuple(card for card in action.cards if card is not None)
        if len(discard) != len(action.cards):
            raise PHHError(f"{where} throws away unknown cards; name them.")
        command = Draw(seat, discard, action.number, tuple(order))
    else:
        command = AgreeSplit(seat, action.verb == "split", action.number)
    try:
        state, more = execute(state, command)
    except HandRuleError as error:
        raise PHHError(f"{where} cannot be played under our rules: {error}") from None
    events += more
    return state


def _stood_pat_unasked(state: HandState, index: int, events: list[HandEvent]) -> bool:
    """Whether the player is all-in by the disconnection protection and our engine has already
    stood him pat in this street's draw, unasked (RULES.md §6.5 rule 4). The events say who
    was protected: the state forgets it when the hand ends (his chips come back)."""
    seat = state.setup.seats[index]
    if not any(isinstance(event, pb.ArtificialAllIn) and event.seat == seat for event in events):
        return False
    number = draw_number(state)
    return number > 0 and bool(state.draws) and state.draws[index] >= number


def _artificial_all_in(
    state: HandState, action: PHHAction, seat: int, events: list[HandEvent]
) -> HandState:
    """A protected time-out; of the two ways to count forced bets (decision A27), the one that
    gives the recorded contribution."""
    where = f'Action {action.number} "{action.text}"'
    for count_forced_bets in (True, False):
        command = TimeOut(seat, state.deadline, protected=True, count_forced_bets=count_forced_bets)
        try:
            after, more = execute(state, command)
        except HandRuleError as error:
            raise PHHError(f"{where} cannot be played under our rules: {error}") from None
        if any(
            isinstance(event, pb.ArtificialAllIn) and event.contributed == action.amount
            for event in more
        ):
            events += more
            return after
    raise PHHError(f"{where} does not match an artificial all-in under our rules.")


def _command(
    state: HandState, action: PHHAction, seat: int, following: PHHAction | None = None
) -> Act | TimeOut:
    now = action.number
    index = state.setup.index_of(seat)
    if action.verb == "pb":
        if action.timed_out and state.to_act == index:
            # Our export writes the fold that an unprotected bring-in time-out causes.
            folds = (
                following is not None
                and following.verb == "f"
                and following.timed_out
                and following.player == action.player
            )
            return TimeOut(seat, state.deadline, protected=not folds)
        return Act(seat, Action.BRING_IN, now=now)
    owes = state.round.level > state.bets[index]
    if action.timed_out and state.to_act == index and (action.verb == "f") == owes:
        # A time-out folds when the player owes chips and checks otherwise (RULES.md §6.4).
        return TimeOut(seat, state.deadline)
    if action.verb == "f":
        return Act(seat, Action.FOLD, now=now)
    if action.verb == "cc":
        return Act(seat, Action.CALL if owes else Action.CHECK, now=now)
    wager = Action.RAISE if state.round.level else Action.BET
    if state.to_act == index:
        # PHH's cbr is a completion, a bet or a raise: whichever our rules open to him.
        for option in legal_actions(state):
            if option.action in _WAGERS:
                wager = option.action
    return Act(seat, wager, action.amount, now=now)


_WAGERS: Final = frozenset({Action.BET, Action.RAISE, Action.COMPLETE})


# --- reading action notations -------------------------------------------------------------------


def parse_action(number: int, text: str, players: int, *, scale: int = 1) -> PHHAction | None:
    """One action notation (``"d dh p1 AsKs"``, ``"p3 cbr 20 # all in"``, ...); None for a
    no-op (empty or only a commentary). PHHError for a notation that is not PHH. Amounts are
    ``scale`` times the written ones (:func:`poker.engine.phh.units.hand_scale`).

    >>> action = parse_action(4, "p2 cbr 30 # shove", 3)
    >>> action.player, action.verb, action.amount, action.timed_out
    (1, 'cbr', 30, False)
    """
    notation, _, commentary = text.partition("#")
    words = notation.split()
    if not words:
        answer = _SPLIT_ANSWER.match(text.strip())
        if answer is not None:
            player = _player(f"p{answer[1]}", players, f'Action {number} "{text}"')
            verb = "split" if answer[2] == "split" else "nosplit"
            return PHHAction(number, text, player, verb, timed_out=bool(answer[3]))
        protected = _ARTIFICIAL_ALL_IN.match(text.strip())
        if protected is None:
            return None
        player = _player(f"p{protected[1]}", players, f'Action {number} "{text}"')
        amount = _amount(protected[2], f'Action {number} "{text}"', scale)
        return PHHAction(number, text, player, "aai", amount=amount)
    where = f'Action {number} "{text}"'
    if words[0] == "d":
        return _dealer_action(number, text, words, players, where)
    player = _player(words[0], players, where)
    verb = words[1] if len(words) > 1 else ""
    if verb not in _PLAYER_VERBS:
        raise PHHError(f"{where} is not a PHH action.")
    if verb == "cbr":
        if len(words) != 3:
            raise PHHError(f"{where} needs one amount.")
        return PHHAction(number, text, player, verb, amount=_amount(words[2], where, scale))
    if verb == "sm":
        cards = _cards(words[2], where) if len(words) > 2 and words[2] != "-" else ()
        return PHHAction(number, text, player, verb, cards)
    if verb == "sd":
        if len(words) > 3:
            raise PHHError(f"{where} takes the cards thrown away as one word.")
        cards = _cards(words[2], where) if len(words) == 3 else ()
        timed_out = commentary.strip() == "timed out"
        return PHHAction(number, text, player, verb, cards, timed_out=timed_out)
    if len(words) != 2 and verb != "sd":
        raise PHHError(f"{where} takes no argument.")
    timed_out = commentary.strip() == "timed out"
    return PHHAction(number, text, player, verb, timed_out=timed_out)


def _dealer_action(number: int, text: str, words: list[str], players: int, where: str) -> PHHAction:
    if len(words) == 3 and words[1] == "db":
        return PHHAction(number, text, _DEALER, "db", _cards(words[2], where))
    if len(words) == 4 and words[1] == "dh":
        player = _player(words[2], players, where)
        return PHHAction(number, text, player, "dh", _cards(words[3], where))
    raise PHHError(f"{where} is not a PHH dealing action.")


def _player(word: str, players: int, where: str) -> int:
    number = word[1:]
    if word[:1] != "p" or not (number.isascii() and number.isdigit()) or len(number) > 9:
        raise PHHError(f"{where} does not name a player like p1.")
    index = int(number) - 1
    if not 0 <= index < players:
        raise PHHError(f"{where} names {word}, but the hand has {players} players.")
    return index


def _amount(word: str, where: str, scale: int) -> int:
    try:
        value = Decimal(word)
    except InvalidOperation:
        raise PHHError(f"{where} has an amount that is not a number.") from None
    if not value.is_finite():
        raise PHHError(f"{where} has an amount that is not a number.")
    return whole_amount(value * scale, "actions")


def _cards(word: str, where: str) -> tuple[Card | None, ...]:
    if len(word) % 2:
        raise PHHError(f"{where} has cards that are not two characters each.")
    cards: list[Card | None] = []
    for start in range(0, len(word), 2):
        token = word[start : start + 2]
        if token == "??":
            cards.append(None)
            continue
        try:
            cards.append(parse_card(token))
        except ValueError:
            raise PHHError(f"{where}: {token!r} is not a card.") from None
    return tuple(cards)


# --- the deck -----------------------------------------------------------------------------------


def arrange_deck(
    game: GameDefinition, actions: Sequence[PHHAction], players: int, *, burn: bool = False
) -> tuple[Card, ...]:
    """A deck from which our dealing gives the hole cards and board of ``actions``; ``burn``:
    a card the file does not mention goes before each street's board cards (decision A31)."""
    if game.forced_bets is ForcedBets.ANTE_BRING_IN:
        return _arrange_stud_deck(game, actions, players)
    if game.is_draw_game:
        return _arrange_draw_deck(game, actions, players)
    holes = _holes(game, actions, players)
    board = [card for action in actions if action.verb == "db" for card in action.cards]
    board_size = sum(street.board for street in game.streets)
    if len(board) > board_size:
        raise PHHError(f"The file deals {len(board)} board cards; {game.name} has {board_size}.")
    board += [None] * (board_size - len(board))
    spare = _spare(game, [card for hole in holes for card in hole] + board)
    deck: list[Card] = []
    for position in range(game.hole_card_count):
        deck.extend(_known_or(hole[position], spare) for hole in holes)
    cards = iter(board)
    for street in game.streets:
        if street.board and burn:
            deck.append(next(spare))  # the burn card
        deck.extend(_known_or(next(cards), spare) for _ in range(street.board))
    deck.extend(spare)
    return tuple(deck)


def _arrange_stud_deck(
    game: GameDefinition, actions: Sequence[PHHAction], players: int
) -> tuple[Card, ...]:
    """Stud: the cards in the order the dealing actions give them. Each street deals one pass
    per card to the players still in (a street ends where a player would be dealt twice); a
    ``d db`` is the common card."""
    holes = _holes(game, actions, players)
    given = [iter(hole) for hole in holes]
    board = [card for action in actions if action.verb == "db" for card in action.cards]
    spare = _spare(game, [card for hole in holes for card in hole] + board)
    order: list[Card | None] = []
    street: list[PHHAction] = []

    def deal_street() -> None:
        for card in range(max((len(dealt.cards) for dealt in street), default=0)):
            order.extend(next(given[dealt.player]) for dealt in street if card < len(dealt.cards))
        street.clear()

    for action in actions:
        if action.verb == "dh":
            if any(dealt.player == action.player for dealt in street):
                deal_street()
            street.append(action)
        elif action.verb == "db":
            deal_street()
            order.extend(action.cards)
        elif street and action.verb != "sm":
            deal_street()
    deal_street()
    deck = [_known_or(card, spare) for card in order]
    deck.extend(spare)
    return tuple(deck)


def _arrange_draw_deck(
    game: GameDefinition, actions: Sequence[PHHAction], players: int
) -> tuple[Card, ...]:
    """Draw games: each player's first five cards one pass at a time, then the replacements in
    the order of the draws (a card dealt again after a reshuffle only once: its first time)."""
    count = game.hole_card_count
    initial: list[list[Card | None]] = [[] for _ in range(players)]
    drawing: set[int] = set()
    replacements: list[Card] = []
    for action in actions:
        if action.verb == "sd":
            drawing.add(action.player)
        elif action.verb == "dh" and action.player in drawing:
            drawing.discard(action.player)
            replacements += [card for card in action.cards if card is not None]
        elif action.verb == "dh":
            initial[action.player].extend(action.cards)
    for player, hole in enumerate(initial):
        if len(hole) > count:
            raise PHHError(
                f"p{player + 1} is dealt {len(hole)} hole cards; {game.name} deals {count}."
            )
        hole.extend([None] * (count - len(hole)))
    spare = _spare(game, [card for hole in initial for card in hole])
    known = {card for hole in initial for card in hole if card is not None}
    fresh = [card for card in dict.fromkeys(replacements) if card not in known]
    if any(card not in game.card_set for card in fresh):
        raise PHHError(f"The file deals cards that are not in the {game.name} deck.")
    rest = [card for card in spare if card not in fresh]
    unknown = iter(rest)
    deck: list[Card] = []
    for position in range(count):
        deck.extend(_known_or(hole[position], unknown) for hole in initial)
    deck += fresh
    deck += [card for card in rest if card not in deck]
    return tuple(deck)


def _holes(
    game: GameDefinition, actions: Sequence[PHHAction], players: int
) -> list[list[Card | None]]:
    count = game.hole_card_count
    holes: list[list[Card | None]] = [[] for _ in range(players)]
    for action in actions:
        if action.verb == "dh":
            holes[action.player].extend(action.cards)
    for player, hole in enumerate(holes):
        if len(hole) > count:
            raise PHHError(
                f"p{player + 1} is dealt {len(hole)} hole cards; {game.name} deals {count}."
            )
        hole.extend([None] * (count - len(hole)))
    for action in actions:
        if action.verb == "sm":
            _reveal(holes[action.player], action.cards, action)
    return holes


def _reveal(hole: list[Card | None], shown: Sequence[Card | None], action: PHHAction) -> None:
    """Fill the unknown hole cards with the cards shown at the showdown."""
    for card in shown:
        if card is None or card in hole:
            continue
        if None not in hole:
            where = f'Action {action.number} "{action.text}"'
            raise PHHError(f"{where} shows {card}, which the player was not dealt.")
        hole[hole.index(None)] = card


def _spare(game: GameDefinition, cards: Sequence[Card | None]) -> Iterator[Card]:
    """The cards the file does not mention, in deck order, after checking the ones it does."""
    known = [card for card in cards if card is not None]
    seen: set[Card] = set()
    for card in known:
        if card not in game.card_set:
            raise PHHError(f"{card} is not a card of the {game.name} deck.")
        if card in seen:
            raise PHHError(f"The card {card} is dealt twice.")
        seen.add(card)
    return iter([card for card in game.deck if card not in seen])


def _known_or(card: Card | None, spare: Iterator[Card]) -> Card:
    # "is None", not "or": the deuce of spades is card 0, which is falsy.
    return next(spare) if card is None else card
