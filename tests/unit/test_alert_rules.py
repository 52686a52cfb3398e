"""deploy/prometheus/alerts.yml: every alert has a promtool unit test, a summary, a severity and a
runbook section; and the promtool tests pass.

``promtool`` comes with Debian's ``prometheus`` package. Without it the promtool checks skip,
saying so, unless ``POKER_REQUIRE_PROMTOOL=1`` (``.ci/run`` sets it after installing the
package), where a missing promtool fails instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
PROMTOOL_TESTS = sorted((ROOT / "deploy" / "prometheus" / "tests").glob("*.yml"))
RUNBOOK = ROOT / "docs" / "runbook.md"
SEVERITIES = {"page", "warn", "info"}


def _rules() -> list[dict[str, Any]]:
    loaded = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in loaded["groups"] for rule in group["rules"] if "alert" in rule]


RULES = _rules()
ALERT_NAMES = [rule["alert"] for rule in RULES]


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("POKER_REQUIRE_PROMTOOL") == "1":
            pytest.fail("POKER_REQUIRE_PROMTOOL=1 but promtool is not installed")
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus; .ci/run does)")
    return found


def test_alert_names_are_unique() -> None:
    assert len(ALERT_NAMES) == len(set(ALERT_NAMES))
    assert len(ALERT_NAMES) >= 20


@pytest.mark.parametrize("rule", RULES, ids=ALERT_NAMES)
def test_every_alert_has_a_severity_a_summary_and_its_runbook_url(rule: dict[str, Any]) -> None:
    assert rule["labels"]["severity"] in SEVERITIES
    annotations = rule["annotations"]
    assert annotations["summary"]
    assert annotations["runbook_url"] == f"docs/runbook.md#{rule['alert'].lower()}"


def test_the_runbook_has_a_section_for_every_alert_and_no_other() -> None:
    headings = re.findall(r"^### (\w+)\s*$", RUNBOOK.read_text(encoding="utf-8"), re.M)
    assert sorted(headings) == sorted(ALERT_NAMES)


def _tested_alerts() -> dict[str, tuple[bool, bool]]:
    """``{alert: (tested firing, tested quiet)}`` over the promtool test files."""
    seen: dict[str, tuple[bool, bool]] = {}
    for path in PROMTOOL_TESTS:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert loaded["rule_files"] == ["../alerts.yml"], path.name
        for case in loaded["tests"]:
            for check in case.get("alert_rule_test", []):
                fires, quiet = seen.get(check["alertname"], (False, False))
                if check.get("exp_alerts"):
                    fires = True
                else:
                    quiet = True
                seen[check["alertname"]] = (fires, quiet)
    return seen


def test_every_alert_has_a_promtool_test_that_fires_it_and_one_that_does_not() -> None:
    tested = _tested_alerts()
    assert set(tested) - set(ALERT_NAMES) == set(), "tests of alerts that do not exist"
    for name in ALERT_NAMES:
        assert tested.get(name) == (True, True), f"{name}: firing and quiet cases wanted"


def test_promtool_checks_the_rules() -> None:
    promtool = _promtool()
    checked = subprocess.run(
        [promtool, "check", "rules", str(ALERTS)],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_promtool_unit_tests_pass() -> None:
    promtool = _promtool()
    tested = subprocess.run(
        [promtool, "test", "rules", *map(str, PROMTOOL_TESTS)],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
