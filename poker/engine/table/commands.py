"""Commands to a table: plain frozen values built by the dealer service.

Every command carries ``now`` (unix ms). Money commands carry the wallet's hold id: the buy-in
or top-up arrives already reserved by the wallet, and the event records the hold so that the
wallet can post it into the table's escrow (ARCHITECTURE.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass

from poker.engine.cards import Card
from poker.engine.hand.commands import Action
from poker.engine.table.config import TableConfig


@dataclass(frozen=True, slots=True)
class CreateTable:
    """Open a table with ``config``. ``server_seed``: the secret server seed of its first hand
    (provably fair decks), committed to now, before any player can give a seed."""

    config: TableConfig
    now: int
    server_seed: bytes = b""


@dataclass(frozen=True, slots=True)
class SitDown:
    """Take seat ``seat`` with a buy-in of ``amount`` held by the wallet under ``hold_id``.

    ``post_big_blind``: in a running game, enter at once by posting a big blind (where the
    rules allow it) instead of waiting for the big blind (RULES.md §6.2).
    """

    seat: int
    player_id: str
    amount: int
    hold_id: str
    now: int
    post_big_blind: bool = False


@dataclass(frozen=True, slots=True)
class TopUp:
    """Add ``amount`` (held by the wallet under ``hold_id``) to the stack between hands."""

    seat: int
    player_id: str
    amount: int
    hold_id: str
    now: int


@dataclass(frozen=True, slots=True)
class StandUp:
    """Leave the table: cashed out at once, or when the hand he is dealt into ends."""

    seat: int
    player_id: str
    now: int


@dataclass(frozen=True, slots=True)
class SitOut:
    """Stop being dealt in (from the next hand on); the seat is kept."""

    seat: int
    player_id: str
    now: int


@dataclass(frozen=True, slots=True)
class SitIn:
    """Be dealt in again. ``post_blinds``: post what he owes at once (where allowed) instead of
    waiting for the big blind (RULES.md §6.3)."""

    seat: int
    player_id: str
    now: int
    post_blinds: bool = False


@dataclass(frozen=True, slots=True)
class StartNextHand:
    """Deal the next hand with the shuffled ``deck``; the table decides the rest.

    Provably fair decks (:mod:`poker.engine.fairness`): the hand is dealt from the server seed
    committed before it (at the table's creation or the previous hand's start), else from
    ``server_seed`` (a table without one: committed at this hand's start only); the deck is
    derived from it, the seeds of the players dealt in and the hand id (``deck`` must be empty),
    HandStarted restates its commitment and the hand's end reveals it. ``next_server_seed``: a
    fresh secret seed for the next hand, committed to in this HandStarted.
    """

    hand_id: str
    deck: tuple[Card, ...]
    now: int
    server_seed: bytes = b""
    next_server_seed: bytes = b""


@dataclass(frozen=True, slots=True)
class CommitSeed:
    """The player in ``seat`` gives his seed for the next hand he is dealt into (1 to 64
    bytes, :mod:`poker.engine.fairness`); it replaces one he gave before."""

    seat: int
    player_id: str
    seed: bytes
    now: int = 0


@dataclass(frozen=True, slots=True)
class Act:
    """The player in ``seat`` acts in the running hand (see :class:`poker.engine.hand.Action`)."""

    seat: int
    player_id: str
    action: Action
    amount: int = 0
    now: int = 0


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw games: the player in ``seat`` throws away ``discard`` (none: he stands pat); see
    :class:`poker.engine.hand.Draw` for ``shuffle``, the dealer's shuffled deck for a reshuffle."""

    seat: int
    player_id: str
    discard: tuple[Card, ...] = ()
    now: int = 0
    shuffle: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class AgreeSplit:
    """32-Card Draw: the player in ``seat`` answers the split offer (see
    :class:`poker.engine.hand.AgreeSplit`)."""

    seat: int
    player_id: str
    agree: bool
    now: int = 0


@dataclass(frozen=True, slots=True)
class TimeOut:
    """The player to act let his time run out. ``disconnected``: the service lost his
    connection (the trigger of the disconnection protection, RULES.md §6.5)."""

    seat: int
    now: int
    disconnected: bool = False


@dataclass(frozen=True, slots=True)
class VoidHand:
    """Cancel the unfinished hand and refund every contribution (RULES.md §6.6, A37)."""

    now: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class CloseTable:
    """Void any unfinished hand, cash everyone out and close the table (A37)."""

    now: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RecordTakeover:
    """A dealer took the open table over (``owner``'s claim in its heartbeat epoch ``epoch``):
    recorded before it serves the table, so that an append the previous owner decided before
    the takeover finds its expected position taken. Changes nothing at the table."""

    owner: str
    epoch: int
    now: int


Command = (
    CreateTable
    | SitDown
    | TopUp
    | StandUp
    | SitOut
    | SitIn
    | StartNextHand
    | Act
    | Draw
    | AgreeSplit
    | TimeOut
    | VoidHand
    | CloseTable
    | CommitSeed
    | RecordTakeover
)
