"""Write the credentials a deployment needs, fresh, into one directory (never committed).

    PYTHONPATH=. .venv/bin/python deploy/compose/make_secrets.py deploy/compose/secrets

writes, each mode 0600 (as root, also owned by the image's user, uid 10001):

- ``nats-passwords.conf``: ``DEALER_PASSWORD``, ``WALLET_PASSWORD``, ``ADMIN_PASSWORD`` and
  ``WALLET_ADMIN_PASSWORD``, the
  variables the NATS nodes' config includes (plaintext here; for a real deployment put bcrypt
  hashes there, see docs/security/nats.md);
- ``nats-cluster.conf``: the nodes' ``cluster`` block, with the routes' own user and password
  (NATS does not expand variables inside the route URLs, so the block is generated whole), for
  the route hosts given (``--route-host``, default the compose file's nats-1, nats-2, nats-3);
- ``dealer-nats.json``, ``wallet-nats.json``, ``admin-nats.json``, ``wallet-admin-nats.json``:
  each user's credentials file (``--nats-credentials``; the two admins' for the provisioning);
- ``log-keys-dealer.json``, ``log-keys-wallet.json``: the keyrings sealing the table log and
  the snapshots (``--log-keys``): each service's own Ed25519 key pair and the other's public
  key, so neither can write as the other; the wallet's also holds the ledger key sealing its
  journal, which no dealer holds (docs/security/journal.md); ``log-keys-public.json``: both
  public keys, for ``pokerctl`` and audits (docs/security/table-log.md);
- ``token-keys.json``: the public bearer-token ring (``--token-keys`` of both services): the
  Ed25519 public keys of every issuer, each naming the roles it may sign; it signs nothing;
- ``dealer-token-key.json``: the dealers' own private token key (``--token-signing-key`` of
  every dealer): it signs ``dealer`` tokens only, never mounted into a wallet;
- ``payments-token-key.json``, ``login-token-key.json``, ``operator-token-key.json``: the
  private keys of the payments service (cashier tokens), the login service (player tokens) and
  the operators' ``pokerctl --token-keys`` (operator tokens), for those issuers' hosts only:
  no service mounts them (docs/security/tokens.md);
- ``deck-key.json``: the deck key ring that encrypts every hand's deck, seeds and private cards
  in the table log and the dealers' snapshots (``--deck-key``): the dealers' (and the
  operator's, for audits) only, never mounted into a wallet.

The Kubernetes manifests read the same files as Secrets (deploy/k8s/README.md). An existing
directory's files are kept unless ``--force``: rotating keys is a procedure
(docs/security/table-log.md, docs/security/tokens.md), not a re-run of this script.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from poker.eventstore.sealing import new_service_keyrings, service_keyring_texts
from poker.servicekit.tokens import Role, TokenKey, TokenKeyring, public_ring
from poker.tablelog.secrets import DeckKeys

#: The uid and gid of the image's user (deploy/docker/Dockerfile).
IMAGE_UID = 10001

#: The NATS users: the services' and each account's admin (TABLES: admin, WALLET: wallet-admin).
USERS = ("dealer", "wallet", "admin", "wallet-admin")


def _password() -> str:
    return secrets.token_urlsafe(24)


#: The route hosts of deploy/compose/compose.yaml.
COMPOSE_ROUTE_HOSTS = ("nats-1", "nats-2", "nats-3")


def cluster_block(route_hosts: Sequence[str], password: str) -> str:
    """The ``cluster`` block of every node: routes authenticate as the user ``route``."""
    routes = "".join(f'    "nats-route://route:{password}@{host}:6222"\n' for host in route_hosts)
    return (
        "cluster {\n"
        "  name: poker\n"
        "  listen: 0.0.0.0:6222\n"
        f'  authorization {{\n    user: route\n    password: "{password}"\n  }}\n'
        f"  routes: [\n{routes}  ]\n"
        "}\n"
    )


def secret_files(route_hosts: Sequence[str] = COMPOSE_ROUTE_HOSTS) -> dict[str, str]:
    """``{file name: content}`` of a fresh set of credentials."""
    passwords = {user: _password() for user in USERS}
    files = {
        "nats-passwords.conf": "".join(
            f'{user.upper().replace("-", "_")}_PASSWORD: "{password}"\n'
            for user, password in passwords.items()
        ),
        "nats-cluster.conf": cluster_block(route_hosts, _password()),
    }
    for user, password in passwords.items():
        files[f"{user}-nats.json"] = json.dumps({"user": user, "password": password}) + "\n"
    files.update(service_keyring_texts(new_service_keyrings()))
    files.update(token_key_files())
    files["deck-key.json"] = json.dumps(DeckKeys.generate().document(), indent=2) + "\n"
    return files


#: The token issuers (file name prefix) and the one role each one's key signs.
TOKEN_ISSUERS = {
    "dealer": Role.DEALER,
    "payments": Role.CASHIER,
    "login": Role.PLAYER,
    "operator": Role.OPERATOR,
}


def token_key_files() -> dict[str, str]:
    """Each issuer's private token key (``<issuer>-token-key.json``) and the public ring of
    them all (``token-keys.json``), fresh."""
    stamp = secrets.token_hex(3)
    rings = {
        issuer: TokenKeyring(None, {f"{issuer}-{stamp}": TokenKey.generate([role])})
        for issuer, role in TOKEN_ISSUERS.items()
    }
    files = {f"{issuer}-token-key.json": ring.to_json() + "\n" for issuer, ring in rings.items()}
    files["token-keys.json"] = public_ring(rings.values()).to_json() + "\n"
    return files


def write(directory: Path, files: dict[str, str], *, force: bool) -> list[Path]:
    """Write ``files`` into ``directory`` (0600 each); returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in files.items():
        path = directory / name
        if path.exists() and not force:
            continue
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(content)
        path.chmod(0o600)
        if os.geteuid() == 0:
            # Compose bind-mounts these files as they are: the services' user must own them.
            os.chown(path, IMAGE_UID, IMAGE_UID)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: the directory, and ``--force`` to replace existing files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--force", action="store_true", help="replace existing files")
    parser.add_argument(
        "--route-host",
        action="append",
        dest="route_hosts",
        help="a NATS node's host name for the routes (repeat; default nats-1, nats-2, nats-3)",
    )
    options = parser.parse_args(argv)
    hosts = options.route_hosts or COMPOSE_ROUTE_HOSTS
    files = secret_files(hosts)
    if (options.directory / "token-keys.json").exists() and not options.force:
        # The token keys are one set: new issuer keys beside an old ring would not verify.
        files = {name: text for name, text in files.items() if "token-key" not in name}
    written = write(options.directory, files, force=options.force)
    for path in written:
        print(f"wrote {path}")
    if written and os.geteuid() != 0:
        print(
            f"the services run as uid {IMAGE_UID}: sudo chown {IMAGE_UID}:{IMAGE_UID} "
            f"{options.directory}/*",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
