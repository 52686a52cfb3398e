"""pokerctl's log commands against a NATS nobody answers: one sentence and exit status 1, not a
hang (nats-py read ``max_reconnect_attempts=0`` as no limit while picking a server)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("command", [["replay", "t-abc"], ["verify", "t-abc"]])
def test_a_log_command_on_an_unreachable_nats_fails_with_one_sentence(
    command: list[str], tmp_path: Path
) -> None:
    url = f"nats://127.0.0.1:{_closed_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "poker.tools.pokerctl", *command, "--nats-url", url],
        cwd=ROOT,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,  # a bound on the test, not a wait: the command ends in seconds
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be reached" in lines[0], done.stderr
