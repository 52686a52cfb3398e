"""``python -m poker.tools.logkeys``: the table log's writer keys, for operators.

The dealer and the wallet each sign what they append to the table log with their own Ed25519
key and verify the other's with its public key (docs/security/table-log.md). This makes and
derives their keyring files:

    python -m poker.tools.logkeys new-room DIR [--suffix 2027-01]
        # DIR/log-keys-dealer.json (0600), log-keys-wallet.json (0600), log-keys-public.json
    python -m poker.tools.logkeys keypair dealer dealer-2027-06
        # a fresh key pair as a keyring entry (rotation: add it to the dealer's keyring, its
        # public half, without "private", to the wallet's and the public one)
    python -m poker.tools.logkeys public KEYRING [-o OUT]
        # the public keyring of a keyring file (pokerctl's; no private key, no HMAC secret)
    python -m poker.tools.logkeys split OLD DIR --hmac-below N [--suffix S]
        # the migration of a room that shared one HMAC keyring (the wallet's wallet-keys.json,
        # or log-keys.json): new key pairs, the old HMAC keys kept to verify the records below
        # stream position N only; the old ledger key (the wallet's journal) moves into the
        # wallet's file alone

Every file is checked by reading it back (:func:`~poker.eventstore.sealing.load_keyring`); an
existing file is never overwritten.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from poker.eventstore.sealing import (
    SERVICE_KEYRING_FILES,
    Keyring,
    KeyringError,
    ServiceKeyrings,
    Writer,
    WriterKey,
    keyring_document,
    load_keyring,
    new_service_keyrings,
    new_signing_key,
    write_keyring,
    write_service_keyrings,
)


def _refuse_existing(directory: Path) -> None:
    for name in SERVICE_KEYRING_FILES.values():
        if (directory / name).exists():
            raise SystemExit(f"{directory / name} exists: keys are rotated, never overwritten")


def _written(paths: dict[str, Path]) -> None:
    for part, path in paths.items():
        load_keyring(path)  # reads back
        print(f"wrote {path} ({part})")


def new_room(directory: Path, suffix: str | None) -> None:
    """The three keyrings of a new room, signatures only (``hmac_below`` 0)."""
    _refuse_existing(directory)
    _written(write_service_keyrings(directory, new_service_keyrings(suffix)))


def with_hmac(keyring: Keyring, old: Keyring, hmac_below: int) -> Keyring:
    """``keyring`` with ``old``'s table-log HMAC keys beside its own, accepted below
    ``hmac_below`` (never a ledger key: that one is the wallet's, see :func:`with_old_ledger`)."""
    keys = dict(keyring.keys)
    for key in old.keys.values():
        if isinstance(key, WriterKey) and key.writer is not Writer.LEDGER:
            if key.id in keys:
                raise SystemExit(f"key id {key.id!r} is in both keyrings: pick another --suffix")
            keys[key.id] = key
    return Keyring(keys, keyring.sign_with, old.unsealed_before, hmac_below)


def with_old_ledger(wallet: Keyring, old: Keyring) -> Keyring:
    """The wallet's ``wallet`` keyring sealing its journal with ``old``'s ledger key, if
    ``old`` signs with one (the journal's records are sealed with it), its fresh one dropped;
    ``wallet`` itself otherwise. Older ledger keys of ``old`` are kept to verify."""
    if not old.has_signer(Writer.LEDGER):
        return wallet
    keys = {k: key for k, key in wallet.keys.items() if key.writer is not Writer.LEDGER}
    for key in old.keys.values():
        if key.writer is Writer.LEDGER:
            keys[key.id] = key
    sign_with = {**wallet.sign_with, Writer.LEDGER: old.sign_with[Writer.LEDGER]}
    return Keyring(keys, sign_with, wallet.unsealed_before, wallet.hmac_below)


def split(old_path: Path, directory: Path, hmac_below: int, suffix: str | None) -> None:
    """A shared HMAC keyring's room moved to key pairs (docs/security/table-log.md)."""
    _refuse_existing(directory)
    old = load_keyring(old_path)
    fresh = new_service_keyrings(suffix)
    # The public file cannot hold an HMAC secret: below hmac_below it checks the chain only.
    public = Keyring(fresh.public.keys, {}, old.unsealed_before, hmac_below)
    wallet = with_old_ledger(with_hmac(fresh.wallet, old, hmac_below), old)
    rings = ServiceKeyrings(with_hmac(fresh.dealer, old, hmac_below), wallet, public)
    _written(write_service_keyrings(directory, rings))


def keypair(writer: str, key_id: str) -> None:
    """A fresh key pair, printed as a keyring entry (with its private half)."""
    try:
        key = new_signing_key(key_id, Writer(writer))
    except ValueError as error:
        raise SystemExit(str(error)) from None
    ring = Keyring({key.id: key}, {})
    print(json.dumps(keyring_document(ring)["keys"][0], indent=2))


def public(path: Path, out: Path | None) -> None:
    """The public keyring of the keyring at ``path``."""
    ring = load_keyring(path).public()
    if not ring.keys:
        raise SystemExit(f"{path} holds no Ed25519 key: nothing public to derive")
    if out is None:
        print(json.dumps(keyring_document(ring), indent=2))
        return
    if out.exists():
        raise SystemExit(f"{out} exists: never overwritten")
    _written({"public": write_keyring(ring, out, mode=0o644)})


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m poker.tools.logkeys", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    room = commands.add_parser("new-room", help="the three keyrings of a new room")
    room.add_argument("directory", type=Path)
    room.add_argument("--suffix", help="the key ids' suffix (default: random)")
    pair = commands.add_parser("keypair", help="a fresh key pair as a keyring entry")
    pair.add_argument("writer", choices=[Writer.DEALER.value, Writer.WALLET.value])
    pair.add_argument("key_id")
    derive = commands.add_parser("public", help="the public keyring of a keyring")
    derive.add_argument("keyring", type=Path)
    derive.add_argument("-o", "--out", type=Path)
    migrate = commands.add_parser("split", help="move a shared HMAC keyring to key pairs")
    migrate.add_argument("old", type=Path)
    migrate.add_argument("directory", type=Path)
    migrate.add_argument("--hmac-below", type=int, required=True)
    migrate.add_argument("--suffix")
    options = parser.parse_args(argv)
    try:
        if options.command == "new-room":
            new_room(options.directory, options.suffix)
        elif options.command == "keypair":
            keypair(options.writer, options.key_id)
        elif options.command == "public":
            public(options.keyring, options.out)
        else:
            split(options.old, options.directory, options.hmac_below, options.suffix)
    except KeyringError as error:
        raise SystemExit(str(error)) from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
