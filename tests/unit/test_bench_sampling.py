"""The benchmark's stage profile (bench/sampling.py): how py-spy's samples become stages."""

from __future__ import annotations

from collections import Counter

import pytest

from bench import sampling

PLAY = "Play (poker/dealer/grpc_api.py:380)"
LOOP = "_run_once (asyncio/base_events.py:1922)"


@pytest.mark.parametrize(
    ("leaf", "stage"),
    [
        ("execute (poker/engine/table/decide.py:9)", "rules"),
        ("table_view (poker/dealer/replies.py:430)", "view"),
        ("_framed_mac (poker/eventstore/sealing.py:150)", "seal (MAC)"),
        ("msg (structlog/_output.py:180)", "log"),
        ("inc (prometheus_client/values.py:20)", "metrics"),
        ("_checked_requests (poker/servicekit/decoding.py:80)", "decode (request)"),
        ("_request_new_style (nats/aio/client.py:1170)", "NATS client"),
    ],
)
def test_a_sample_is_charged_to_its_innermost_named_frame(leaf: str, stage: str) -> None:
    assert sampling.classify([LOOP, PLAY, leaf]) == stage


def test_a_sample_in_the_handler_itself_is_glue_and_one_in_the_loop_is_the_loop() -> None:
    assert sampling.classify([LOOP, PLAY]) == "dealer glue"
    assert sampling.classify([LOOP]) == "event loop (asyncio)"
    assert sampling.classify(["mystery (nowhere.c)"]) == "other"


def test_grpcs_poller_thread_counts_as_the_transport() -> None:
    frames = ["_bootstrap (threading.py:1002)", "Thread.run (threading.py:982)"]
    assert sampling.classify(frames) == "gRPC (transport in and out)"


def test_threads_waiting_in_the_kernel_are_not_cpu() -> None:
    lines = [
        f"thread (1): MainThread;{LOOP};{PLAY};execute (poker/engine/table/decide.py:9) 30\n",
        f"thread (1): MainThread;{LOOP};select (selectors.py:415);poll (libc.so.6) 50\n",
        "thread (2): Thread-1;Thread.run (threading.py:982) 10\n",
        "not a sample line\n",
    ]
    assert sampling.parse(lines) == Counter({"rules": 30, "gRPC (transport in and out)": 10})


def test_stage_shares_of_the_cpu_per_append_add_up_to_it() -> None:
    stages = sampling.per_append(Counter(rules=30, log=10), cpu_ms_per_append=0.8)
    assert stages == {"rules": pytest.approx(600.0), "log": pytest.approx(200.0)}
    assert sampling.per_append(Counter(), 0.8) == {}
