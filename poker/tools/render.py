"""How pokerctl tells people what happens: hands as a person reads them, tables as a view.

:class:`Narrator` turns a table's events (as WatchTable streams them) into sentences - streets
and the board, "raises to 40", "calls 2" (the chips added), the showdown, who won which pot, the
rake - naming players rather than seats. :func:`table_view` draws a ``GetTable`` answer as a
rich table: the seats, their stacks and the cards the caller may see, the pot, whose turn it is
and the legal actions with their amounts; the ``*_grid`` functions draw the lists (tables,
transactions, the rake report). Times are the local time of the reader.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from poker.engine.games import GAMES
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb

#: The betting structures as ``create --structure`` names them.
STRUCTURES: Final = {
    "no-limit": pb.BETTING_STRUCTURE_NO_LIMIT,
    "pot-limit": pb.BETTING_STRUCTURE_POT_LIMIT,
    "half-pot-limit": pb.BETTING_STRUCTURE_HALF_POT_LIMIT,
    "fixed-limit": pb.BETTING_STRUCTURE_FIXED_LIMIT,
}
_STRUCTURE_NAMES: Final[dict[int, str]] = {int(number): name for name, number in STRUCTURES.items()}
_SHARES: Final = {
    pb.POT_SHARE_HIGH: " (high half)",
    pb.POT_SHARE_LOW: " (low half)",
    pb.POT_SHARE_AGREED_SPLIT: " (split)",
}
_CASH_OUT_REASONS: Final = {
    pb.CASH_OUT_REASON_STOOD_UP: "stands up",
    pb.CASH_OUT_REASON_BUSTED: "is busted and leaves",
    pb.CASH_OUT_REASON_TABLE_CLOSED: "leaves (table closed)",
    pb.CASH_OUT_REASON_SAT_OUT_TOO_LONG: "sat out too long and is stood up",
}
_SEAT_STATES: Final = {
    dpb.SEAT_STATE_IN_HAND: "in hand",
    dpb.SEAT_STATE_PLAYING: "playing",
    dpb.SEAT_STATE_WAITING: "waiting for the big blind",
    dpb.SEAT_STATE_SITTING_OUT: "sitting out",
    dpb.SEAT_STATE_LEAVING: "leaving after this hand",
    dpb.SEAT_STATE_BUSTED: "busted",
}


def local_time(unix_ms: int) -> str:
    """``unix_ms`` as the reader's local date and time (``-`` for 0, i.e. never)."""
    if not unix_ms:
        return "-"
    moment = datetime.datetime.fromtimestamp(unix_ms / 1000).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z")


def as_json(message: Message) -> dict[str, Any]:
    """A protobuf message as the JSON object ``--json`` prints (field names as in the .proto)."""
    return MessageToDict(message, preserving_proto_field_name=True)


def structure_name(structure: int) -> str:
    """``pb.BETTING_STRUCTURE_NO_LIMIT`` -> ``no-limit``."""
    return _STRUCTURE_NAMES.get(structure, "?")


def game_name(key: str) -> str:
    """The game's full name (``holdem`` -> ``Texas Hold'em``), its key when unknown."""
    game = GAMES.get(key)
    return game.name if game is not None else key


def stakes_text(stakes: pb.Stakes) -> str:
    """The forced bets and limits as players say them: ``1/2``, ``ante 1, bring-in 2, 4/8``."""
    parts = []
    if stakes.big_blind:
        parts.append(f"blinds {stakes.small_blind}/{stakes.big_blind}")
    if stakes.ante:
        parts.append(f"ante {stakes.ante}")
    if stakes.bring_in:
        parts.append(f"bring-in {stakes.bring_in}")
    if stakes.big_bet:
        parts.append(f"bets {stakes.small_bet}/{stakes.big_bet}")
    return ", ".join(parts) or "-"


def action_text(action: int, low: int, high: int) -> str:
    """A legal action with its amounts: ``call 2``, ``raise to 4-200``, ``fold``."""
    name = dpb.ActionKind.Name(action).removeprefix("ACTION_KIND_").lower()  # type: ignore[arg-type]
    name = name.replace("_", "-")
    if action in (dpb.ACTION_KIND_RAISE, dpb.ACTION_KIND_COMPLETE):
        name += " to"
    if not low and not high:
        return name
    return f"{name} {low}" if high in (0, low) else f"{name} {low}-{high}"


class Narrator:
    """Sentences for one table's events, in order (feed every event to :meth:`lines`).

    ``names`` maps seats to players (the table view at the start); seating and cash-out events
    keep it current. Events nobody needs to read (the turn requests, the schedule, reshuffles)
    give no line."""

    def __init__(self, names: dict[int, str] | None = None) -> None:
        self.names: dict[int, str] = dict(names or {})
        self._game = ""
        self._board: list[str] = []
        self._handlers: dict[str, Callable[[Any], Iterable[str]]] = {
            "hand_started": self._hand_started,
            "ante_posted": lambda e: [f"{self._who(e.seat)} posts the ante {e.amount}{_ai(e)}"],
            "blind_posted": self._blind,
            "dead_blind_posted": lambda e: [f"{self._who(e.seat)} posts a dead {e.amount}"],
            "bring_in_posted": lambda e: [
                f"{self._who(e.seat)} brings in for {e.amount}{_ai(e)}{_late(e)}"
            ],
            "hole_cards_dealt": self._hole_cards,
            "board_dealt": self._board_dealt,
            "folded": lambda e: [f"{self._who(e.seat)} folds{_late(e)}"],
            "checked": lambda e: [f"{self._who(e.seat)} checks{_late(e)}"],
            "called": lambda e: [f"{self._who(e.seat)} calls {e.amount}{_ai(e)}"],
            "bet_placed": lambda e: [f"{self._who(e.seat)} bets {e.amount}{_ai(e)}"],
            "raised_to": lambda e: [f"{self._who(e.seat)} raises to {e.amount}{_ai(e)}"],
            "completed": lambda e: [f"{self._who(e.seat)} completes to {e.amount}{_ai(e)}"],
            "cards_drawn": self._drawn,
            "split_agreed": lambda e: [f"{self._who(e.seat)} agrees to split the pot"],
            "split_refused": lambda e: [f"{self._who(e.seat)} refuses the split{_late(e)}"],
            "pot_split_by_agreement": lambda e: [f"{_pot(e.pot)} ({e.amount}) is split"],
            "uncalled_bet_returned": lambda e: [
                f"uncalled {e.amount} returned to {self._who(e.seat)}"
            ],
            "hand_shown": self._shown,
            "hand_mucked": lambda e: [f"{self._who(e.seat)} mucks"],
            "rake_taken": lambda e: [f"rake {e.amount}"] if e.amount else [],
            "pot_awarded": self._awarded,
            "hand_ended": self._ended,
            "hand_voided": lambda e: [f"hand voided ({e.reason}): every chip put in returned"],
            "artificial_all_in": lambda e: [
                f"{self._who(e.seat)} is all-in by disconnection protection ({e.contributed} in)"
            ],
            "stack_returned": lambda e: [f"{e.amount} set aside returned to {self._who(e.seat)}"],
            "player_seated": self._seated,
            "chips_added": lambda e: [f"{e.player_id} adds {e.amount}"],
            "player_sat_out": lambda e: [f"{self._who(e.seat)} sits out"],
            "player_sat_in": lambda e: [f"{self._who(e.seat)} sits in"],
            "stand_up_requested": lambda e: [f"{self._who(e.seat)} leaves after this hand"],
            "player_cashed_out": self._cashed_out,
            "table_created": lambda e: [f"table created: {config_text(e.config)}"],
            "table_closed": lambda e: [f"table closed{': ' + e.reason if e.reason else ''}"],
            "table_taken_over": lambda e: [
                f"another dealer took the table over{' (' + e.owner + ')' if e.owner else ''}"
            ],
        }

    def lines(self, event: pb.TableEvent) -> list[str]:
        """What a person reads about ``event`` (often nothing)."""
        body = event.WhichOneof("body")
        handler = self._handlers.get(body or "")
        return list(handler(getattr(event, body))) if handler is not None and body else []

    def _who(self, seat: int) -> str:
        return self.names.get(seat, f"seat {seat}")

    def _street(self, index: int) -> str:
        game = GAMES.get(self._game)
        if game is None or not 0 <= index < len(game.streets):
            return f"street {index + 1}"
        return game.streets[index].name

    def _hand_started(self, event: pb.HandStarted) -> Iterable[str]:
        self._game = event.game
        self._board = []
        players = ", ".join(f"{self._who(s.seat)} {s.stack}" for s in event.seats)
        yield (
            f"── hand {event.hand_id}: {game_name(event.game)} "
            f"{structure_name(event.structure)}, {stakes_text(event.stakes)} · "
            f"{local_time(event.started_at)} ──"
        )
        yield f"button {self._who(event.button)}; dealt in: {players}"

    def _blind(self, event: pb.BlindPosted) -> Iterable[str]:
        kind = {
            pb.BLIND_KIND_SMALL_BLIND: "the small blind",
            pb.BLIND_KIND_BIG_BLIND: "the big blind",
        }.get(event.kind, "a big blind to enter")
        yield f"{self._who(event.seat)} posts {kind} {event.amount}{_ai(event)}"

    def _hole_cards(self, event: pb.HoleCardsDealt) -> Iterable[str]:
        shown = [
            f"{self._who(hand.seat)} [{_spaced(hand.down)}]" if hand.down.strip("? ") else ""
            for hand in event.hands
        ]
        up = [f"{self._who(hand.seat)} shows {_spaced(hand.up)}" for hand in event.hands if hand.up]
        yield f"*** {self._street(event.street)} ***"
        if any(shown):
            yield "dealt: " + ", ".join(text for text in shown if text)
        if up:
            yield "up: " + ", ".join(up)

    def _board_dealt(self, event: pb.BoardDealt) -> Iterable[str]:
        self._board.extend(_spaced(event.cards).split())
        # Draw games open their streets with no board cards: no empty "board []" then.
        board = f" board [{' '.join(self._board)}]" if self._board else ""
        yield f"*** {self._street(event.street)} ***{board}"

    def _drawn(self, event: pb.CardsDrawn) -> Iterable[str]:
        what = f"draws {event.count}" if event.count else "stands pat"
        mine = f" [{_spaced(event.drawn)}]" if event.drawn else ""
        yield f"{self._who(event.seat)} {what}{mine}{_late(event)}"

    def _shown(self, event: pb.HandShown) -> Iterable[str]:
        names = " / ".join(name for name in (event.high_hand, event.low_hand) if name)
        yield f"{self._who(event.seat)} shows [{_spaced(event.cards)}]" + (
            f" ({names})" if names else ""
        )

    def _awarded(self, event: pb.PotAwarded) -> Iterable[str]:
        share = _SHARES.get(event.share, "")
        hand = f" with {event.hand}" if event.hand else ""
        yield f"{self._who(event.seat)} wins {_pot(event.pot)}{share}: {event.amount}{hand}"

    def _ended(self, event: pb.HandEnded) -> Iterable[str]:
        results = ", ".join(
            f"{self._who(r.seat)} {r.net:+d} ({r.stack})" for r in event.results if r.net
        )
        yield f"hand over: {results or 'no chips changed hands'}" + (
            f"; rake {event.rake}" if event.rake else ""
        )

    def _seated(self, event: pb.PlayerSeated) -> Iterable[str]:
        self.names[event.seat] = event.player_id
        yield f"{event.player_id} sits in seat {event.seat} with {event.amount}"

    def _cashed_out(self, event: pb.PlayerCashedOut) -> Iterable[str]:
        self.names.pop(event.seat, None)
        reason = _CASH_OUT_REASONS.get(event.reason, "leaves")
        yield f"{event.player_id} {reason}, cashing out {event.amount}"


def config_text(config: pb.TableConfig) -> str:
    """One line for a table's settings: game, structure, stakes, seats, money."""
    money = "real money" if config.real_money else "play money"
    return (
        f"{game_name(config.game)} {structure_name(config.structure)}, "
        f"{stakes_text(config.stakes)}, {config.seat_count} seats, {money}"
    )


def table_view(view: dpb.TableView) -> RenderableType:
    """A ``GetTable`` answer as a person reads it: a header, the seats and the hand."""
    hand = view.hand if view.HasField("hand") else None
    state = "closed" if view.closed else ("hand running" if hand else "between hands")
    header = Text.assemble(
        (f"{view.table_id}", "bold"),
        f"  {config_text(view.config)}  ·  {state}, {view.hands_started} hands dealt",
    )
    seats = Table(show_edge=False, header_style="bold")
    for column in ("seat", "player", "stack", "bet", "cards", "state"):
        seats.add_column(column, justify="right" if column in ("seat", "stack", "bet") else "left")
    for seat in view.seats:
        marks = []
        if hand is not None and seat.seat == hand.button:
            marks.append("button")
        if hand is not None and seat.seat == hand.seat_to_act:
            marks.append("to act")
        if seat.folded:
            marks.append("folded")
        owes = [n for n, o in (("SB", seat.owes_small_blind), ("BB", seat.owes_big_blind)) if o]
        if owes:
            marks.append("owes " + "+".join(owes))
        # ``cards`` are all the cards the caller may see (his own, a shown hand), up cards
        # included; else only the up cards are public.
        cards = _spaced(seat.cards) or _spaced(seat.up_cards)
        seats.add_row(
            str(seat.seat),
            seat.player_id + (" (you)" if seat.seat == view.your_seat else ""),
            str(seat.stack),
            str(seat.bet or ""),
            cards,
            ", ".join([_SEAT_STATES.get(seat.state, ""), *marks]).strip(", "),
        )
    parts: list[RenderableType] = [header, seats]
    if hand is not None:
        parts.extend(_hand_lines(view, hand))
    elif not view.closed and view.HasField("next_hand_at"):
        parts.append(Text(f"next hand not before {local_time(view.next_hand_at.ToMilliseconds())}"))
    return Group(*parts)


def _hand_lines(view: dpb.TableView, hand: dpb.HandView) -> Iterable[RenderableType]:
    names = {seat.seat: seat.player_id for seat in view.seats}
    game = GAMES.get(view.config.game)
    street = (
        game.streets[hand.street].name
        if game is not None and 0 <= hand.street < len(game.streets)
        else str(hand.street)
    )
    board = f", board [{_spaced(hand.board)}]" if hand.board else ""
    yield Text(f"hand {hand.hand_id}: {street}{board}, pot {hand.pot}")
    if not hand.seat_to_act:
        return
    who = names.get(hand.seat_to_act, f"seat {hand.seat_to_act}")
    if hand.turn == pb.TURN_KIND_DRAW:
        offer = f"draw 0-{hand.draw.max_discard} cards"
    elif hand.turn == pb.TURN_KIND_SPLIT_OFFER:
        offer = f"split the pot ({', '.join(map(str, hand.split_offer.amounts))}) or not"
    else:
        offer = ", ".join(
            action_text(a.action, a.min_amount, a.max_amount) for a in hand.legal_actions
        )
    yield Text(f"to act: {who} (until {local_time(hand.deadline.ToMilliseconds())}): {offer}")


def _ai(event: Any) -> str:
    return " and is all-in" if getattr(event, "all_in", False) else ""


def _late(event: Any) -> str:
    return " (time ran out)" if getattr(event, "timed_out", False) else ""


def _pot(index: int) -> str:
    return "the main pot" if index == 0 else f"side pot {index}"


def tables_grid(summaries: Sequence[Any], views: Sequence[dpb.TableView]) -> Table:
    """``ListTables`` as a grid, one row a table (its view: money, chips, hands; a quarantined
    table's view is empty, and its state says so)."""
    grid = Table(header_style="bold", show_edge=False)
    for column in ("table", "game", "structure", "stakes", "seats", "money", "chips", "hands"):
        grid.add_column(column)
    grid.add_column("state")
    for summary, view in zip(summaries, views, strict=True):
        state = "closed" if summary.closed else ("playing" if summary.hand_running else "waiting")
        state = "QUARANTINED" if summary.quarantined else state
        grid.add_row(
            summary.table_id,
            game_name(summary.game),
            structure_name(summary.structure),
            stakes_text(summary.stakes),
            f"{summary.players}/{summary.seat_count}",
            "real" if summary.real_money else "play",
            str(sum(seat.stack for seat in view.seats)),
            str(view.hands_started),
            state,
        )
    return grid


def money_text(balance: wpb.Balance) -> str:
    """A player's balance on one line: cash, held, at tables (which), total."""
    tables = ", ".join(f"{line.table_id}: {line.amount}" for line in balance.escrow)
    return (
        f"{balance.player_id}: cash {balance.cash}, held {balance.held}, "
        f"at tables {sum(line.amount for line in balance.escrow)}"
        + (f" ({tables})" if tables else "")
        + f", total {balance.total}"
    )


def transactions_grid(transactions: Iterable[Any]) -> Table:
    """``ListTransactions`` as a grid: id, local time, kind, table@event, postings."""
    grid = Table(header_style="bold", show_edge=False)
    for column in ("#", "when", "kind", "table@event", "postings"):
        grid.add_column(column)
    for tx in transactions:
        kind = lpb.TransactionKind.Name(tx.kind).removeprefix("TRANSACTION_KIND_").lower()
        grid.add_row(
            str(tx.transaction_id),
            local_time(tx.occurred_at),
            kind,
            f"{tx.table_id}@{tx.position}" if tx.table_id else "",
            " ".join(f"{p.account} {p.amount:+d}" for p in tx.postings),
        )
    return grid


def rake_grid(rows: Iterable[Any]) -> Table:
    """The rake report's rows as a grid: day, table, game, hands, rake."""
    grid = Table(header_style="bold", show_edge=False)
    for column in ("day (UTC)", "table", "game", "hands", "rake"):
        grid.add_column(column)
    for row in rows:
        grid.add_row(row.day, row.table_id, row.game, str(row.hands), str(row.rake))
    return grid


def _spaced(cards: str) -> str:
    """``AsKd`` -> ``As Kd`` (the wire's card strings have no spaces)."""
    compact = cards.replace(" ", "")
    return " ".join(compact[i : i + 2] for i in range(0, len(compact), 2))
