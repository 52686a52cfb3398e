"""poker.testing.service_process: the ready line, a failed start, a graceful stop."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from poker.testing.service_process import ServiceProcess

READY = re.compile(r"demo listening grpc=(\S+)")


def test_reads_the_address_and_stops(tmp_path: Path) -> None:
    script = "import time; print('demo listening grpc=127.0.0.1:5 x', flush=True); time.sleep(60)"
    process = ServiceProcess([sys.executable, "-c", script], tmp_path / "log", ready=READY)
    process.start()
    try:
        assert process.address == "127.0.0.1:5"
        assert process.cpu_seconds() >= 0
    finally:
        process.stop()
    assert process.process is not None and process.process.poll() is not None


def test_another_line_is_a_failed_start(tmp_path: Path) -> None:
    script = "print('boom', flush=True)"
    process = ServiceProcess(
        [sys.executable, "-c", script], tmp_path / "log", ready=READY, name="the demo"
    )
    with pytest.raises(RuntimeError, match="the demo did not start"):
        process.start()


def test_a_silent_child_fails_the_start_and_is_killed(tmp_path: Path) -> None:
    script = "import time; time.sleep(60)"
    process = ServiceProcess(
        [sys.executable, "-c", script], tmp_path / "log", ready=READY, start_timeout_s=0.5
    )
    with pytest.raises(RuntimeError, match=r"did not start within 0\.5 s: no line"):
        process.start()
    assert process.process is not None and process.process.poll() is not None
