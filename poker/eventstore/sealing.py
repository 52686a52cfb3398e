"""Writer keys and the MACs (HMAC-SHA256) that seal log records and snapshots.

Anyone who can publish to a subject of the table stream could append a record with the right
expected sequence; anyone who can write a KV bucket could replace a snapshot. A *seal* says that
a trusted writer (a dealer, or the wallet closing an abandoned table) wrote exactly these bytes at
exactly this place, so a reader settles money, or rebuilds a table, only from what such a writer
wrote. This module is pure: keys, messages, MACs; no NATS, no protobuf.

**What a batch seal binds.** A domain tag (a batch MAC can never pass for a snapshot MAC, or for
a MAC of any other protocol using the key), the key id, the log key (the table id: a batch copied
to another table fails), the *expected previous position* of that log (the position the writer
appended after: a valid batch re-appended later, or elsewhere, has another previous record and
fails), the msg id (the command id), and the exact record bytes. Every variable-length part is
length-prefixed, so no two different tuples frame to the same message.

**Where the seal travels: a header, not a field.** A batch's seal is the NATS header
:data:`SEAL_HEADER` of its message (``Record.headers`` in the event-store contract), computed over
the payload bytes exactly as stored. A field inside the ``TableEventBatch`` would have to be
MAC'd over "the message without that field", i.e. over a re-serialization, and protobuf
serialization is not canonical (field order, unknown fields, packed or not): a verifier could
disagree with the writer about the bytes. A header leaves the payload untouched (every existing
reader and every stored log still parse) and the MAC covers the bytes the reader decodes.

**Snapshots** are sealed inside their value (KV entries carry no headers): the sealed form is
``format byte, key id length, key id, MAC, payload``, and the MAC binds the bucket, the key and
the snapshot's position, so a snapshot moved to another table, another bucket or another position
fails. :class:`SealedSnapshotStore` seals on save and checks on load, *before* the payload is
handed to any decoder (the unpicklers): a snapshot that fails is reported as
:class:`~poker.eventstore.snapshots.CorruptSnapshot` and the caller replays the log instead.

**The wallet's journal** is sealed with the same batch seal under a key of a third writer,
:attr:`Writer.LEDGER`, which only the wallet's keyring holds (the dealer's is the same without
it: :meth:`Keyring.without`); the log key is the journal's. :func:`open_batch` takes the writers
a log accepts: the table log's (:data:`TABLE_LOG_WRITERS`) never include the ledger, the
journal's are the ledger alone (see poker/wallet/journal.py, docs/security/journal.md).

**Rotation.** A keyring holds any number of keys, each with an id and a writer; verification
looks a record's key up by the id in its seal, so records sealed with an old key still verify
while ``sign_with`` names the new one. Retire a key only once nothing sealed with it is read any
more (see docs/security/table-log.md).

>>> ring = new_keyring()
>>> seal = seal_batch(ring.signer(Writer.DEALER), "t1", 0, "cmd-1", b"batch")
>>> open_batch(ring, seal, log_key="t1", position=5, previous_position=0, msg_id="cmd-1",
...            data=b"batch")
<Writer.DEALER: 'dealer'>
>>> open_batch(ring, seal, log_key="t2", position=5, previous_position=0, msg_id="cmd-1",
...            data=b"batch")
Traceback (most recent call last):
...
poker.eventstore.sealing.SealRefused: the seal of the record at position 5 of 't2' ...
"""

from __future__ import annotations

import base64
import binascii
import enum
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from poker.eventstore.snapshots import CorruptSnapshot, Snapshot, SnapshotStore

#: The message header that carries a record's seal.
SEAL_HEADER: Final = "Poker-Seal"
#: Keys shorter than this are refused: HMAC-SHA256 wants at least its output size.
MIN_SECRET_BYTES: Final = 32

_DOMAIN_BATCH: Final = b"poker/log-record/v1"
_DOMAIN_SNAPSHOT: Final = b"poker/snapshot/v1"
_KEY_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAC_BYTES: Final = 32
_SNAPSHOT_FORMAT: Final = 1
_U64: Final = struct.Struct(">Q")
_MAX_POSITION: Final = 2**64 - 1


class Writer(enum.StrEnum):
    """Who may write sealed records: each key belongs to one writer."""

    DEALER = "dealer"
    WALLET = "wallet"
    #: The wallet's journal (:mod:`poker.wallet.journal`): held by the wallet alone, never by a
    #: dealer; seals journal records only (never a table-log batch or a snapshot).
    LEDGER = "ledger"


#: The writers whose keys may seal a table-log batch (the table log's own rule on top:
#: :mod:`poker.tablelog.seals`); a ledger key is refused there.
TABLE_LOG_WRITERS: Final = frozenset({Writer.DEALER, Writer.WALLET})


class Refusal(enum.StrEnum):
    """Why a seal was refused (a low-cardinality metric label)."""

    MISSING = "missing"  # no seal at all
    MALFORMED = "malformed"  # a seal that does not parse
    UNKNOWN_KEY = "unknown_key"  # sealed with a key id not in the keyring
    BAD_MAC = "bad_mac"  # the MAC does not match the bytes, the log or the msg id
    MISPLACED = "misplaced"  # a valid seal for another place: a copied or replayed record
    WRONG_WRITER = "wrong_writer"  # a key of a writer not allowed to write this
    # The wallet's close of a table the log shows was not abandoned (poker.tablelog.seals).
    PREMATURE_CLOSE = "premature_close"


class KeyringError(ValueError):
    """The keyring file is missing, unreadable or invalid; the message says what to fix."""


class SealRefused(Exception):
    """A record or snapshot whose seal does not verify; never act on its bytes."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class HmacSha256:
    """HMAC-SHA256 (RFC 2104) under one key, its padded key states hashed once.

    :func:`hmac.digest` sets OpenSSL's HMAC up afresh on every call: 1.37 µs for a 330-byte
    record on the development machine, against 0.60 µs here (two copies of the states hashed
    once, two updates), and a replay checks one MAC per record. Equal to :func:`hmac.digest`
    for every key and message (a property test checks it).

    >>> HmacSha256(b"key").digest(b"message") == hmac.digest(b"key", b"message", "sha256")
    True
    """

    __slots__ = ("_inner", "_outer")

    def __init__(self, secret: bytes) -> None:
        if len(secret) > _SHA256_BLOCK:  # RFC 2104: a key longer than a block is hashed first
            secret = hashlib.sha256(secret).digest()
        padded = secret.ljust(_SHA256_BLOCK, b"\0")
        self._inner = hashlib.sha256(padded.translate(_INNER_PAD))
        self._outer = hashlib.sha256(padded.translate(_OUTER_PAD))

    def digest(self, message: bytes) -> bytes:
        """The MAC of ``message``."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


_SHA256_BLOCK: Final = 64
_INNER_PAD: Final = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD: Final = bytes(byte ^ 0x5C for byte in range(256))


@dataclass(frozen=True, slots=True)
class WriterKey:
    """One HMAC key: its id (named in every seal it makes), its writer and its secret."""

    id: str
    writer: Writer
    secret: bytes = field(repr=False)
    #: The secret's HMAC states, hashed once (derived: not compared, never shown).
    mac: HmacSha256 = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mac", HmacSha256(self.secret))


@dataclass(frozen=True, slots=True)
class Keyring:
    """The keys a service verifies with, and the one it signs with per writer.

    ``unsealed_before`` (default 0: none) accepts records *without* a seal below that stream
    position: the migration of a stream written before seals existed. Positions only grow, so
    set to the stream's next sequence at the upgrade it admits nothing appended afterwards.
    """

    keys: Mapping[str, WriterKey]
    sign_with: Mapping[Writer, str]
    unsealed_before: int = 0

    def signer(self, writer: Writer) -> WriterKey:
        """The key ``writer`` signs with; :class:`KeyringError` if the keyring names none."""
        key_id = self.sign_with.get(writer)
        if key_id is None:
            raise KeyringError(f"the log keyring names no {writer.value} key in 'sign_with'")
        return self.keys[key_id]

    def key(self, key_id: str) -> WriterKey | None:
        """The key with id ``key_id``, or None."""
        return self.keys.get(key_id)

    def has_signer(self, writer: Writer) -> bool:
        """Whether the keyring names a key ``writer`` signs with."""
        return writer in self.sign_with

    def without(self, writer: Writer) -> Keyring:
        """This keyring without any key of ``writer`` (say, the dealer's copy: no ledger key)."""
        keys = {key_id: key for key_id, key in self.keys.items() if key.writer is not writer}
        sign_with = {w: key_id for w, key_id in self.sign_with.items() if w is not writer}
        return Keyring(keys, sign_with, self.unsealed_before)


def _framed_mac(key: WriterKey, *parts: bytes) -> bytes:
    """HMAC-SHA256 of ``parts``, each prefixed with its length (an unambiguous framing).

    One message, one MAC (a dozen ``update`` calls would cost more than the hashing itself);
    a batch's seal frames its shared start once (:func:`_batch_mac`)."""
    pieces: list[bytes] = []
    for part in parts:  # a plain loop: a generator of pairs costs twice as much here
        pieces.append(_U64.pack(len(part)))
        pieces.append(part)
    return key.mac.digest(b"".join(pieces))


#: The framing of the previous position's 8 bytes, and the position with the msg id's length.
_POSITION_FRAME: Final = _U64.pack(8)
_U64_PAIR: Final = struct.Struct(">QQ")


@functools.lru_cache(maxsize=4096)
def _batch_prefix(key_id: str, log_key: str) -> bytes:
    """The framed start of a batch MAC's message, which every record one key seals in one log
    shares (domain, key id, log key, the position's length): framed once per key and log, not
    per record (a replay checks a seal per record). Public values only."""
    parts = (_DOMAIN_BATCH, key_id.encode(), log_key.encode())
    return b"".join([piece for part in parts for piece in (_U64.pack(len(part)), part)]) + (
        _POSITION_FRAME
    )


def _batch_mac(
    key: WriterKey, log_key: str, previous_position: int, msg_id: str, data: bytes
) -> bytes:
    """:func:`_framed_mac` of the domain, the key id, the log key, the previous position, the
    msg id and the data, with the parts one key and one log share framed once."""
    raw_id = msg_id.encode()
    message = b"".join(
        (
            _batch_prefix(key.id, log_key),
            _U64_PAIR.pack(previous_position, len(raw_id)),
            raw_id,
            _U64.pack(len(data)),
            data,
        )
    )
    return key.mac.digest(message)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def seal_batch(
    key: WriterKey, log_key: str, expected_position: int, msg_id: str, data: bytes
) -> str:
    """The seal (header value) of ``data`` appended to ``log_key`` after ``expected_position``
    with ``msg_id``: ``<key id>:<expected position>:<MAC, base64url>``."""
    if not 0 <= expected_position <= _MAX_POSITION:
        raise ValueError(f"position {expected_position} is outside 0..2^64-1")
    mac = _batch_mac(key, log_key, expected_position, msg_id, data)
    return f"{key.id}:{expected_position}:{_b64(mac)}"


#: A MAC's text in a seal: base64url of its 32 bytes, unpadded (43 characters).
_MAC_TEXT: Final = re.compile(r"[A-Za-z0-9_-]{43}")


def _parse_seal(seal: str) -> tuple[str, int, str] | None:
    """The key id, the claimed previous position and the MAC's text of a well-formed seal.

    The MAC stays text: the check compares it with the text of the MAC it expects (no decoding
    per record; and only the exact text the writer makes matches, where a decoder would also
    accept a last character's other spare bits)."""
    parts = seal.split(":")
    if len(parts) != 3:
        return None
    key_id, claimed, mac_text = parts
    if (
        not _KEY_ID.fullmatch(key_id)
        or not (claimed.isascii() and claimed.isdigit())
        or len(claimed) > 20
    ):
        return None
    if not _MAC_TEXT.fullmatch(mac_text):
        return None
    previous = int(claimed)
    if previous > _MAX_POSITION:
        return None
    return key_id, previous, mac_text


def _where(log_key: str, position: int) -> str:
    return f"the record at position {position} of {log_key!r}"


def open_batch(
    keyring: Keyring,
    seal: str | None,
    *,
    log_key: str,
    position: int,
    previous_position: int,
    msg_id: str,
    data: bytes,
    writers: frozenset[Writer] = TABLE_LOG_WRITERS,
) -> Writer:
    """The writer whose key sealed the record at ``position`` of ``log_key`` (whose previous
    record is at ``previous_position``, 0 for none); raises :class:`SealRefused` otherwise,
    :attr:`Refusal.WRONG_WRITER` for a key of a writer not in ``writers`` (default: the table
    log's, so a ledger key never seals a table batch; the journal passes ``{Writer.LEDGER}``).

    A record without a seal below ``keyring.unsealed_before`` is a migrated dealer record (the
    journal checks its own migration bound before calling this: see poker.wallet.journal).
    """
    if seal is None or seal == "":
        if position < keyring.unsealed_before:
            return Writer.DEALER
        raise SealRefused(Refusal.MISSING, f"{_where(log_key, position)} carries no seal")
    parsed = _parse_seal(seal)
    if parsed is None:
        where = _where(log_key, position)
        raise SealRefused(Refusal.MALFORMED, f"{where} carries a malformed seal")
    key_id, claimed_previous, mac_text = parsed
    key = keyring.key(key_id)
    if key is None:
        where = _where(log_key, position)
        raise SealRefused(Refusal.UNKNOWN_KEY, f"{where} is sealed with unknown key {key_id!r}")
    if key.writer not in writers:
        where = _where(log_key, position)
        raise SealRefused(Refusal.WRONG_WRITER, f"{where} is sealed by a {key.writer.value} key")
    expected = _b64(_batch_mac(key, log_key, claimed_previous, msg_id, data))
    if not hmac.compare_digest(expected, mac_text):
        where = _where(log_key, position)
        raise SealRefused(Refusal.BAD_MAC, f"the seal of {where} does not match its contents")
    if claimed_previous != previous_position:
        where = _where(log_key, position)
        raise SealRefused(
            Refusal.MISPLACED,
            f"{where} was sealed to follow position {claimed_previous}, but follows "
            f"{previous_position}: a copied or replayed record",
        )
    return key.writer


def _snapshot_mac(key: WriterKey, bucket: str, log_key: str, position: int, data: bytes) -> bytes:
    return _framed_mac(
        key,
        _DOMAIN_SNAPSHOT,
        key.id.encode(),
        bucket.encode(),
        log_key.encode(),
        _U64.pack(position),
        data,
    )


def seal_snapshot(key: WriterKey, bucket: str, log_key: str, position: int, data: bytes) -> bytes:
    """``data`` (the snapshot of ``log_key`` at ``position`` in ``bucket``) in its sealed form."""
    key_id = key.id.encode()
    mac = _snapshot_mac(key, bucket, log_key, position, data)
    return bytes([_SNAPSHOT_FORMAT, len(key_id)]) + key_id + mac + data


def open_snapshot(
    keyring: Keyring,
    sealed: bytes,
    *,
    bucket: str,
    log_key: str,
    position: int,
    writers: Iterable[Writer],
) -> bytes:
    """The payload of a sealed snapshot, once its MAC (by a key of one of ``writers``) matches
    the bucket, key and position; raises :class:`SealRefused` without decoding anything else."""
    where = f"the snapshot of {log_key!r} at position {position} in {bucket!r}"
    if len(sealed) < 2 or sealed[0] != _SNAPSHOT_FORMAT:
        raise SealRefused(Refusal.MISSING, f"{where} carries no seal")
    id_length = sealed[1]
    body_at = 2 + id_length + _MAC_BYTES
    if len(sealed) < body_at:
        raise SealRefused(Refusal.MALFORMED, f"{where} carries a malformed seal")
    key_id = sealed[2 : 2 + id_length].decode("ascii", "replace")
    key = keyring.key(key_id)
    if key is None:
        raise SealRefused(Refusal.UNKNOWN_KEY, f"{where} is sealed with unknown key {key_id!r}")
    if key.writer not in set(writers):
        raise SealRefused(Refusal.WRONG_WRITER, f"{where} is sealed by a {key.writer.value} key")
    payload = sealed[body_at:]
    expected = _snapshot_mac(key, bucket, log_key, position, payload)
    if not hmac.compare_digest(expected, sealed[2 + id_length : body_at]):
        raise SealRefused(Refusal.BAD_MAC, f"the seal of {where} does not match its contents")
    return payload


class SealedSnapshotStore:
    """A :class:`~poker.eventstore.snapshots.SnapshotStore` that seals what it saves and opens what
    it loads; a snapshot whose seal fails is a :class:`SnapshotRefused` (a ``CorruptSnapshot``),
    so callers already replay the log instead. ``on_refused`` hears the reason (a metric)."""

    def __init__(
        self,
        inner: SnapshotStore,
        keyring: Keyring,
        *,
        bucket: str,
        writer: Writer,
        accept: Iterable[Writer] | None = None,
        on_refused: Callable[[Refusal], None] | None = None,
    ) -> None:
        self._inner = inner
        self._keyring = keyring
        self._bucket = bucket
        self._key = keyring.signer(writer)
        self._accept = frozenset(accept if accept is not None else (writer,))
        self._on_refused = on_refused

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """See :meth:`SnapshotStore.save`; the stored value is sealed."""
        sealed = seal_snapshot(self._key, self._bucket, key, position, data)
        return await self._inner.save(key, position, sealed)

    async def load(self, key: str) -> Snapshot | None:
        """See :meth:`SnapshotStore.load`; raises :class:`SnapshotRefused` for a bad seal."""
        stored = await self._inner.load(key)
        if stored is None:
            return None
        try:
            payload = open_snapshot(
                self._keyring,
                stored.data,
                bucket=self._bucket,
                log_key=key,
                position=stored.position,
                writers=self._accept,
            )
        except SealRefused as refused:
            if self._on_refused is not None:
                self._on_refused(refused.reason)
            raise SnapshotRefused(refused.reason, refused.message) from refused
        return Snapshot(stored.position, payload)


class SnapshotRefused(CorruptSnapshot):
    """A stored snapshot whose seal did not verify; it was not decoded."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# --- keyring files -------------------------------------------------------------------------


def _fail(source: str, problem: str) -> KeyringError:
    return KeyringError(f"log keyring {source}: {problem}")


def _parse_key(entry: Any, source: str, index: int) -> WriterKey:
    if not isinstance(entry, dict) or set(entry) != {"id", "writer", "secret"}:
        raise _fail(source, f"keys[{index}] must be an object with exactly id, writer and secret")
    key_id, writer, secret_text = entry["id"], entry["writer"], entry["secret"]
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        raise _fail(source, f"keys[{index}].id must be 1-64 letters, digits, '-' or '_'")
    if writer not in {w.value for w in Writer}:
        raise _fail(source, f"key {key_id!r}: writer must be 'dealer', 'wallet' or 'ledger'")
    try:
        secret = base64.b64decode(str(secret_text), validate=True)
    except (binascii.Error, ValueError) as error:
        raise _fail(source, f"key {key_id!r}: secret is not base64") from error
    if len(secret) < MIN_SECRET_BYTES:
        raise _fail(source, f"key {key_id!r}: secret has {len(secret)} bytes, at least 32 needed")
    return WriterKey(key_id, Writer(writer), secret)


def _parse_sign_with(value: Any, keys: Mapping[str, WriterKey], source: str) -> dict[Writer, str]:
    # A bare key id (the writer is the key's), or {writer: key id} (one file for both services).
    named: Any = {"": value} if isinstance(value, str) else value
    if not isinstance(named, dict) or not named:
        raise _fail(source, "sign_with must be a key id or an object {writer: key id}")
    sign_with: dict[Writer, str] = {}
    for label, key_id in named.items():
        key = keys.get(key_id) if isinstance(key_id, str) else None
        if key is None:
            raise _fail(source, f"sign_with names {key_id!r}, which is not among the keys")
        if label and label != key.writer.value:
            raise _fail(source, f"sign_with.{label} names {key_id!r}, a {key.writer.value} key")
        sign_with[key.writer] = key.id
    return sign_with


def parse_keyring(text: str, source: str = "<text>") -> Keyring:
    """The keyring of a JSON document (see docs/security/table-log.md); :class:`KeyringError` with
    a sentence naming ``source`` and the problem."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise _fail(source, f"not JSON ({error})") from error
    if not isinstance(document, dict):
        raise _fail(source, "must be a JSON object")
    unknown = set(document) - {"sign_with", "keys", "unsealed_before"}
    if unknown:
        raise _fail(source, f"unknown fields {sorted(unknown)}")
    entries = document.get("keys")
    if not isinstance(entries, list) or not entries:
        raise _fail(source, "keys must be a non-empty list")
    keys: dict[str, WriterKey] = {}
    for index, entry in enumerate(entries):
        key = _parse_key(entry, source, index)
        if key.id in keys:
            raise _fail(source, f"key id {key.id!r} appears twice")
        keys[key.id] = key
    sign_with = _parse_sign_with(document.get("sign_with"), keys, source)
    unsealed_before = document.get("unsealed_before", 0)
    if not isinstance(unsealed_before, int) or not 0 <= unsealed_before <= _MAX_POSITION:
        raise _fail(source, "unsealed_before must be a stream position (0..2^64-1)")
    return Keyring(keys, sign_with, unsealed_before)


def load_keyring(path: str | os.PathLike[str]) -> Keyring:
    """The keyring in the JSON file at ``path``; :class:`KeyringError` if it is not valid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise _fail(str(path), f"cannot be read ({error.strerror})") from error
    return parse_keyring(text, str(path))


def keyring_document(keyring: Keyring) -> dict[str, Any]:
    """The JSON document of ``keyring`` (what :func:`parse_keyring` reads back)."""
    return {
        "sign_with": {writer.value: key_id for writer, key_id in keyring.sign_with.items()},
        "keys": [
            {
                "id": key.id,
                "writer": key.writer.value,
                "secret": base64.b64encode(key.secret).decode(),
            }
            for key in keyring.keys.values()
        ],
        "unsealed_before": keyring.unsealed_before,
    }


def new_keyring(suffix: str | None = None) -> Keyring:
    """A fresh keyring with one key per writer (dealer, wallet, ledger), each signing for its
    writer: the wallet's. The dealer's is ``new_keyring().without(Writer.LEDGER)``."""
    tag = suffix or secrets.token_hex(3)
    keys = {
        f"{writer.value}-{tag}": WriterKey(
            f"{writer.value}-{tag}", writer, secrets.token_bytes(MIN_SECRET_BYTES)
        )
        for writer in Writer
    }
    return Keyring(keys, {key.writer: key.id for key in keys.values()})


def with_new_key(keyring: Keyring, writer: Writer, suffix: str | None = None) -> Keyring:
    """``keyring`` plus a fresh key of ``writer`` that it signs with (say, the ledger key added
    to a keyring written before the journal was sealed)."""
    key_id = f"{writer.value}-{suffix or secrets.token_hex(3)}"
    if key_id in keyring.keys:
        raise KeyringError(f"the log keyring already has a key {key_id!r}")
    key = WriterKey(key_id, writer, secrets.token_bytes(MIN_SECRET_BYTES))
    keys = {**keyring.keys, key_id: key}
    return Keyring(keys, {**keyring.sign_with, writer: key_id}, keyring.unsealed_before)


def write_keyring(keyring: Keyring, path: str | os.PathLike[str]) -> Path:
    """Write ``keyring`` to ``path`` readable by its owner only (mode 0600); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(keyring_document(keyring), handle, indent=2)
        handle.write("\n")
    target.chmod(0o600)
    return target


def split_keyring_files(dealer_path: Path, wallet_path: Path, tag: str) -> tuple[Path, Path]:
    """``(dealer_path, wallet_path)``, made if missing: the wallet's keyring and the dealer's,
    the same without the ledger key. A dealer keyring of an older start (no wallet file yet)
    is kept and gets a new ledger key in the wallet's; a ledger key found in the dealer's file
    is moved out of it."""
    if wallet_path.exists():
        wallet = load_keyring(wallet_path)
    elif dealer_path.exists():
        wallet = load_keyring(dealer_path)
        if not wallet.has_signer(Writer.LEDGER):
            wallet = with_new_key(wallet, Writer.LEDGER, f"{tag}-1")
        write_keyring(wallet, wallet_path)
    else:
        wallet = new_keyring(f"{tag}-1")
        write_keyring(wallet, wallet_path)
    dealer = wallet.without(Writer.LEDGER)
    if not dealer_path.exists() or load_keyring(dealer_path) != dealer:
        write_keyring(dealer, dealer_path)
    return dealer_path, wallet_path
