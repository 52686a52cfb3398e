"""The dealer's CPU by stage: py-spy samples of the dealer process during the timed window.

``BENCH_DEALER_STAGES=<directory>`` has the service benchmark run ``py-spy record`` on the
dealer for exactly the timed window of each play scenario (every thread, read without
stopping the process: C code such as protobuf's counts for the Python frame calling it), and
classify each sample by the first frame, from the leaf up, that a :data:`STAGES` rule names.
Each stage's share of the samples times the measured CPU per append is the stage's CPU per
append: a profile that needs no timer in the product (whose own cost would be part of what it
measures) and that also sees the time outside our code (the transport, the event loop).

py-spy samples at :data:`RATE` Hz: a few thousand samples per scenario, so a stage of 2 % is
known to about ±0.3 %. (Native frames would need the process stopped for every sample, which
here halved the dealer's rate and inflated every system call tenfold: not used.)

>>> classify(["Play (poker/dealer/grpc_api.py:380)", "execute (poker/engine/table/decide.py:9)"])
'rules'
>>> classify(["_run_once (asyncio/base_events.py:1)", "select (selectors.py:1)"])
'event loop (asyncio)'
>>> classify(["mystery (nowhere.c)"])
'other'
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ENV: Final = "BENCH_DEALER_STAGES"
RATE: Final = 500
#: py-spy (a development dependency): the one beside this interpreter unless said otherwise.
PY_SPY: Final = os.environ.get("BENCH_PY_SPY", str(Path(sys.executable).with_name("py-spy")))

#: (stage, pattern): a sample belongs to the stage of the first frame, from the leaf up, that a
#: pattern matches (``function (file:line)`` as py-spy writes frames). Order matters only
#: within one frame; the leaf-most match wins, so a stage called from another (the seal inside
#: the encode) is charged to itself.
STAGES: Final[tuple[tuple[str, str], ...]] = (
    ("auth", r"poker/servicekit/(auth|tokens)\.py"),
    ("log", r"structlog/|poker/servicekit/logging\.py|logging/__init__\.py"),
    ("metrics", r"prometheus_client/|poker/dealer/metrics\.py|poker/tablelog/metrics\.py"),
    ("seal (MAC)", r"poker/tablelog/seals\.py|poker/eventstore/sealing\.py|hmac\.py"),
    ("hash chain", r"poker/tablelog/chain\.py"),
    (
        "view",
        r"poker/dealer/replies\.py|table_view|seat_views|ViewCache"
        r"|poker/dealer/redaction\.py",
    ),
    (
        "encode (envelopes, batch)",
        r"envelopes \(|poker/engine/wire|TableCodec\.encode"
        r"|encode \(poker/tablelog/codec\.py",
    ),
    ("rules", r"poker/engine/"),
    ("command index", r"poker/tablelog/command_ids\.py"),
    ("snapshot", r"poker/tablelog/snapshot_codec\.py|poker/eventstore/snapshots\.py"),
    ("append (our side)", r"poker/eventstore/(jetstream|aggregate)\.py"),
    (
        "bounds and request",
        r"poker/dealer/bounds\.py|poker/dealer/wire\.py|poker/servicekit/bounds",
    ),
    ("decode (request)", r"_checked_requests \("),
    ("reply (serialize and send)", r"_checked_stream\.<locals>\.stream|_around_stream\.<locals>"),
    ("dealer glue", r"poker/dealer/|poker/tablelog/|poker/servicekit/"),
    ("NATS client", r"nats/"),
    # gRPC's poller thread shows no Python frame of its own: its C core at work.
    ("gRPC (transport in and out)", r"grpc/|grpc_|cygrpc|_cython|Thread\.run \(threading\.py"),
    ("protobuf (C)", r"upb_|_upb|google/protobuf"),
    ("event loop (asyncio)", r"asyncio/|selectors\.py|uvloop|epoll"),
    ("garbage collector", r"gc_collect|_PyGC|collect_main|gc_collect_main"),
)
_COMPILED: Final = tuple((stage, re.compile(pattern)) for stage, pattern in STAGES)


def directory() -> Path | None:
    """Where the samples go, or None unless the environment asks for a profile."""
    value = os.environ.get(ENV)
    return Path(value) if value else None


@dataclass(slots=True)
class Sampler:
    """``py-spy record`` on one process, started and stopped around a timed window."""

    pid: int
    out: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Begin sampling every thread of :attr:`pid`."""
        args = [PY_SPY, "record", "--pid", str(self.pid), "--rate", str(RATE)]
        args += ["--format", "raw", "--threads", "--nonblocking", "-o", str(self.out)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        """End sampling (py-spy writes its file on SIGINT)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def classify(frames: Sequence[str]) -> str:
    """The stage of one sample: its frames root first, leaf last."""
    for frame in reversed(frames):
        for stage, pattern in _COMPILED:
            if pattern.search(frame):
                return stage
    return "other"


#: A sample whose leaf is one of these waits in the kernel: the thread is idle, not on a CPU
#: (py-spy leaves most of them out by itself; these are the ones it misses).
_WAITS: Final = re.compile(
    r"^(epoll_wait|epoll_pwait|poll|ppoll|select|pselect6?|pthread_cond_(timed)?wait"
    r"|sem_(timed)?wait|futex_wait|__futex\w*|nanosleep|clock_nanosleep|accept4?) \("
)


def idle(frames: Sequence[str]) -> bool:
    """Whether a sample (frames root first) is a thread waiting in the kernel.

    >>> idle(["run (x.py:1)", "epoll_wait (libc.so.6)"]), idle(["run (x.py:1)"])
    (True, False)
    """
    return bool(frames) and _WAITS.match(frames[-1]) is not None


def parse(lines: Iterable[str]) -> Counter[str]:
    """Samples on a CPU by stage, from py-spy's raw (collapsed) format:
    ``frame;frame;... count``; samples of threads waiting in the kernel are left out."""
    counts: Counter[str] = Counter()
    for line in lines:
        stack, _, number = line.rstrip("\n").rpartition(" ")
        if not stack or not number.isdigit():
            continue
        frames = [frame for frame in stack.split(";") if not frame.startswith("thread (")]
        if not idle(frames):
            counts[classify(frames)] += int(number)
    return counts


def per_append(counts: Counter[str], cpu_ms_per_append: float) -> dict[str, float]:
    """Each stage's CPU per append (µs), from its share of the samples."""
    total = sum(counts.values())
    if total == 0:
        return {}
    return {stage: 1000 * cpu_ms_per_append * n / total for stage, n in counts.most_common()}
