"""The fault tests' child processes: whatever a test starts is killed (-9) when it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from poker.testing.service_process import ServiceProcess


@pytest.fixture
def processes() -> Iterator[list[ServiceProcess]]:
    """Append every process started; each still running at the end is killed and reaped."""
    started: list[ServiceProcess] = []
    try:
        yield started
    finally:
        for process in started:
            process.kill()
