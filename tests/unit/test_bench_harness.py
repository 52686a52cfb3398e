"""``make bench`` (bench/harness.py): a module that fails is reported, and the others' figures
are still written, with a failing exit status."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from bench import harness
from bench.harness import Result


def _module(run: object) -> types.ModuleType:
    module = types.ModuleType("bench.fake")
    module.run = run  # type: ignore[attr-defined]
    return module


def _broken() -> list[Result]:
    raise RuntimeError("wrong last sequence")


def test_a_failing_module_costs_only_its_own_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "bench.fake_ok", _module(lambda: [Result("a", 1.0, "x/s")]))
    monkeypatch.setitem(sys.modules, "bench.fake_broken", _module(_broken))
    results, failed = harness.run_modules(["fake_broken", "fake_ok"])
    assert [result.name for result in results] == ["a"]
    assert failed == ["fake_broken"]
    printed = capsys.readouterr()
    assert "wrong last sequence" in printed.err
    assert "bench.fake_broken failed" in printed.out


def test_the_figures_are_written_and_the_run_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        harness, "run_modules", lambda names: ([Result("a", 1.0, "x/s")], ["sealing"])
    )
    output = tmp_path / "results.json"
    assert harness.main(["sealing", "--output", str(output)]) == 1
    assert [entry["name"] for entry in json.loads(output.read_text())] == ["a"]
