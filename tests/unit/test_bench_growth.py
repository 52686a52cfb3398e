"""The growth benchmark's slope: a least-squares line over the sizes (bench/growth.py)."""

from __future__ import annotations

import pytest

from bench.growth import curve, fit, sizes


def test_two_sizes_give_the_line_through_them() -> None:
    slope, intercept = fit([(50.0, 2.5), (500.0, 7.0)])
    assert slope == pytest.approx(0.01)
    assert intercept == pytest.approx(2.0)


def test_a_flat_cost_has_a_zero_slope() -> None:
    assert fit([(10.0, 3.0), (100.0, 3.0), (1000.0, 3.0)]) == pytest.approx((0.0, 3.0))


def test_more_sizes_are_fitted_by_least_squares() -> None:
    # y = 2x + 1 with noise that cancels out: the fit recovers the line.
    slope, intercept = fit([(0.0, 1.5), (1.0, 2.5), (2.0, 4.5), (3.0, 7.5)])
    assert slope == pytest.approx(2.0)
    assert intercept == pytest.approx(1.0)


def test_one_size_has_no_slope() -> None:
    with pytest.raises(ValueError, match="two distinct sizes"):
        fit([(50.0, 1.0), (50.0, 2.0)])


def test_a_curve_reports_each_size_and_the_slope_per_unit() -> None:
    results = curve(
        "growth.x", "ms", {50: 100.0, 500: 1000.0}, what="tables", per=1000.0, per_unit="1,000 t"
    )
    assert [(r.name, r.value, r.unit) for r in results] == [
        ("growth.x.50_tables", 100.0, "ms"),
        ("growth.x.500_tables", 1000.0, "ms"),
        ("growth.x.slope", pytest.approx(2000.0), "ms per 1,000 t"),
    ]


def test_the_scale_multiplies_the_larger_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_GROWTH_SCALE", raising=False)
    assert sizes((50, 500)) == (50, 500)
    monkeypatch.setenv("BENCH_GROWTH_SCALE", "10")
    assert sizes((50, 500)) == (50, 5000)
