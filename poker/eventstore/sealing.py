"""Writer keys, and the signatures (Ed25519) and MACs (HMAC-SHA256) that seal log records and
snapshots.

Anyone who can publish to a subject of the table stream could append a record with the right
expected sequence; anyone who can write a KV bucket could replace a snapshot. A *seal* says that
a trusted writer (a dealer, or the wallet closing an abandoned table) wrote exactly these bytes at
exactly this place, so a reader settles money, or rebuilds a table, only from what such a writer
wrote. This module is pure: keys, messages, proofs, keyring files; no NATS, no protobuf.

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

**Two kinds of keys.** An HMAC key (``secret``) verifies only what a holder of the same secret
could have sealed: fine for a log one service alone writes and reads. The table log is written by
two services that must not be able to write for each other (a wallet host that could seal dealer
batches could deal hands and settle pots), so its writers sign with Ed25519 (``public``, and
``private`` where the key signs): each service holds its own private key and the other's public
key only. The seal's shape is the same for both (``<key id>:<previous position>:<proof>``); the
key id's entry says which algorithm made the proof, and the signed message is the MAC's framing
under its own domain tag, so a proof of one kind never passes for the other.
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
from typing import Any, Final, NamedTuple

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from poker.eventstore.snapshots import CorruptSnapshot, Snapshot, SnapshotStore

#: The message header that carries a record's seal.
SEAL_HEADER: Final = "Poker-Seal"
#: Keys shorter than this are refused: HMAC-SHA256 wants at least its output size.
MIN_SECRET_BYTES: Final = 32

_DOMAIN_BATCH: Final = b"poker/log-record/v1"
_DOMAIN_SNAPSHOT: Final = b"poker/snapshot/v1"
# An Ed25519 proof signs the same framing as the MAC under its own tag: never the same message.
_DOMAIN_BATCH_ED25519: Final = b"poker/log-record/ed25519/v1"
_DOMAIN_SNAPSHOT_ED25519: Final = b"poker/snapshot/ed25519/v1"
#: An Ed25519 key's bytes: the public key, and the private seed.
ED25519_KEY_BYTES: Final = 32
_SIGNATURE_BYTES: Final = 64
_SIGNED_SNAPSHOT_FORMAT: Final = 2
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
    # An HMAC seal where the keyring accepts signatures only (at or past ``hmac_below``).
    RETIRED_HMAC = "retired_hmac"


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
class SigningKey:
    """One Ed25519 key: its id, its writer, its public key, and its private seed where this
    service signs with it (None in every other service's keyring: they only verify).

    >>> key = new_signing_key("dealer-1", Writer.DEALER)
    >>> key.verify(key.sign(b"m"), b"m"), key.public_only().verify(key.sign(b"m"), b"n")
    (True, False)
    """

    id: str
    writer: Writer
    public: bytes
    private: bytes | None = field(default=None, repr=False)
    #: The key objects, made once (derived: not compared, never shown).
    _verifier: Ed25519PublicKey = field(init=False, repr=False, compare=False)
    _signer: Ed25519PrivateKey | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.public) != ED25519_KEY_BYTES:
            raise ValueError(f"key {self.id!r}: an Ed25519 public key has 32 bytes")
        signer = None
        if self.private is not None:
            if len(self.private) != ED25519_KEY_BYTES:
                raise ValueError(f"key {self.id!r}: an Ed25519 private key has 32 bytes")
            signer = Ed25519PrivateKey.from_private_bytes(self.private)
            if _raw_public(signer) != self.public:
                raise ValueError(f"key {self.id!r}: the private key is not the public key's")
        object.__setattr__(self, "_verifier", Ed25519PublicKey.from_public_bytes(self.public))
        object.__setattr__(self, "_signer", signer)

    @property
    def can_sign(self) -> bool:
        """Whether this keyring holds the private key."""
        return self._signer is not None

    def sign(self, message: bytes) -> bytes:
        """The signature of ``message``; :class:`KeyringError` without the private key."""
        if self._signer is None:
            raise KeyringError(f"the log keyring holds only the public half of key {self.id!r}")
        return self._signer.sign(message)

    def verify(self, signature: bytes, message: bytes) -> bool:
        """Whether ``signature`` is this key's over ``message``."""
        try:
            self._verifier.verify(signature, message)
        except InvalidSignature:
            return False
        return True

    def public_only(self) -> SigningKey:
        """This key without its private half (what the other services hold)."""
        return SigningKey(self.id, self.writer, self.public)


#: A key of a keyring: HMAC (a shared secret) or Ed25519 (a key pair).
LogKey = WriterKey | SigningKey


def _raw_public(private: Ed25519PrivateKey) -> bytes:
    return private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _can_sign(key: LogKey) -> bool:
    return isinstance(key, WriterKey) or key.can_sign


@dataclass(frozen=True, slots=True)
class Keyring:
    """The keys a service verifies with, and the one it signs with per writer.

    ``unsealed_before`` (default 0: none) accepts records *without* a seal below that stream
    position: the migration of a stream written before seals existed. Positions only grow, so
    set to the stream's next sequence at the upgrade it admits nothing appended afterwards.

    ``hmac_below`` (None: no limit) is the table log's move from HMAC keys to signatures: an HMAC
    seal is accepted only on a record below that stream position, and no HMAC-sealed table
    snapshot is (:mod:`poker.tablelog.seals` applies it; the keyring only carries it). Set to
    the stream's next sequence when the services start signing, a service that still holds an
    old HMAC secret cannot place a record that verifies under it anywhere it would be read.
    """

    keys: Mapping[str, LogKey]
    sign_with: Mapping[Writer, str]
    unsealed_before: int = 0
    hmac_below: int | None = None

    def signer(self, writer: Writer) -> LogKey:
        """The key ``writer`` signs with; :class:`KeyringError` if the keyring names none, or
        holds only its public half."""
        key_id = self.sign_with.get(writer)
        if key_id is None:
            raise KeyringError(f"the log keyring names no {writer.value} key in 'sign_with'")
        key = self.keys[key_id]
        if not _can_sign(key):
            raise KeyringError(f"the log keyring holds only the public half of key {key_id!r}")
        return key

    def key(self, key_id: str) -> LogKey | None:
        """The key with id ``key_id``, or None."""
        return self.keys.get(key_id)

    def has_signer(self, writer: Writer) -> bool:
        """Whether the keyring names a key ``writer`` signs with."""
        return writer in self.sign_with

    def without(self, writer: Writer) -> Keyring:
        """This keyring without any key of ``writer`` (say, the dealer's copy: no ledger key)."""
        keys = {key_id: key for key_id, key in self.keys.items() if key.writer is not writer}
        sign_with = {w: key_id for w, key_id in self.sign_with.items() if w is not writer}
        return Keyring(keys, sign_with, self.unsealed_before, self.hmac_below)

    def public(self) -> Keyring:
        """What anyone may hold: the Ed25519 keys' public halves, no HMAC secret, no signer."""
        keys = {
            key.id: key.public_only() for key in self.keys.values() if isinstance(key, SigningKey)
        }
        return Keyring(keys, {}, self.unsealed_before, self.hmac_below)


def _framed(*parts: bytes) -> bytes:
    """``parts``, each prefixed with its length (an unambiguous framing)."""
    pieces: list[bytes] = []
    for part in parts:  # a plain loop: a generator of pairs costs twice as much here
        pieces.append(_U64.pack(len(part)))
        pieces.append(part)
    return b"".join(pieces)


def _framed_mac(key: WriterKey, *parts: bytes) -> bytes:
    """HMAC-SHA256 of ``parts``, each prefixed with its length (an unambiguous framing).

    One message, one MAC (a dozen ``update`` calls would cost more than the hashing itself);
    a batch's seal frames its shared start once (:func:`_batch_message`)."""
    return key.mac.digest(_framed(*parts))


#: The framing of the previous position's 8 bytes, and the position with the msg id's length.
_POSITION_FRAME: Final = _U64.pack(8)
_U64_PAIR: Final = struct.Struct(">QQ")


@functools.lru_cache(maxsize=4096)
def _batch_prefix(domain: bytes, key_id: str, log_key: str) -> bytes:
    """The framed start of a batch seal's message, which every record one key seals in one log
    shares (domain, key id, log key, the position's length): framed once per key and log, not
    per record (a replay checks a seal per record). Public values only."""
    return _framed(domain, key_id.encode(), log_key.encode()) + _POSITION_FRAME


def _batch_message(
    key: LogKey, log_key: str, previous_position: int, msg_id: str, data: bytes
) -> bytes:
    """The framed domain (the key's kind's), key id, log key, previous position, msg id and
    data: what a batch's MAC or signature is over."""
    domain = _DOMAIN_BATCH if isinstance(key, WriterKey) else _DOMAIN_BATCH_ED25519
    raw_id = msg_id.encode()
    return b"".join(
        (
            _batch_prefix(domain, key.id, log_key),
            _U64_PAIR.pack(previous_position, len(raw_id)),
            raw_id,
            _U64.pack(len(data)),
            data,
        )
    )


def _batch_mac(
    key: WriterKey, log_key: str, previous_position: int, msg_id: str, data: bytes
) -> bytes:
    """The HMAC of :func:`_batch_message`."""
    return key.mac.digest(_batch_message(key, log_key, previous_position, msg_id, data))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def seal_batch(key: LogKey, log_key: str, expected_position: int, msg_id: str, data: bytes) -> str:
    """The seal (header value) of ``data`` appended to ``log_key`` after ``expected_position``
    with ``msg_id``: ``<key id>:<expected position>:<proof, base64url>``, the proof an
    HMAC-SHA256 (43 characters) or an Ed25519 signature (86) by the key's kind."""
    if not 0 <= expected_position <= _MAX_POSITION:
        raise ValueError(f"position {expected_position} is outside 0..2^64-1")
    message = _batch_message(key, log_key, expected_position, msg_id, data)
    proof = key.mac.digest(message) if isinstance(key, WriterKey) else key.sign(message)
    return f"{key.id}:{expected_position}:{_b64(proof)}"


#: A proof's text in a seal: base64url, unpadded, of a MAC's 32 bytes (43 characters) or of a
#: signature's 64 (86 characters).
_PROOF_TEXT: Final = re.compile(r"[A-Za-z0-9_-]{43}|[A-Za-z0-9_-]{86}")
_MAC_TEXT_LENGTH: Final = 43
_SIGNATURE_TEXT_LENGTH: Final = 86


def _parse_seal(seal: str) -> tuple[str, int, str] | None:
    """The key id, the claimed previous position and the proof's text of a well-formed seal.

    A MAC stays text: the check compares it with the text of the MAC it expects (no decoding
    per record; and only the exact text the writer makes matches, where a decoder would also
    accept a last character's other spare bits). A signature is decoded, and only the text
    that encodes it back exactly is taken (the same rule)."""
    parts = seal.split(":")
    if len(parts) != 3:
        return None
    key_id, claimed, proof_text = parts
    if (
        not _KEY_ID.fullmatch(key_id)
        or not (claimed.isascii() and claimed.isdigit())
        or len(claimed) > 20
    ):
        return None
    if not _PROOF_TEXT.fullmatch(proof_text):
        return None
    previous = int(claimed)
    if previous > _MAX_POSITION:
        return None
    return key_id, previous, proof_text


def _where(log_key: str, position: int) -> str:
    return f"the record at position {position} of {log_key!r}"


@dataclass(frozen=True, slots=True)
class BatchSeal:
    """A batch's seal as read, not yet verified: the key it names (in the keyring), the
    previous position it claims, and its proof's text."""

    key: LogKey
    previous: int
    proof: str

    @property
    def writer(self) -> Writer:
        """The writer of the key named."""
        return self.key.writer

    def matches(self, *, log_key: str, msg_id: str, data: bytes) -> bool:
        """Whether the proof is the key's over ``data`` with ``msg_id``, appended to ``log_key``
        after the claimed previous position: a MAC compared, or a signature verified (the
        costly step, about 100-250 µs for Ed25519 against under 1 µs for the MAC)."""
        message = _batch_message(self.key, log_key, self.previous, msg_id, data)
        if isinstance(self.key, WriterKey):
            return hmac.compare_digest(_b64(self.key.mac.digest(message)), self.proof)
        signature = base64.urlsafe_b64decode(self.proof + "==")
        return _b64(signature) == self.proof and self.key.verify(signature, message)


def read_batch_seal(
    keyring: Keyring, seal: str | None, *, log_key: str, position: int
) -> BatchSeal | None:
    """The seal of the record at ``position`` of ``log_key``, read but not verified; None for a
    record without a seal below ``keyring.unsealed_before`` (a migrated dealer record). Raises
    :class:`SealRefused` for a missing, malformed or unknown-key seal, and for a proof whose
    length is not its key's kind's."""
    if seal is None or seal == "":
        if position < keyring.unsealed_before:
            return None
        raise SealRefused(Refusal.MISSING, f"{_where(log_key, position)} carries no seal")
    parsed = _parse_seal(seal)
    if parsed is None:
        where = _where(log_key, position)
        raise SealRefused(Refusal.MALFORMED, f"{where} carries a malformed seal")
    key_id, claimed_previous, proof_text = parsed
    key = keyring.key(key_id)
    if key is None:
        where = _where(log_key, position)
        raise SealRefused(Refusal.UNKNOWN_KEY, f"{where} is sealed with unknown key {key_id!r}")
    expected = _MAC_TEXT_LENGTH if isinstance(key, WriterKey) else _SIGNATURE_TEXT_LENGTH
    if len(proof_text) != expected:
        where = _where(log_key, position)
        raise SealRefused(Refusal.MALFORMED, f"{where} carries a malformed seal")
    return BatchSeal(key, claimed_previous, proof_text)


def refuse_misplaced(seal: BatchSeal, log_key: str, position: int, previous_position: int) -> None:
    """Raise :class:`SealRefused` (``misplaced``) unless ``seal`` claims ``previous_position``
    as the record before it: a valid seal made for another place (a copied or replayed
    record)."""
    if seal.previous != previous_position:
        where = _where(log_key, position)
        raise SealRefused(
            Refusal.MISPLACED,
            f"{where} was sealed to follow position {seal.previous}, but follows "
            f"{previous_position}: a copied or replayed record",
        )


def refuse_foreign_writer(
    seal: BatchSeal, log_key: str, position: int, writers: frozenset[Writer]
) -> None:
    """Raise :class:`SealRefused` (``wrong_writer``) unless ``seal`` names a key of one of
    ``writers`` (the writers the log accepts: a ledger key never seals a table batch, a table
    log key never a journal record)."""
    if seal.writer not in writers:
        where = _where(log_key, position)
        raise SealRefused(Refusal.WRONG_WRITER, f"{where} is sealed by a {seal.writer.value} key")


def refuse_bad_proof(log_key: str, position: int) -> SealRefused:
    """The refusal of a record whose proof does not match its contents (``bad_mac``)."""
    where = _where(log_key, position)
    return SealRefused(Refusal.BAD_MAC, f"the seal of {where} does not match its contents")


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
    read = read_batch_seal(keyring, seal, log_key=log_key, position=position)
    if read is None:
        return Writer.DEALER
    refuse_foreign_writer(read, log_key, position, writers)
    if not read.matches(log_key=log_key, msg_id=msg_id, data=data):
        raise refuse_bad_proof(log_key, position)
    refuse_misplaced(read, log_key, position, previous_position)
    return read.writer


def _snapshot_message(key: LogKey, bucket: str, log_key: str, position: int, data: bytes) -> bytes:
    domain = _DOMAIN_SNAPSHOT if isinstance(key, WriterKey) else _DOMAIN_SNAPSHOT_ED25519
    return _framed(
        domain, key.id.encode(), bucket.encode(), log_key.encode(), _U64.pack(position), data
    )


def _snapshot_mac(key: WriterKey, bucket: str, log_key: str, position: int, data: bytes) -> bytes:
    return key.mac.digest(_snapshot_message(key, bucket, log_key, position, data))


def seal_snapshot(key: LogKey, bucket: str, log_key: str, position: int, data: bytes) -> bytes:
    """``data`` (the snapshot of ``log_key`` at ``position`` in ``bucket``) in its sealed form:
    format 1 with an HMAC key's MAC (32 bytes), format 2 with an Ed25519 signature (64)."""
    key_id = key.id.encode()
    message = _snapshot_message(key, bucket, log_key, position, data)
    if isinstance(key, WriterKey):
        return bytes([_SNAPSHOT_FORMAT, len(key_id)]) + key_id + key.mac.digest(message) + data
    signature = key.sign(message)
    return bytes([_SIGNED_SNAPSHOT_FORMAT, len(key_id)]) + key_id + signature + data


def open_snapshot(
    keyring: Keyring,
    sealed: bytes,
    *,
    bucket: str,
    log_key: str,
    position: int,
    writers: Iterable[Writer],
    hmac_accepted: bool = True,
) -> bytes:
    """The payload of a sealed snapshot, once its proof (by a key of one of ``writers``)
    matches the bucket, key and position; raises :class:`SealRefused` without decoding anything
    else. ``hmac_accepted=False``: only a signature is taken (``retired_hmac``)."""
    where = f"the snapshot of {log_key!r} at position {position} in {bucket!r}"
    if len(sealed) < 2 or sealed[0] not in (_SNAPSHOT_FORMAT, _SIGNED_SNAPSHOT_FORMAT):
        raise SealRefused(Refusal.MISSING, f"{where} carries no seal")
    signed = sealed[0] == _SIGNED_SNAPSHOT_FORMAT
    id_length = sealed[1]
    proof_at = 2 + id_length
    body_at = proof_at + (_SIGNATURE_BYTES if signed else _MAC_BYTES)
    if len(sealed) < body_at:
        raise SealRefused(Refusal.MALFORMED, f"{where} carries a malformed seal")
    key_id = sealed[2:proof_at].decode("ascii", "replace")
    key = keyring.key(key_id)
    if key is None:
        raise SealRefused(Refusal.UNKNOWN_KEY, f"{where} is sealed with unknown key {key_id!r}")
    if key.writer not in set(writers):
        raise SealRefused(Refusal.WRONG_WRITER, f"{where} is sealed by a {key.writer.value} key")
    if isinstance(key, WriterKey) and not hmac_accepted:
        raise SealRefused(
            Refusal.RETIRED_HMAC, f"{where} is sealed with HMAC key {key_id!r}: signatures only"
        )
    if signed != isinstance(key, SigningKey):
        raise SealRefused(Refusal.MALFORMED, f"{where} carries a seal of another kind of key")
    payload = sealed[body_at:]
    proof = sealed[proof_at:body_at]
    message = _snapshot_message(key, bucket, log_key, position, payload)
    if isinstance(key, WriterKey):
        matches = hmac.compare_digest(key.mac.digest(message), proof)
    else:
        matches = key.verify(proof, message)
    if not matches:
        raise SealRefused(Refusal.BAD_MAC, f"the seal of {where} does not match its contents")
    return payload


class SealedSnapshotStore:
    """A :class:`~poker.eventstore.snapshots.SnapshotStore` that seals what it saves and opens what
    it loads; a snapshot whose seal fails is a :class:`SnapshotRefused` (a ``CorruptSnapshot``),
    so callers already replay the log instead. ``on_refused`` hears the reason (a metric).
    ``hmac_accepted=False`` takes signed snapshots only (the table log once it signs: a holder
    of an old HMAC secret could seal a snapshot at any position). The key ``writer`` signs with
    is looked up at the first save: a reader holding public keys only never needs one."""

    def __init__(
        self,
        inner: SnapshotStore,
        keyring: Keyring,
        *,
        bucket: str,
        writer: Writer,
        accept: Iterable[Writer] | None = None,
        on_refused: Callable[[Refusal], None] | None = None,
        hmac_accepted: bool = True,
    ) -> None:
        self._inner = inner
        self._keyring = keyring
        self._bucket = bucket
        self._writer = writer
        self._accept = frozenset(accept if accept is not None else (writer,))
        self._on_refused = on_refused
        self._hmac_accepted = hmac_accepted

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """See :meth:`SnapshotStore.save`; the stored value is sealed."""
        signer = self._keyring.signer(self._writer)
        sealed = seal_snapshot(signer, self._bucket, key, position, data)
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
                hmac_accepted=self._hmac_accepted,
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


_KEY_SHAPES: Final = (
    frozenset({"id", "writer", "secret"}),
    frozenset({"id", "writer", "public"}),
    frozenset({"id", "writer", "public", "private"}),
)


def _base64_field(entry: Mapping[str, Any], name: str, key_id: str, source: str) -> bytes:
    try:
        return base64.b64decode(str(entry[name]), validate=True)
    except (binascii.Error, ValueError) as error:
        raise _fail(source, f"key {key_id!r}: {name} is not base64") from error


def _parse_key(entry: Any, source: str, index: int) -> LogKey:
    if not isinstance(entry, dict) or frozenset(entry) not in _KEY_SHAPES:
        raise _fail(
            source,
            f"keys[{index}] must be an object with id, writer and either secret (an HMAC key) "
            "or public (an Ed25519 key; with private where this service signs with it)",
        )
    key_id, writer = entry["id"], entry["writer"]
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        raise _fail(source, f"keys[{index}].id must be 1-64 letters, digits, '-' or '_'")
    if writer not in {w.value for w in Writer}:
        raise _fail(source, f"key {key_id!r}: writer must be 'dealer', 'wallet' or 'ledger'")
    if "secret" in entry:
        secret = _base64_field(entry, "secret", key_id, source)
        if len(secret) < MIN_SECRET_BYTES:
            raise _fail(
                source, f"key {key_id!r}: secret has {len(secret)} bytes, at least 32 needed"
            )
        return WriterKey(key_id, Writer(writer), secret)
    public = _base64_field(entry, "public", key_id, source)
    private = _base64_field(entry, "private", key_id, source) if "private" in entry else None
    try:
        return SigningKey(key_id, Writer(writer), public, private)
    except ValueError as error:
        raise _fail(source, str(error)) from error


def _parse_sign_with(value: Any, keys: Mapping[str, LogKey], source: str) -> dict[Writer, str]:
    # A bare key id (the writer is the key's), or {writer: key id} (one file for both services);
    # none at all for a keyring that only verifies (pokerctl's public keys).
    if value is None:
        return {}
    named: Any = {"": value} if isinstance(value, str) else value
    if not isinstance(named, dict):
        raise _fail(source, "sign_with must be a key id or an object {writer: key id}")
    sign_with: dict[Writer, str] = {}
    for label, key_id in named.items():
        key = keys.get(key_id) if isinstance(key_id, str) else None
        if key is None:
            raise _fail(source, f"sign_with names {key_id!r}, which is not among the keys")
        if label and label != key.writer.value:
            raise _fail(source, f"sign_with.{label} names {key_id!r}, a {key.writer.value} key")
        if not _can_sign(key):
            raise _fail(source, f"sign_with names {key_id!r}, whose private key is not here")
        sign_with[key.writer] = key.id
    return sign_with


def _position_field(document: Mapping[str, Any], name: str, source: str) -> int | None:
    value = document.get(name)
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= _MAX_POSITION:
        raise _fail(source, f"{name} must be a stream position (0..2^64-1)")
    return value


def parse_keyring(text: str, source: str = "<text>") -> Keyring:
    """The keyring of a JSON document (see docs/security/table-log.md); :class:`KeyringError` with
    a sentence naming ``source`` and the problem."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise _fail(source, f"not JSON ({error})") from error
    if not isinstance(document, dict):
        raise _fail(source, "must be a JSON object")
    unknown = set(document) - {"sign_with", "keys", "unsealed_before", "hmac_below"}
    if unknown:
        raise _fail(source, f"unknown fields {sorted(unknown)}")
    entries = document.get("keys")
    if not isinstance(entries, list) or not entries:
        raise _fail(source, "keys must be a non-empty list")
    keys: dict[str, LogKey] = {}
    for index, entry in enumerate(entries):
        key = _parse_key(entry, source, index)
        if key.id in keys:
            raise _fail(source, f"key id {key.id!r} appears twice")
        keys[key.id] = key
    sign_with = _parse_sign_with(document.get("sign_with"), keys, source)
    unsealed_before = _position_field(document, "unsealed_before", source) or 0
    hmac_below = _position_field(document, "hmac_below", source)
    return Keyring(keys, sign_with, unsealed_before, hmac_below)


def load_keyring(path: str | os.PathLike[str]) -> Keyring:
    """The keyring in the JSON file at ``path``; :class:`KeyringError` if it is not valid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise _fail(str(path), f"cannot be read ({error.strerror})") from error
    return parse_keyring(text, str(path))


def _key_document(key: LogKey) -> dict[str, str]:
    entry = {"id": key.id, "writer": key.writer.value}
    if isinstance(key, WriterKey):
        entry["secret"] = base64.b64encode(key.secret).decode()
        return entry
    entry["public"] = base64.b64encode(key.public).decode()
    if key.private is not None:
        entry["private"] = base64.b64encode(key.private).decode()
    return entry


def keyring_document(keyring: Keyring) -> dict[str, Any]:
    """The JSON document of ``keyring`` (what :func:`parse_keyring` reads back)."""
    document: dict[str, Any] = {
        "sign_with": {writer.value: key_id for writer, key_id in keyring.sign_with.items()},
        "keys": [_key_document(key) for key in keyring.keys.values()],
        "unsealed_before": keyring.unsealed_before,
    }
    if keyring.hmac_below is not None:
        document["hmac_below"] = keyring.hmac_below
    return document


def new_keyring(suffix: str | None = None) -> Keyring:
    """A fresh HMAC keyring with one key per writer (dealer, wallet, ledger), each signing for
    its writer (all secrets in one keyring: tests, and logs one service alone writes and reads;
    the dealer's copy of a shared keyring is ``new_keyring().without(Writer.LEDGER)``; the table
    log's services get :func:`new_service_keyrings`)."""
    tag = suffix or secrets.token_hex(3)
    keys = {
        f"{writer.value}-{tag}": WriterKey(
            f"{writer.value}-{tag}", writer, secrets.token_bytes(MIN_SECRET_BYTES)
        )
        for writer in Writer
    }
    return Keyring(keys, {key.writer: key.id for key in keys.values()})


def new_signing_key(key_id: str, writer: Writer) -> SigningKey:
    """A fresh Ed25519 key pair for ``writer`` (its private half included)."""
    private = Ed25519PrivateKey.generate()
    seed = private.private_bytes_raw()
    return SigningKey(key_id, writer, _raw_public(private), seed)


class ServiceKeyrings(NamedTuple):
    """The keyrings of one room: the dealer's (its private key, the wallet's public one), the
    wallet's (its private key, the dealer's public one, and the ledger key that seals its
    journal, which no dealer holds), and the public one (both public keys: pokerctl, audits)."""

    dealer: Keyring
    wallet: Keyring
    public: Keyring


def service_keyrings(
    dealer: SigningKey, wallet: SigningKey, ledger: WriterKey | None = None
) -> ServiceKeyrings:
    """The three keyrings of a room whose writers sign with ``dealer`` and ``wallet`` (both
    with their private halves), the wallet's journal sealed with ``ledger`` (an HMAC key: the
    wallet alone writes and reads its journal; in the wallet's keyring only, None: no journal
    key). HMAC is accepted nowhere in the table log (``hmac_below`` 0: the table log's rule,
    which the journal's checks do not apply)."""
    pair = (dealer, wallet)

    def holding(signer: SigningKey) -> Keyring:
        keys: dict[str, LogKey] = {
            key.id: key if key is signer else key.public_only() for key in pair
        }
        sign_with = {signer.writer: signer.id}
        if ledger is not None and signer is wallet:
            keys[ledger.id] = ledger
            sign_with[Writer.LEDGER] = ledger.id
        return Keyring(keys, sign_with, hmac_below=0)

    return ServiceKeyrings(holding(dealer), holding(wallet), holding(dealer).public())


def new_ledger_key(key_id: str) -> WriterKey:
    """A fresh ledger key (HMAC: the wallet's journal)."""
    return WriterKey(key_id, Writer.LEDGER, secrets.token_bytes(MIN_SECRET_BYTES))


def new_service_keyrings(suffix: str | None = None) -> ServiceKeyrings:
    """:func:`service_keyrings` of two fresh key pairs, ``dealer-<suffix>`` and
    ``wallet-<suffix>``, and a fresh ledger key ``ledger-<suffix>``."""
    tag = suffix or secrets.token_hex(3)
    return service_keyrings(
        new_signing_key(f"dealer-{tag}", Writer.DEALER),
        new_signing_key(f"wallet-{tag}", Writer.WALLET),
        new_ledger_key(f"ledger-{tag}"),
    )


def with_new_key(keyring: Keyring, writer: Writer, suffix: str | None = None) -> Keyring:
    """``keyring`` plus a fresh HMAC key of ``writer`` that it signs with (say, the ledger key
    added to a keyring written before the journal was sealed)."""
    key_id = f"{writer.value}-{suffix or secrets.token_hex(3)}"
    if key_id in keyring.keys:
        raise KeyringError(f"the log keyring already has a key {key_id!r}")
    key = WriterKey(key_id, writer, secrets.token_bytes(MIN_SECRET_BYTES))
    keys = {**keyring.keys, key_id: key}
    return Keyring(
        keys, {**keyring.sign_with, writer: key_id}, keyring.unsealed_before, keyring.hmac_below
    )


def write_keyring(keyring: Keyring, path: str | os.PathLike[str], *, mode: int = 0o600) -> Path:
    """Write ``keyring`` to ``path`` readable by its owner only (mode 0600: ``mode`` 0644 for a
    keyring of public keys only); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(keyring_document(keyring), handle, indent=2)
        handle.write("\n")
    target.chmod(mode)
    return target


#: The file names of a room's table-log keyrings (:func:`write_service_keyrings`).
SERVICE_KEYRING_FILES: Final = {
    "dealer": "log-keys-dealer.json",
    "wallet": "log-keys-wallet.json",
    "public": "log-keys-public.json",
}


def service_keyring_texts(keyrings: ServiceKeyrings) -> dict[str, str]:
    """``{file name: JSON text}`` of a room's three keyrings (:data:`SERVICE_KEYRING_FILES`)."""
    return {
        SERVICE_KEYRING_FILES[part]: json.dumps(keyring_document(keyring), indent=2) + "\n"
        for part, keyring in keyrings._asdict().items()
    }


def write_service_keyrings(
    directory: str | os.PathLike[str], keyrings: ServiceKeyrings
) -> dict[str, Path]:
    """Write a room's keyrings into ``directory``: the dealer's and the wallet's 0600 (each
    holds a private key), the public one 0644. ``{part: path}``, parts as in
    :data:`SERVICE_KEYRING_FILES`."""
    folder = Path(directory)
    return {
        part: write_keyring(
            keyring,
            folder / SERVICE_KEYRING_FILES[part],
            mode=0o644 if part == "public" else 0o600,
        )
        for part, keyring in keyrings._asdict().items()
    }


#: The file names of a home made before the per-writer keys (one shared HMAC keyring): the
#: dealer's (``log-keys.json``, no ledger key) and the wallet's (the same plus the ledger key).
LEGACY_KEYRING_FILES: Final = {"dealer": "log-keys.json", "wallet": "wallet-keys.json"}


def split_keyring_files(dealer_path: Path, wallet_path: Path, tag: str) -> tuple[Path, Path]:
    """``(dealer_path, wallet_path)`` of a shared HMAC keyring (a home made before the
    per-writer keys), made if missing: the wallet's keyring and the dealer's, the same without
    the ledger key. A dealer keyring of an older start (no wallet file yet) is kept and gets a
    new ledger key in the wallet's; a ledger key found in the dealer's file is moved out of
    it."""
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


def room_keyring_files(directory: str | os.PathLike[str], tag: str) -> dict[str, Path]:
    """A room's keyring files in ``directory``, made on the first start: ``{"dealer": ...,
    "wallet": ..., "public": ...}`` (:data:`SERVICE_KEYRING_FILES`, :func:`new_service_keyrings`).
    A home made before the per-writer keys keeps its shared HMAC keyring
    (:data:`LEGACY_KEYRING_FILES`, split by :func:`split_keyring_files`: the ledger key in the
    wallet's only) and has no public file (its "public" is the dealer's: no ledger key)."""
    folder = Path(directory)
    legacy = {part: folder / name for part, name in LEGACY_KEYRING_FILES.items()}
    if legacy["dealer"].exists() or legacy["wallet"].exists():
        dealer_path, wallet_path = split_keyring_files(legacy["dealer"], legacy["wallet"], tag)
        return {"dealer": dealer_path, "wallet": wallet_path, "public": dealer_path}
    paths = {part: folder / name for part, name in SERVICE_KEYRING_FILES.items()}
    if all(path.exists() for path in paths.values()):
        wallet = load_keyring(paths["wallet"])
        if wallet.has_signer(Writer.LEDGER):
            return paths
        # A wallet keyring written before the journal was sealed: it gets its ledger key.
        write_keyring(with_new_key(wallet, Writer.LEDGER, f"{tag}-1"), paths["wallet"])
        return paths
    return write_service_keyrings(folder, new_service_keyrings(f"{tag}-1"))
