"""The table log's secrets, encrypted to the dealers' deck key.

A table's log holds every secret of every hand: the shuffled deck, the server seeds (this
hand's and the next one's), every player's down cards, the draws and the stub. The wallet moves
money from the same log and needs none of it, so the dealer writes each batch with those fields
*cleared* in its events and their values in one field of the batch,
``TableEventBatch.sealed_secrets``: a :class:`poker.v1.events_pb2.BatchSecrets` encrypted with
AES-256-GCM to the *deck key*, which only dealers (and the operator, for audits) hold. Readers
holding the key put the values back before folding (:meth:`DeckKeys.open_batch`); readers
without it fold the events as stored (:func:`strip_batch` makes a log written before this
uniform: the secrets it holds in clear are dropped too).

**What is secret** (:data:`SECRET_FIELDS`): ``HandStarted.deck``, ``.server_seed``,
``.next_server_seed``; ``TableCreated.next_server_seed``; ``DeckRevealed.server_seed`` (it tells
every card, the mucked ones too: shown in a hand's history only); ``HoleCardsDealt.hands[].down``
(stud upcards are public); ``CardsDrawn.discarded`` and ``.drawn`` (how many is public);
``DiscardsReshuffled.stub``. Shown hands (``HandShown``) and the board are public.

**The framing** (version 1)::

    sealed = 0x01 || len(key_id) (1 byte) || key_id (ASCII) || nonce (12 bytes) || ciphertext+tag
    aad    = "poker.v1.batch-secrets\\0" || sealed[:header] || lp(table_id) || lp(command_id)
             || first event's version (8 bytes, big-endian)

(``lp``: 4-byte big-endian length, then the bytes.) A fresh random nonce per batch; the
associated data binds the secrets to their table, their command and their place in the log, so
secrets moved to another batch, edited or sealed with an unknown key fail to open
(:class:`SecretsRefused`: the record is refused like a bad seal). The batch's seal and the hash
chain cover the stored bytes, ``sealed_secrets`` included: nothing about them changes.

A table snapshot is encrypted whole the same way (:meth:`DeckKeys.seal_snapshot`:
``"PKDS" || 0x01 || len(key_id) || key_id || nonce || ciphertext+tag``, the associated data
its tag and header: the snapshot store's seal binds it to its table and position); a reader
without the key cannot decode it and replays the log instead.

>>> keys = DeckKeys.generate("k1")
>>> event = pb.TableEvent(version=3, hand_started=pb.HandStarted(deck="AsKd", server_seed=b"s"))
>>> batch = pb.TableEventBatch(command_id="c1", events=[event])
>>> keys.seal_batch("t1", batch)
>>> batch.events[0].hand_started.deck, len(batch.sealed_secrets) > 0
('', True)
>>> keys.open_batch("t1", batch).events[0].hand_started.deck
'AsKd'
"""

from __future__ import annotations

import base64
import enum
import json
import os
import secrets
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from google.protobuf.message import DecodeError

from poker.v1 import events_pb2 as pb

VERSION: Final = 1
KEY_BYTES: Final = 32
NONCE_BYTES: Final = 12
_BATCH_TAG: Final = b"poker.v1.batch-secrets\x00"
_SNAPSHOT_TAG: Final = b"poker.v1.snapshot-secrets\x00"
#: The first bytes of an encrypted table snapshot (a clear one starts with its fingerprint).
SNAPSHOT_MAGIC: Final = b"PKDS"
_MAX_ID: Final = 64


def _hand_started(event: pb.HandStarted) -> list[bytes]:
    return [event.deck.encode(), event.server_seed, event.next_server_seed]


def _put_hand_started(event: pb.HandStarted, values: list[bytes]) -> None:
    event.deck = values[0].decode("ascii")
    event.server_seed = values[1]
    event.next_server_seed = values[2]


def _clear_hand_started(event: pb.HandStarted) -> None:
    event.ClearField("deck")
    event.ClearField("server_seed")
    event.ClearField("next_server_seed")


def _hole_cards(event: pb.HoleCardsDealt) -> list[bytes]:
    return [hand.down.encode() for hand in event.hands]


def _put_hole_cards(event: pb.HoleCardsDealt, values: list[bytes]) -> None:
    for hand, value in zip(event.hands, values, strict=True):
        hand.down = value.decode("ascii")


def _clear_hole_cards(event: pb.HoleCardsDealt) -> None:
    for hand in event.hands:
        hand.ClearField("down")


@dataclass(frozen=True, slots=True)
class _Kind:
    """How one kind of event keeps its secrets: read them, put them back, clear them, and how
    many values it has (None: one per hand dealt)."""

    read: Callable[[Any], list[bytes]]
    put: Callable[[Any, list[bytes]], None]
    clear: Callable[[Any], None]
    count: Callable[[Any], int]


def _scalars(*names: str) -> _Kind:
    """A kind whose secrets are the string or bytes fields ``names``, in that order."""

    def read(body: Any) -> list[bytes]:
        values = [getattr(body, name) for name in names]
        return [value.encode() if isinstance(value, str) else value for value in values]

    def put(body: Any, values: list[bytes]) -> None:
        for name, value in zip(names, values, strict=True):
            kept = getattr(body, name)
            setattr(body, name, value.decode("ascii") if isinstance(kept, str) else value)

    def clear(body: Any) -> None:
        for name in names:
            body.ClearField(name)

    return _Kind(read, put, clear, lambda body: len(names))


_KINDS: Final[Mapping[str, _Kind]] = {
    "hand_started": _Kind(_hand_started, _put_hand_started, _clear_hand_started, lambda body: 3),
    "hole_cards_dealt": _Kind(
        _hole_cards, _put_hole_cards, _clear_hole_cards, lambda body: len(body.hands)
    ),
    "table_created": _scalars("next_server_seed"),
    "deck_revealed": _scalars("server_seed"),
    "cards_drawn": _scalars("discarded", "drawn"),
    "discards_reshuffled": _scalars("stub"),
}

#: The events that keep secrets, by the name of their body (what each keeps: the module
#: docstring).
SECRET_FIELDS: Final = frozenset(_KINDS)


class SecretsRefusal(enum.StrEnum):
    """Why a batch's (or a snapshot's) secrets were refused (a low-cardinality metric label)."""

    UNKNOWN_DECK_KEY = "unknown_deck_key"  # encrypted to a key id this reader does not hold
    BAD_SECRETS = "bad_secrets"  # malformed, tampered or moved: they do not open here


class SecretsRefused(Exception):
    """A batch's sealed secrets that do not open: edited, moved from another batch, or encrypted
    to a key this reader does not hold. The record is refused like a bad seal."""

    def __init__(self, reason: SecretsRefusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class DeckKeyError(ValueError):
    """The deck key file is missing, unreadable or invalid; the message says what to fix."""


def _length_prefixed(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def batch_associated_data(header: bytes, table_id: str, batch: pb.TableEventBatch) -> bytes:
    """What a batch's secrets are bound to: the framing ``header``, the table, the command and
    the batch's first version."""
    first = batch.events[0].version if batch.events else 0
    return b"".join(
        (
            _BATCH_TAG,
            header,
            _length_prefixed(table_id.encode()),
            _length_prefixed(batch.command_id.encode()),
            first.to_bytes(8, "big", signed=True),
        )
    )


def _header(key_id: str) -> bytes:
    encoded = key_id.encode("ascii")
    return bytes((VERSION, len(encoded))) + encoded


def _split(sealed: bytes) -> tuple[bytes, str, bytes, bytes]:
    """(header, key id, nonce, ciphertext) of a version-1 framing; SecretsRefused else."""
    if len(sealed) < 2 or sealed[0] != VERSION:
        raise SecretsRefused(SecretsRefusal.BAD_SECRETS, "the sealed secrets' framing is unknown")
    end = 2 + sealed[1]
    if len(sealed) < end + NONCE_BYTES + 16:
        raise SecretsRefused(SecretsRefusal.BAD_SECRETS, "the sealed secrets are truncated")
    try:
        key_id = sealed[2:end].decode("ascii")
    except UnicodeDecodeError:
        raise SecretsRefused(SecretsRefusal.BAD_SECRETS, "the key id is not ASCII") from None
    return sealed[:end], key_id, sealed[end : end + NONCE_BYTES], sealed[end + NONCE_BYTES :]


def take_secrets(batch: pb.TableEventBatch) -> pb.BatchSecrets:
    """The secret values of ``batch``'s events, cleared in them (in place)."""
    taken = pb.BatchSecrets()
    for index, event in enumerate(batch.events):
        name = event.WhichOneof("body")
        kind = _KINDS.get(name) if name is not None else None
        if kind is None:
            continue
        body = getattr(event, name)  # type: ignore[arg-type]
        values = kind.read(body)
        if any(values):
            taken.events.add(index=index, values=values)
            kind.clear(body)
    return taken


def strip_batch(batch: pb.TableEventBatch) -> pb.TableEventBatch:
    """``batch`` (in place) without any secret: what a reader without the deck key folds, the
    same for a batch written before the secrets were sealed (they are in its events, in clear)
    and after (cleared already)."""
    if not batch.sealed_secrets:
        take_secrets(batch)
    return batch


def has_secrets(batch: pb.TableEventBatch) -> bool:
    """Whether any event of ``batch`` holds a secret value in clear."""
    return bool(take_secrets(_copy(batch)).events)


def _copy(batch: pb.TableEventBatch) -> pb.TableEventBatch:
    copy = pb.TableEventBatch()
    copy.CopyFrom(batch)
    return copy


def put_secrets(batch: pb.TableEventBatch, secrets_: pb.BatchSecrets) -> None:
    """Put ``secrets_`` back into ``batch``'s events (in place); SecretsRefused when they do not
    fit its events (an index out of range, another kind of event, another count of values)."""
    events = batch.events
    for entry in secrets_.events:
        if not 0 <= entry.index < len(events):
            raise SecretsRefused(SecretsRefusal.BAD_SECRETS, "the secrets name no event")
        event = events[entry.index]
        name = event.WhichOneof("body")
        kind = _KINDS.get(name) if name is not None else None
        if kind is None:
            raise SecretsRefused(SecretsRefusal.BAD_SECRETS, f"a {name} event keeps no secret")
        body = getattr(event, name)  # type: ignore[arg-type]
        values = list(entry.values)
        if len(values) != kind.count(body):
            raise SecretsRefused(SecretsRefusal.BAD_SECRETS, f"the {name} secrets do not fit")
        try:
            kind.put(body, values)
        except (UnicodeDecodeError, ValueError) as error:
            raise SecretsRefused(SecretsRefusal.BAD_SECRETS, f"bad {name} secrets") from error


class DeckKeys:
    """The dealers' deck keys: ``current`` encrypts, every key of the ring decrypts (a key
    rotation adds the new one first, then retires the old one once nothing needs it)."""

    def __init__(self, keys: Mapping[str, bytes], current: str) -> None:
        if current not in keys:
            raise DeckKeyError(f"the deck key to encrypt with, {current!r}, is not in the ring")
        for key_id, secret in keys.items():
            if not key_id or len(key_id) > _MAX_ID or not key_id.isascii():
                raise DeckKeyError(f"deck key id {key_id!r} must be 1 to {_MAX_ID} ASCII chars")
            if len(secret) != KEY_BYTES:
                raise DeckKeyError(f"deck key {key_id!r} must be {KEY_BYTES} bytes")
        self._ciphers = {key_id: AESGCM(secret) for key_id, secret in keys.items()}
        self._secrets = dict(keys)
        self.current = current
        self._header = _header(current)

    @classmethod
    def generate(cls, key_id: str | None = None) -> DeckKeys:
        """A fresh ring of one random key."""
        name = key_id or f"deck-{secrets.token_hex(3)}"
        return cls({name: AESGCM.generate_key(bit_length=256)}, name)

    # --- batches ---------------------------------------------------------------------------

    def seal_batch(self, table_id: str, batch: pb.TableEventBatch, *, nonce: bytes = b"") -> None:
        """Move ``batch``'s secrets (in place) into its ``sealed_secrets``, encrypted to the
        current key (nothing when it has none). ``nonce``: tests' known-answer vectors only."""
        taken = take_secrets(batch)
        if not taken.events:
            return
        nonce = nonce or os.urandom(NONCE_BYTES)
        aad = batch_associated_data(self._header, table_id, batch)
        ciphertext = self._ciphers[self.current].encrypt(nonce, taken.SerializeToString(), aad)
        batch.sealed_secrets = self._header + nonce + ciphertext

    def open_batch(self, table_id: str, batch: pb.TableEventBatch) -> pb.TableEventBatch:
        """``batch`` (in place) with its secrets back in its events; SecretsRefused if they do
        not open. A batch without sealed secrets is returned as it is (a log written before:
        its secrets are in its events)."""
        sealed = batch.sealed_secrets
        if not sealed:
            return batch
        header, key_id, nonce, ciphertext = _split(sealed)
        cipher = self._cipher(key_id)
        try:
            plain = cipher.decrypt(
                nonce, ciphertext, batch_associated_data(header, table_id, batch)
            )
            opened = pb.BatchSecrets.FromString(plain)
        except (InvalidTag, DecodeError):
            raise SecretsRefused(
                SecretsRefusal.BAD_SECRETS,
                "the sealed secrets do not open for this table, command and place in its log",
            ) from None
        put_secrets(batch, opened)
        batch.ClearField("sealed_secrets")
        return batch

    # --- snapshots -------------------------------------------------------------------------

    def seal_snapshot(self, data: bytes) -> bytes:
        """``data`` (a table snapshot) encrypted to the current key (its seal, by the snapshot
        store, binds it to its table and position)."""
        header = SNAPSHOT_MAGIC + self._header
        nonce = os.urandom(NONCE_BYTES)
        return (
            header
            + nonce
            + self._ciphers[self.current].encrypt(nonce, data, _SNAPSHOT_TAG + header)
        )

    def open_snapshot(self, data: bytes) -> bytes:
        """The snapshot :meth:`seal_snapshot` encrypted; SecretsRefused if it does not open."""
        if not data.startswith(SNAPSHOT_MAGIC):
            raise SecretsRefused(SecretsRefusal.BAD_SECRETS, "the snapshot is not encrypted")
        header, key_id, nonce, ciphertext = _split(data[len(SNAPSHOT_MAGIC) :])
        aad = _SNAPSHOT_TAG + SNAPSHOT_MAGIC + header
        try:
            return self._cipher(key_id).decrypt(nonce, ciphertext, aad)
        except InvalidTag:
            raise SecretsRefused(SecretsRefusal.BAD_SECRETS, "the snapshot does not open") from None

    def _cipher(self, key_id: str) -> AESGCM:
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise SecretsRefused(
                SecretsRefusal.UNKNOWN_DECK_KEY,
                f"the secrets are encrypted to deck key {key_id!r}, which this reader lacks",
            )
        return cipher

    # --- files -----------------------------------------------------------------------------

    def document(self) -> dict[str, object]:
        """The JSON document of this ring (what :func:`load_deck_keys` reads back)."""
        return {
            "encrypt_with": self.current,
            "keys": [
                {"id": key_id, "secret": base64.b64encode(secret).decode()}
                for key_id, secret in self._secrets.items()
            ],
        }


def parse_deck_keys(text: str, source: str = "the deck key file") -> DeckKeys:
    """The ring in JSON ``text``: ``{"encrypt_with": ID, "keys": [{"id": ID, "secret":
    BASE64}, ...]}``; DeckKeyError naming ``source`` for anything else."""
    try:
        document = json.loads(text)
        keys = {
            str(entry["id"]): base64.b64decode(entry["secret"], validate=True)
            for entry in document["keys"]
        }
        current = str(document["encrypt_with"])
    except (ValueError, KeyError, TypeError) as error:
        raise DeckKeyError(
            f"{source} is not a deck key ring ({error!r}); make one with "
            "`python -m poker.tablelog.secrets new PATH`"
        ) from None
    try:
        return DeckKeys(keys, current)
    except DeckKeyError as error:
        raise DeckKeyError(f"{source}: {error}") from None


def load_deck_keys(path: str | os.PathLike[str]) -> DeckKeys:
    """The ring in the JSON file at ``path``; DeckKeyError if it is not valid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise DeckKeyError(f"the deck key file {path} cannot be read ({error.strerror})") from None
    return parse_deck_keys(text, f"the deck key file {path}")


def write_deck_keys(keys: DeckKeys, path: str | os.PathLike[str]) -> Path:
    """Write ``keys`` to ``path`` readable by its owner only (mode 0600); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(keys.document(), handle, indent=2)
        handle.write("\n")
    target.chmod(0o600)
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m poker.tablelog.secrets new PATH``: write a fresh deck key ring (0600)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "new":
        print("usage: python -m poker.tablelog.secrets new PATH", file=sys.stderr)
        return 2
    if Path(args[1]).exists():
        print(f"{args[1]} exists: not overwritten", file=sys.stderr)
        return 1
    print(write_deck_keys(DeckKeys.generate(), args[1]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    "SECRET_FIELDS",
    "SNAPSHOT_MAGIC",
    "DeckKeyError",
    "DeckKeys",
    "SecretsRefusal",
    "SecretsRefused",
    "batch_associated_data",
    "has_secrets",
    "load_deck_keys",
    "parse_deck_keys",
    "put_secrets",
    "strip_batch",
    "take_secrets",
    "write_deck_keys",
]
