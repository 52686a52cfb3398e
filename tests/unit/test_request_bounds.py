"""The bounds tables of both services: complete, written into the docs as they are, and the
limits that keep later arithmetic inside int64."""

from __future__ import annotations

from pathlib import Path

from google.protobuf.duration_pb2 import Duration

from poker.dealer import bounds as dealer_bounds
from poker.engine.betting import Stakes, Structure
from poker.engine.table.config import default_buy_ins
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet import bounds as wallet_bounds

DOCS = Path(__file__).resolve().parents[2] / "docs" / "security" / "inputs.md"
INT64_MAX = 2**63 - 1


def test_every_request_field_of_both_services_has_a_limit() -> None:
    """No number, string or repeated field of any request of either service goes unchecked."""
    assert dealer_bounds.DEALER_BOUNDS.uncovered(dealer_bounds.request_types()) == []
    assert wallet_bounds.WALLET_BOUNDS.uncovered(wallet_bounds.request_types()) == []


def test_the_docs_show_the_limits_the_services_check() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert dealer_bounds.markdown_rows() in text
    assert wallet_bounds.markdown_rows() in text


def test_the_limits_keep_deadlines_buy_ins_and_pots_far_inside_int64() -> None:
    now_ms = 4_102_444_800_000  # 2100-01-01
    assert now_ms + dealer_bounds.DAY_MS < INT64_MAX
    top = dealer_bounds.MAX_STAKE
    for structure in Structure:
        low, high = default_buy_ins(structure, Stakes(top, top, top, top, top, (top,), top))
        assert low <= dealer_bounds.MAX_CHIPS
        assert high is None or high <= dealer_bounds.MAX_CHIPS
    # Every seat's buy-in and every top-up at the maximum still sums far below int64.
    assert dealer_bounds.MAX_SEATS * dealer_bounds.MAX_CHIPS * 1000 < INT64_MAX


def test_a_rake_schedule_may_not_exceed_its_pot() -> None:
    assert dealer_bounds.rake_problem(pb.RakeSchedule(per=20, step=1, minimum_pot=20)) is None
    assert "per must be at least 1" in str(dealer_bounds.rake_problem(pb.RakeSchedule(per=0)))
    assert "step may not exceed per" in str(
        dealer_bounds.rake_problem(pb.RakeSchedule(per=1, step=2))
    )
    assert "band_rake may not exceed minimum_pot" in str(
        dealer_bounds.rake_problem(pb.RakeSchedule(per=1, step=1, band_rake=5, minimum_pot=2))
    )


def test_durations_out_of_range_are_refused_by_both_services() -> None:
    """DrainTableRequest.timeout and PlaceHoldRequest.ttl: a negative span (seconds or nanos),
    nanos of a second or more, or more seconds than the cap are each named, nothing else is."""

    def drain(timeout: Duration) -> str | None:
        return dealer_bounds.DEALER_BOUNDS.first_problem(
            dpb.DrainTableRequest(table_id="t-1", timeout=timeout)
        )

    def hold(ttl: Duration) -> str | None:
        return wallet_bounds.WALLET_BOUNDS.first_problem(
            wpb.PlaceHoldRequest(hold_id="h1", player_id="ann", amount=1, ttl=ttl)
        )

    hostile = [
        Duration(seconds=-1),
        Duration(nanos=-1),
        Duration(nanos=1_000_000_000),
        Duration(seconds=2**40),
    ]
    for check in (drain, hold):
        for duration in hostile:
            assert check(duration) is not None, (check.__name__, duration)
        assert check(Duration(seconds=60)) is None
        assert check(Duration()) is None  # unset: the service's default
    assert drain(Duration(seconds=601)) is not None
    assert hold(Duration(seconds=wallet_bounds.MAX_HOLD_TTL_MS // 1000 + 1)) is not None
