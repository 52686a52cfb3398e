"""Provably fair decks: the commitment and the deterministic derivation of a hand's cards.

The procedure (version 1; ``docs/fairness.md`` tells it for people who check a hand):

1. The dealer draws a fresh 32-byte **server seed** per hand from the operating system
   (:mod:`secrets`, outside the engine) and publishes, in ``HandStarted`` before any card, the
   **commitment** ``SHA-256(frame(COMMITMENT_TAG, server_seed))``.
2. Each seated player may have given a **player seed** (1 to 64 bytes,
   ``DealerService.CommitSeed``) for the next hand he is dealt into; ``HandStarted.player_seeds``
   lists those used, in seat order.
3. The **hand key** is ``HMAC-SHA256(key=server_seed, msg=frame(HAND_KEY_TAG, hand_id, count,
   seat_1, seed_1, seat_2, seed_2, ...))`` (seats ascending, each seat as 2 bytes big-endian).
4. A **stream** of bytes for a label is ``HMAC-SHA256(hand_key, frame(label, i))`` for the
   block counter ``i = 0, 1, 2, ...`` (8 bytes big-endian), the blocks concatenated.
5. The **deck** is the game's deck in its canonical order (:data:`poker.engine.cards.DECK_52`
   or ``DECK_32``) shuffled by Fisher-Yates (Durstenfeld: for ``i`` from ``n - 1`` down to 1,
   swap card ``i`` with card ``j = uniform(i + 1)``) on the stream of label ``deck``, where
   ``uniform(m)`` reads the next 4 bytes as an unsigned big-endian number ``x``, rejects it when
   ``x >= 2**32 - 2**32 % m`` (no bias) and else is ``x % m``. The first card is the top card.
6. A draw game's **reshuffle** (RULES.md §7.3) orders the cards nobody holds as a second
   shuffle of the whole deck on the stream of label ``reshuffle/<street>/<seat>`` (the street
   of the draw and the seat about to be served), keeping only those cards.
7. At the hand's end ``DeckRevealed`` gives the server seed: anyone who may see the hand checks
   the commitment, derives the deck and compares every card dealt
   (:mod:`poker.engine.fairness_check`).

``frame(parts...)`` writes each part as its length (4 bytes big-endian) then its bytes, so no
two different lists of parts frame alike. Neither the room nor a player alone chooses the
order: the server seed is fixed before the hand's first card (the commitment) and each player's
seed enters a keyed hash the player cannot invert. Nothing before the reveal tells an unseen
card: the commitment is a hash of a 256-bit secret. Pure functions, no randomness of their own.

>>> from poker.engine.cards import DECK_52, format_cards
>>> seed = bytes(32)
>>> commitment(seed).hex()[:16]
'8c2f3e32e1429d57'
>>> deck = derive_deck(DECK_52, seed, ((3, b"lucky"),), "t1.1")
>>> sorted(deck) == sorted(DECK_52), deck == derive_deck(DECK_52, seed, ((3, b"lucky"),), "t1.1")
(True, True)
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence
from typing import Final, TypeVar

#: Domain tags: a hash made for one purpose can never be taken for another.
COMMITMENT_TAG: Final = b"poker.fair-deck.v1.commitment"
HAND_KEY_TAG: Final = b"poker.fair-deck.v1.hand-key"
DECK_LABEL: Final = b"deck"

#: The dealer's seed per hand: 256 bits.
SERVER_SEED_BYTES: Final = 32
#: A player's seed: 1 to 64 bytes (any content; a client sends 32 random bytes).
MAX_PLAYER_SEED_BYTES: Final = 64

_BLOCK_LIMIT: Final = 2**32

#: One player's seed for a hand: (seat number, seed).
PlayerSeed = tuple[int, bytes]

_T = TypeVar("_T")


def frame(*parts: bytes) -> bytes:
    """Each part as its length (4 bytes big-endian) then its bytes: an unambiguous joining."""
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def commitment(server_seed: bytes) -> bytes:
    """The public commitment to ``server_seed``: SHA-256 over the tag and the seed."""
    return hashlib.sha256(frame(COMMITMENT_TAG, server_seed)).digest()


def hand_key(server_seed: bytes, player_seeds: Sequence[PlayerSeed], hand_id: str) -> bytes:
    """The hand's key: HMAC-SHA256 keyed by the server seed over the hand id and the players'
    seeds in seat order (``player_seeds`` in any order; each seat at most once)."""
    ordered = sorted(player_seeds)
    parts = [HAND_KEY_TAG, hand_id.encode(), len(ordered).to_bytes(2, "big")]
    for seat, seed in ordered:
        parts += [seat.to_bytes(2, "big"), seed]
    return hmac.new(server_seed, frame(*parts), hashlib.sha256).digest()


def _stream(key: bytes, label: bytes) -> Iterator[int]:
    """Unsigned 32-bit numbers, big-endian, from the HMAC blocks of ``label``."""
    counter = 0
    while True:
        block = hmac.new(key, frame(label, counter.to_bytes(8, "big")), hashlib.sha256).digest()
        for offset in range(0, len(block), 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def _uniform(numbers: Iterator[int], bound: int) -> int:
    """A number in ``0 .. bound - 1`` without modulo bias (rejection sampling)."""
    limit = _BLOCK_LIMIT - _BLOCK_LIMIT % bound
    for number in numbers:
        if number < limit:
            return number % bound
    raise AssertionError("the stream is endless")  # pragma: no cover


def shuffle(items: Sequence[_T], key: bytes, label: bytes) -> tuple[_T, ...]:
    """``items`` in the Fisher-Yates order driven by the stream ``label`` of ``key``."""
    order = list(items)
    numbers = _stream(key, label)
    for index in range(len(order) - 1, 0, -1):
        other = _uniform(numbers, index + 1)
        order[index], order[other] = order[other], order[index]
    return tuple(order)


def reshuffle_label(street: int, seat: int) -> bytes:
    """The stream label of a draw game's reshuffle at ``street`` for the player in ``seat``."""
    return f"reshuffle/{street}/{seat}".encode()


def derive_deck(
    deck: Sequence[_T], server_seed: bytes, player_seeds: Sequence[PlayerSeed], hand_id: str
) -> tuple[_T, ...]:
    """The hand's deck, top card first: ``deck`` (the game's, canonical order) shuffled."""
    return shuffle(deck, hand_key(server_seed, player_seeds, hand_id), DECK_LABEL)


def derive_reshuffle(
    deck: Sequence[_T],
    server_seed: bytes,
    player_seeds: Sequence[PlayerSeed],
    hand_id: str,
    *,
    street: int,
    seat: int,
) -> tuple[_T, ...]:
    """The whole deck in the order a reshuffle at ``street`` for ``seat`` keeps its cards in."""
    key = hand_key(server_seed, player_seeds, hand_id)
    return shuffle(deck, key, reshuffle_label(street, seat))


def seed_problem(seed: bytes) -> str | None:
    """Why ``seed`` cannot be a player's seed, or None."""
    if not 1 <= len(seed) <= MAX_PLAYER_SEED_BYTES:
        return f"A seed holds 1 to {MAX_PLAYER_SEED_BYTES} bytes, not {len(seed)}."
    return None


__all__ = [
    "COMMITMENT_TAG",
    "DECK_LABEL",
    "HAND_KEY_TAG",
    "MAX_PLAYER_SEED_BYTES",
    "SERVER_SEED_BYTES",
    "PlayerSeed",
    "commitment",
    "derive_deck",
    "derive_reshuffle",
    "frame",
    "hand_key",
    "reshuffle_label",
    "seed_problem",
    "shuffle",
]
