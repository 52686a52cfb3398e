"""`make run` cannot lie: devrun refuses to start when one of its ports is taken, and waits for
each child on its own port while that child is alive (a child that died is named, not printed
as up)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from poker.tools.devrun import accounts_line, check_ports_free, port_taken, wait_until_listening


def _listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_taken_port_stops_it_before_anything_starts() -> None:
    with _listener() as sock:
        address = sock.getsockname()
        assert port_taken(address)
        with pytest.raises(SystemExit) as stopped:
            check_ports_free({address: "NATS"})
    message = str(stopped.value)
    assert f"port {address[1]} on 127.0.0.1 (NATS) is already in use" in message
    assert "nothing was started" in message


def test_free_ports_pass() -> None:
    with _listener() as sock:
        address = sock.getsockname()
    assert not port_taken(address)
    check_ports_free({address: "NATS"})


def test_a_child_that_dies_is_named_not_reported_up() -> None:
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    try:
        with pytest.raises(SystemExit, match="nats-server exited with code 3 before listening"):
            wait_until_listening(("127.0.0.1", 9), child, "nats-server", timeout_s=20)
    finally:
        child.wait()


def test_a_child_listening_on_its_port_is_up() -> None:
    with _listener() as probe:
        port = probe.getsockname()[1]
    code = (
        "import socket, time\n"
        f"s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(30)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_until_listening(("127.0.0.1", port), child, "the dealer", timeout_s=20)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_the_accounts_line_names_the_deposits_that_failed() -> None:
    assert accounts_line([]) == (
        "accounts     alice, bob, carol, dave funded (pokerctl balance <player>)"
    )
    line = accounts_line(["bob", "dave"])
    assert line.startswith("accounts     alice, carol funded")
    assert "NOT funded: bob, dave" in line
