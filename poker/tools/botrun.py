"""``pokerctl bots``: seat bot players, let them play a number of hands, and take them away.

The session follows the table by one WatchTable stream (no GetTable polling): a bot acts when
an ``ActionRequested`` names its seat (reading its own view then, for its legal actions and its
cards), and the session counts the hands the bots are dealt into.

Getting every bot dealt into the first hand: the bots sit down all at once. At a table where
nobody else can play, the table's gathering delay holds the first hand back (``gathering_ms``,
by default the pause between hands: when a command gives an idle table its second player who can
play, the next hand waits that long), and a new game deals in every eligible player (RULES.md
§6.2), so every bot whose sit-down lands within the delay is dealt into the first hand. Each bot
sits down posting a big blind (``post_big_blind``): where a game already runs, that is how he
enters at once (where the rules allow it) instead of waiting for the big blind (decision A41);
in a new game nobody posts beyond the blinds, so it costs nothing.

Leaving: when the last hand the bots should play starts (or on :meth:`BotSession.leave`, i.e.
Ctrl-C), every bot stands up: one dealt into the hand is cashed out when it ends (he plays it
out), the others at once. The session ends once every bot is cashed out, so none is left
seated to time out and pay blinds, and the next session on the table starts clean.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import grpc

from poker.servicekit.tokens import Role, TokenKeys
from poker.tools.bot import play_turn
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

#: How long the session waits for the table's next event before it gives up on more hands
#: (e.g. every other player left): the pause between hands (or the gathering delay) plus this.
IDLE_GRACE_S = 20.0

#: Called with every event of the table and with progress: (event, hands done, hands wanted).
EventSink = Callable[[pb.TableEvent, int, int], None]
#: Called with a sentence about a bot command that failed (the table's timer may act first).
ProblemSink = Callable[[str], None]


@dataclass
class Bot:
    """One bot: its name, seat and client (a player token for that name)."""

    name: str
    seat: int
    client: Client
    seated: bool = False


@dataclass
class SessionResult:
    """What a session did: the hands the bots played, each bot's buy-in and cash-out."""

    table_id: str
    hands: int = 0
    last_hand_id: str = ""
    bought_in: dict[str, int] = field(default_factory=dict)
    cashed_out: dict[str, int] = field(default_factory=dict)
    left_seated: list[str] = field(default_factory=list)


class BotSession:
    """Bots at one table for ``hands`` hands (see the module doc)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        keys: TokenKeys,
        table_id: str,
        *,
        hands: int,
        think_ms: int,
        on_event: EventSink,
        on_problem: ProblemSink,
        rng: random.Random | None = None,
    ) -> None:
        self._channel = channel
        self._keys = keys
        self.table_id = table_id
        self.hands_wanted = hands
        self._think_s = think_ms / 1000
        self._on_event = on_event
        self._on_problem = on_problem
        self._rng = rng or secrets.SystemRandom()
        self._operator = Client(channel, keys, "operator", Role.OPERATOR)
        self.bots: dict[int, Bot] = {}
        self.result = SessionResult(table_id)
        self._leaving = False
        #: The stand-up in flight after an interrupt (kept so the task is not collected).
        self.leaving: asyncio.Future[None] | None = None
        self._turns: set[asyncio.Task[None]] = set()
        self._hand_has_bots = False

    def new_bots(self, view: dpb.TableView, count: int) -> list[Bot]:
        """Name ``count`` bots for the free seats of ``view`` (fewer if fewer are free)."""
        taken = {seat.seat for seat in view.seats}
        free = [n for n in range(1, view.config.seat_count + 1) if n not in taken][:count]
        for number in free:
            name = f"bot-{secrets.token_hex(2)}"
            client = Client(self._channel, self._keys, name, Role.PLAYER)
            self.bots[number] = Bot(name, number, client)
        return list(self.bots.values())

    async def run(self, view: dpb.TableView, buy_in: int) -> SessionResult:
        """Seat the bots (named by :meth:`new_bots`), play, stand them up; the result."""
        stream = self._operator.stub.WatchTable(
            dpb.WatchTableRequest(table_id=self.table_id, from_seq=view.version),
            metadata=self._operator.metadata,
        )
        try:
            await self._seat_all(buy_in)
            if self.hands_wanted <= 0:
                await self.leave()
            await self._follow(stream, _longest_wait_ms(view.config) / 1000 + IDLE_GRACE_S)
        finally:
            stream.cancel()
            for task in self._turns:
                task.cancel()
            self.result.left_seated = [bot.name for bot in self.bots.values() if bot.seated]
        return self.result

    async def leave(self) -> None:
        """Stand every seated bot up (once): now, or when the hand he is dealt into ends."""
        if self._leaving:
            return
        self._leaving = True
        await asyncio.gather(
            *(
                self._command(bot, "StandUp", _stand_up(self.table_id, bot.seat))
                for bot in self.bots.values()
                if bot.seated
            )
        )

    async def _seat_all(self, buy_in: int) -> None:
        """Every bot sits down at once (see the module doc: the gathering delay deals them all
        into a new game's first hand)."""
        await asyncio.gather(*(self._sit_down(bot, buy_in) for bot in self.bots.values()))

    async def _sit_down(self, bot: Bot, buy_in: int) -> None:
        request = dpb.SitDownRequest(
            command_id=_cid(),
            table_id=self.table_id,
            seat=bot.seat,
            buy_in=buy_in,
            post_big_blind=True,
        )
        if await self._command(bot, "SitDown", request):
            bot.seated = True
            self.result.bought_in[bot.name] = buy_in

    async def _command(self, bot: Bot, method: str, request: object) -> bool:
        """One seat command of ``bot``; a refusal is reported, not raised (the table moves on)."""
        try:
            await bot.client.call(method, request)
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAUTHENTICATED):
                raise
            self._on_problem(f"{bot.name}: {method} refused: {error.details()}")
            return False
        return True

    async def _follow(self, stream: grpc.aio.UnaryStreamCall, idle_s: float) -> None:  # type: ignore[type-arg]
        """Read the table's events until every bot has left (or the table went quiet)."""
        iterator = stream.__aiter__()
        while any(bot.seated for bot in self.bots.values()):
            try:
                response = await asyncio.wait_for(iterator.__anext__(), idle_s)
            except (TimeoutError, StopAsyncIteration):
                self._on_problem("the table went quiet: the bots leave")
                await self.leave()
                await self._forget_cashed_out()
                return
            event = response.event
            await self._on_table_event(event)
            self._on_event(event, self.result.hands, self.hands_wanted)

    async def _on_table_event(self, event: pb.TableEvent) -> None:
        body = event.WhichOneof("body")
        if body == "hand_started":
            dealt = {seat.seat for seat in event.hand_started.seats}
            self._hand_has_bots = any(number in dealt for number in self.bots)
            if self._hand_has_bots:
                self.result.last_hand_id = event.hand_id
                if self.result.hands + 1 >= self.hands_wanted:
                    await self.leave()
        elif body in ("hand_ended", "hand_voided") and self._hand_has_bots:
            self.result.hands += 1
            self._hand_has_bots = False
        elif body == "action_requested" and event.action_requested.seat in self.bots:
            bot = self.bots[event.action_requested.seat]
            task = asyncio.create_task(self._turn(bot, event.hand_id))
            self._turns.add(task)
            task.add_done_callback(self._turns.discard)
        elif body == "player_cashed_out" and event.player_cashed_out.seat in self.bots:
            bot = self.bots[event.player_cashed_out.seat]
            if bot.name == event.player_cashed_out.player_id:
                bot.seated = False
                self.result.cashed_out[bot.name] = event.player_cashed_out.amount
        elif body == "table_closed":
            for bot in self.bots.values():
                bot.seated = False

    async def _turn(self, bot: Bot, hand_id: str) -> None:
        """The bot's turn: think, read its own view, act (the timer may have acted first)."""
        await asyncio.sleep(self._think_s)
        try:
            view = await bot.client.table(self.table_id)
            if view.hand.hand_id == hand_id and view.hand.seat_to_act == bot.seat:
                await play_turn(bot.client, view, self._rng)
        except grpc.aio.AioRpcError as error:
            self._on_problem(f"{bot.name}: {error.details()}")

    async def _forget_cashed_out(self) -> None:
        """After a quiet table: which bots are still seated, from the table itself."""
        view = await self._operator.table(self.table_id)
        present = {seat.player_id for seat in view.seats}
        for bot in self.bots.values():
            bot.seated = bot.name in present


def _longest_wait_ms(config: pb.TableConfig) -> int:
    """The longest a table waits between hands on its own: the pause or the gathering delay."""
    gathering = config.gathering_ms if config.HasField("gathering_ms") else 0
    return max(config.pause_between_hands_ms, gathering)


def _stand_up(table_id: str, seat: int) -> dpb.StandUpRequest:
    return dpb.StandUpRequest(command_id=_cid(), table_id=table_id, seat=seat)


def _cid() -> str:
    return uuid.uuid4().hex


async def fund_bots(
    bots: list[Bot], amount: int, deposit: Callable[[str, int], Awaitable[None]]
) -> None:
    """Give each bot its buy-in (``deposit(player, amount)``), all at once."""
    await asyncio.gather(*(deposit(bot.name, amount) for bot in bots))
