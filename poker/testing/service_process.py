"""A service (``python -m poker.dealer`` / ``poker.wallet``) as a child process, for tests
and benchmarks: started, waited for until it prints its ready line (``... grpc=<address>``),
stopped with SIGTERM (SIGKILL if it lingers) or killed outright. The ready line is awaited
with a deadline: a child that hangs before it prints fails the start instead of the test run.

>>> process = ServiceProcess(["true"], Path("/dev/null"), ready=re.compile(r"grpc=(\\S+)"))
>>> process.address, process.process is None
('', True)
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]


def harness_log_keys_file(directory: Path | None = None, service: str = "dealer") -> Path:
    """The test harnesses' log keyring of ``service`` (``dealer`` or ``wallet``:
    :func:`poker.testing.dealer.harness_keyring`) as a new file (mode 0600) in ``directory``
    (default: the temporary directory), for ``--log-keys`` of a service started as a process."""
    from poker.eventstore.sealing import Writer, write_keyring
    from poker.testing.dealer import harness_keyring  # the services' code, not this helper's

    folder = directory if directory is not None else Path(tempfile.gettempdir())
    name = f"log-keys-{service}-{uuid.uuid4().hex[:12]}.json"
    return write_keyring(harness_keyring(Writer(service)), folder / name)


def harness_deck_key_file(directory: Path | None = None) -> Path:
    """The test dealers' deck keys (:data:`poker.testing.dealer.TEST_DECK_KEYS`) as a new file
    (mode 0600) in ``directory`` (default: the temporary directory), for ``--deck-key``."""
    from poker.tablelog.secrets import write_deck_keys
    from poker.testing.dealer import TEST_DECK_KEYS

    folder = directory if directory is not None else Path(tempfile.gettempdir())
    return write_deck_keys(TEST_DECK_KEYS, folder / f"deck-key-{uuid.uuid4().hex[:12]}.json")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ServiceProcess:
    """``args`` as a child process of ``cwd`` (the repository), stderr appended to ``log``.

    :meth:`start` reads the first stdout line and takes :attr:`address` from the first group of
    ``ready``; another line, or none within ``start_timeout_s``, stops the process and raises
    ``RuntimeError`` naming ``name``. ``env`` is added to this process's environment.
    """

    def __init__(
        self,
        args: list[str],
        log: Path,
        *,
        ready: re.Pattern[str],
        name: str = "the service",
        stop_timeout_s: float = 15.0,
        kill_timeout_s: float | None = 10.0,
        start_timeout_s: float = 30.0,
        cwd: Path = ROOT,
        env: dict[str, str] | None = None,
    ) -> None:
        self.args = args
        self.log = log
        self.ready = ready
        self.name = name
        self.stop_timeout_s = stop_timeout_s
        self.kill_timeout_s = kill_timeout_s
        self.start_timeout_s = start_timeout_s
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[str] | None = None
        self.address = ""

    def start(self) -> None:
        """Start and wait (at most :attr:`start_timeout_s`) for the ready line."""
        with self.log.open("a") as stderr:
            self.process = subprocess.Popen(
                self.args,
                cwd=self.cwd,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env=self.env,
            )
        line = self._first_line()
        match = self.ready.search(line) if line is not None else None
        if match is None:
            self.kill()
            what = "no line" if line is None else repr(line)
            raise RuntimeError(
                f"{self.name} did not start within {self.start_timeout_s} s: {what}; see {self.log}"
            )
        self.address = match.group(1)

    def _first_line(self) -> str | None:
        """The child's first stdout line, or None if none came in time. A pipe read cannot
        time out, so a daemon thread reads it; killing the child ends that read."""
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        lines: queue.Queue[str] = queue.Queue(maxsize=1)
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            return lines.get(timeout=self.start_timeout_s)
        except queue.Empty:
            return None

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process so far (Linux /proc)."""
        assert self.process is not None
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        """SIGTERM (a graceful stop, which also writes a profile), then SIGKILL."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=self.stop_timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=self.kill_timeout_s)

    def kill(self) -> None:
        """SIGKILL (a crash: nothing is flushed or released) and reap."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=self.kill_timeout_s)

    def wait_exit(self, timeout_s: float) -> int:
        """The exit code, waiting at most ``timeout_s``."""
        assert self.process is not None
        return self.process.wait(timeout=timeout_s)
