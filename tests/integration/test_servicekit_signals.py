"""SIGTERM stops a real service process gracefully: in-flight calls finish, hooks run, exit 0."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.tokens import Role, issue_token
from tests.integration.servicekit_app import method

REPO = Path(__file__).resolve().parents[2]
START_BOUND_S = 20.0


async def read_port(child: asyncio.subprocess.Process) -> int:
    assert child.stdout is not None
    line = await asyncio.wait_for(child.stdout.readline(), timeout=START_BOUND_S)
    words = line.decode().split()
    assert words[:1] == ["port"], f"unexpected first line {line!r}"
    return int(words[1])


async def test_sigterm_finishes_the_in_flight_call_runs_the_hooks_and_exits_zero() -> None:
    secret = secrets.token_bytes(32)
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.integration.servicekit_app",
        secret.hex(),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = await read_port(child)
        metadata = bearer_metadata(issue_token(secret, subject="p", role=Role.PLAYER))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            sleep: Any = channel.unary_unary(method("Sleep"))

            async def sleep_call() -> bytes:
                answer: bytes = await sleep(b"0.6", metadata=metadata, timeout=10)
                return answer

            in_flight = asyncio.create_task(sleep_call())
            await asyncio.sleep(0.3)  # the call is being served
            os.kill(child.pid, signal.SIGTERM)
            assert await in_flight == b"slept"
        assert await asyncio.wait_for(child.wait(), timeout=10) == 0
        assert child.stdout is not None
        output = (await child.stdout.read()).decode().splitlines()
        assert output == ["hook last-registered", "hook first-registered"]
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
