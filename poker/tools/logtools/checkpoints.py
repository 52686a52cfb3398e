"""Where ``pokerctl verify`` stopped checking a table, so that the next verify reads only what
was appended since (:class:`Checkpoint`, kept by a :class:`CheckpointStore`).

**What a checkpoint holds.** After a table's log checked out up to its record at position P, the
table as the log rebuilds it there, the hash chain there (the SHA-256 of the record at P, its
version, its times), the commitment announced for the next hand, the hand running at P with its
events so far (its deck is checked when it ends, on all of them), how many records the log held
up to P, how many hands it started, and what that verify could check (the decks: with the deck
keys; the seals: with the log keys; the dealer's snapshot it compared). A later verify that can
check no more than that starts from it: the replay resumes at P with that table, chain and hand.

**Why resuming gives the verdict a verify from scratch gives.** The checks of a record depend on
the records before it only through what the checkpoint carries: its chain link is compared with
the hash of the record at P (the chain's head), its seal names P as the position before it and
its signature is verified at the head of its run, which covers its link (each batch's Ed25519
seal binds the batch's bytes, and so its ``previous_batch_hash``, :mod:`poker.tablelog.seals`,
:mod:`poker.tablelog.chain`); the fold continues from the table at P; a deck is checked on the
events of its whole hand. So a record appended after P is judged exactly as a from-scratch
verify judges it, and nothing before P can change the judgement of what follows it but through
the record at P: a verify re-reads that record (one direct get) and compares its hash with the
checkpoint's.

**The prefix is not re-read: the threat model.** JetStream never rewrites a message in place:
the only ways to change a table's history before P are to delete records (the count of the
table's records, which each verify compares with the checkpoint's plus those it read after
P, falls short: found) or to replace the stream (the record at P is then another one, its hash
is not the checkpoint's: found, unless the forger kept it byte for byte, and then every record
after it chains to the real history; forging records before it that the services and a
from-scratch verify would accept takes the dealers' signing key). A record removed and another
appended at the same moment as a verify may hide from that one count, never from the next
(the checkpoint counts the records actually read). ``pokerctl verify --from-scratch`` reads
every record again (and writes fresh checkpoints): run it after restoring a stream, after a
keyring change, or as the periodic full audit.

**Where, and why not in NATS.** The checkpoints live in pokerctl's home (``--home``:
``var/pokerctl/checkpoints/<stream>/``), files the operator owns: pokerctl's NATS users read the
logs and may write nothing there (docs/security/nats.md), and a checkpoint is a claim this
operator's own verify made, which another reader should not take on trust. Each file is
authenticated with HMAC-SHA256 under a key made on first use beside them (``checkpoint-key``,
mode 0600) and binds its stream and table: a file changed, truncated or copied from another
table is refused (the table is then verified from scratch), and only then is its table state
unpickled (engine classes only, :mod:`poker.tablelog.snapshot_codec`). A checkpoint of a
verify given the deck keys holds the running hand's deck and cards: it is encrypted to those
keys, as the dealers' snapshots are (:mod:`poker.tablelog.secrets`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import secrets
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from poker.engine.table import TableState
from poker.tablelog.chain import ChainState
from poker.tablelog.command_ids import CommandIndex
from poker.tablelog.secrets import SNAPSHOT_MAGIC, DeckKeys, SecretsRefused
from poker.tablelog.snapshot_codec import decode_table_and_chain, encode_table
from poker.tools.logtools.replay import HandRecord
from poker.v1 import events_pb2 as pb

__all__ = ["Checkpoint", "CheckpointStore"]

_MAGIC: Final = b"PCKP1"
_KEY_FILE: Final = "checkpoint-key"
_LENGTH: Final = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a verify of ``table_id`` stopped, all of its log up to there checked out."""

    table_id: str
    #: The log position of the last record checked.
    position: int
    #: How many records the table's log held up to ``position``.
    records: int
    #: The hash chain after that record (its hash is ``chain.last_hash``).
    chain: ChainState
    #: The table as the log rebuilds it there.
    state: TableState
    #: The next hand's commitment as announced up to there.
    announced: bytes
    #: The hand running there (its events so far), or None.
    running: HandRecord | None
    #: Hands started before the running one, and how many of them kept secrets encrypted.
    hands: int
    encrypted_hands: int
    #: Whether the decks were checked (the deck keys given) and the seals (the log keys).
    decks: bool
    seals: bool
    #: The version of the dealer's snapshot compared with the log (0: none).
    snapshot_version: int

    def covers(self, *, decks: bool, seals: bool) -> bool:
        """Whether a verify with or without the deck keys and the log keys may resume here: it
        checked the seals if they are to be checked now, and read the decks exactly if they
        are read now (the hands it counted encrypted are the ones a verify from scratch
        counts)."""
        return self.decks == decks and (self.seals or not seals)


class CheckpointStore:
    """The checkpoints of one table stream in ``folder`` (see the module docstring)."""

    def __init__(
        self,
        folder: Path,
        stream: str,
        *,
        fresh: bool = False,
        deck_keys: DeckKeys | None = None,
    ) -> None:
        """``fresh``: load none (a verify from scratch), save as usual. ``deck_keys``: a
        checkpoint whose hands were read with them (the running hand's deck and cards, in its
        events and its table) is encrypted to them, as the dealers' snapshots are."""
        self._deck_keys = deck_keys
        self.folder = folder / "checkpoints" / _safe(stream)
        self._key_path = folder / _KEY_FILE
        self._stream = stream
        self._fresh = fresh
        self._key: bytes | None = None

    def load(self, table_id: str) -> Checkpoint | None:
        """The checkpoint of ``table_id``, or None without one (or one that is not this
        operator's for this table, or unreadable: the table is verified from scratch)."""
        if self._fresh:
            return None
        path = self._path(table_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        key = self._existing_key()
        if key is None or not data.startswith(_MAGIC):
            return None
        mac, body = data[len(_MAGIC) : len(_MAGIC) + 32], data[len(_MAGIC) + 32 :]
        if not hmac.compare_digest(mac, _mac(key, body)):
            return None
        try:
            if body.startswith(SNAPSHOT_MAGIC):
                if self._deck_keys is None:
                    return None
                body = self._deck_keys.open_snapshot(body)
            return self._decode(table_id, body)
        except (ValueError, KeyError, TypeError, pickle.UnpicklingError, struct.error):
            return None
        except SecretsRefused:
            return None

    def save(self, checkpoint: Checkpoint) -> None:
        """Write ``checkpoint`` (atomically: a verify killed meanwhile leaves the old one)."""
        body = self._encode(checkpoint)
        if checkpoint.decks:
            if self._deck_keys is None:
                raise ValueError("a checkpoint of hands read with the deck keys needs them")
            body = self._deck_keys.seal_snapshot(body)
        data = _MAGIC + _mac(self._own_key(), body) + body
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(checkpoint.table_id)
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)

    def forget(self, table_id: str) -> None:
        """Remove ``table_id``'s checkpoint (its log no longer checks out)."""
        self._path(table_id).unlink(missing_ok=True)

    # --- the file's form --------------------------------------------------------------------

    def _encode(self, checkpoint: Checkpoint) -> bytes:
        running = checkpoint.running
        head = {
            "stream": self._stream,
            "table_id": checkpoint.table_id,
            "position": checkpoint.position,
            "records": checkpoint.records,
            "announced": checkpoint.announced.hex(),
            "hands": checkpoint.hands,
            "encrypted_hands": checkpoint.encrypted_hands,
            "decks": checkpoint.decks,
            "seals": checkpoint.seals,
            "snapshot_version": checkpoint.snapshot_version,
            "running": None
            if running is None
            else {
                "hand_id": running.hand_id,
                "players": {str(seat): player for seat, player in running.players.items()},
                "announced": running.announced.hex(),
                "sealed": running.sealed,
                "events": [event.SerializeToString().hex() for event in running.events],
            },
        }
        raw = json.dumps(head, sort_keys=True).encode()
        table = encode_table(checkpoint.state, CommandIndex(), checkpoint.chain)
        return _LENGTH.pack(len(raw)) + raw + table

    def _decode(self, table_id: str, body: bytes) -> Checkpoint | None:
        (length,) = _LENGTH.unpack_from(body)
        head = json.loads(body[_LENGTH.size : _LENGTH.size + length])
        if head["stream"] != self._stream or head["table_id"] != table_id:
            return None  # a checkpoint copied from another table or stream
        state, _, chain = decode_table_and_chain(body[_LENGTH.size + length :])
        if chain.last_hash is None or chain.position != head["position"]:
            return None
        running = head["running"]
        hand = None
        if running is not None:
            hand = HandRecord(
                running["hand_id"],
                events=[pb.TableEvent.FromString(bytes.fromhex(e)) for e in running["events"]],
                players={int(seat): player for seat, player in running["players"].items()},
                announced=bytes.fromhex(running["announced"]),
                sealed=bool(running["sealed"]),
            )
        return Checkpoint(
            table_id,
            int(head["position"]),
            int(head["records"]),
            chain,
            state,
            bytes.fromhex(head["announced"]),
            hand,
            int(head["hands"]),
            int(head["encrypted_hands"]),
            bool(head["decks"]),
            bool(head["seals"]),
            int(head["snapshot_version"]),
        )

    def _path(self, table_id: str) -> Path:
        # A table id is one subject token, not a safe file name: its hash is.
        return self.folder / f"{hashlib.sha256(table_id.encode()).hexdigest()[:32]}.ckpt"

    # --- the key ----------------------------------------------------------------------------

    def _existing_key(self) -> bytes | None:
        if self._key is None:
            try:
                key = self._key_path.read_bytes()
            except FileNotFoundError:
                return None
            self._key = key if len(key) == 32 else None
        return self._key

    def _own_key(self) -> bytes:
        key = self._existing_key()
        if key is not None:
            return key
        self._key_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Created once, readable by its owner only; never replaced (that would void every
            # checkpoint made with it, which is safe but costs a verify from scratch).
            descriptor = os.open(self._key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            key = self._existing_key()
            if key is None:
                raise ValueError(f"{self._key_path} is not a checkpoint key") from None
            return key
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        key = self._existing_key()
        assert key is not None
        return key


def _mac(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, b"pokerctl.verify-checkpoint.v1\x00" + body, hashlib.sha256).digest()


def _safe(name: str) -> str:
    """A stream name as a folder name (stream names are letters, digits, ``-`` and ``_``)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "_"
