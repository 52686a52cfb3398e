"""deploy/: the Prometheus, alert and Grafana files name only metrics the services register.

No YAML library in the dev environment: the YAML files are read line by line (``expr:`` lines of
alerts.yml, ``targets:`` lines of prometheus.yml), which deploy/ keeps to one line each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase

from poker.dealer.config import load_settings as dealer_settings
from poker.dealer.metrics import DealerMetrics
from poker.servicekit.jetstream_monitor import JetStreamMetrics
from poker.servicekit.looplag import LoopLagMonitor
from poker.servicekit.observability import GrpcMetrics
from poker.wallet.config import load_settings as wallet_settings
from poker.wallet.metrics import WalletMetrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"

#: A metric selector: the name and, if any, its ``{...}`` matchers.
_SELECTOR = re.compile(r"\b(poker_[a-z0-9_]+)(\{[^}]*\})?")
_MATCHER_LABEL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
#: Labels Prometheus itself adds to every scraped series (job, instance) or to buckets (le).
_TARGET_LABELS = frozenset({"job", "instance", "service"})


def _registered() -> dict[str, frozenset[str]]:
    """Every exposition name the services register -> the labels it may carry."""
    registry = CollectorRegistry()
    dealer, wallet = DealerMetrics(registry), WalletMetrics(registry)
    holders: list[object] = [
        dealer,
        dealer.table_log,  # the table repository's metrics, under each service's own names
        wallet,
        wallet.table_log,
        GrpcMetrics("dealer", registry),
        GrpcMetrics("wallet", registry),
        LoopLagMonitor("dealer", registry),
        LoopLagMonitor("wallet", registry),
        JetStreamMetrics("dealer", registry),
        JetStreamMetrics("wallet", registry),
    ]
    names: dict[str, frozenset[str]] = {}
    for holder in holders:
        for metric in vars(holder).values():
            if not isinstance(metric, MetricWrapperBase):
                continue
            family = next(iter(metric.describe()))
            labels = frozenset(getattr(metric, "_labelnames", ())) | _TARGET_LABELS
            if family.type == "counter":
                names[f"{family.name}_total"] = labels
            elif family.type == "histogram":
                names[f"{family.name}_bucket"] = labels | {"le"}
                names[f"{family.name}_sum"] = labels
                names[f"{family.name}_count"] = labels
            else:
                names[family.name] = labels
    return names


REGISTERED = _registered()


def _dashboard(path: Path) -> dict[str, Any]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])


def _dashboard_exprs(path: Path) -> list[str]:
    return [
        target["expr"] for panel in _panels(_dashboard(path)) for target in panel.get("targets", [])
    ]


def _alert_exprs() -> list[str]:
    exprs = []
    for line in ALERTS.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("expr:"):
            expr = stripped.removeprefix("expr:").strip()
            assert expr and expr[0] not in "|>", f"keep alert expressions on one line: {line!r}"
            exprs.append(expr)
    return exprs


def _unknown(exprs: list[str]) -> list[str]:
    """The metric names and label matchers of ``exprs`` the services do not register."""
    problems = []
    for expr in exprs:
        for match in _SELECTOR.finditer(expr):
            name, matchers = match.group(1), match.group(2) or ""
            if name not in REGISTERED:
                problems.append(f"{name} (in {expr})")
                continue
            problems.extend(
                f"label {label} of {name} (in {expr})"
                for label in _MATCHER_LABEL.findall(matchers)
                if label not in REGISTERED[name]
            )
    return problems


def test_the_registry_lists_the_metrics_of_both_services() -> None:
    assert "poker_dealer_hands_started_total" in REGISTERED
    assert "poker_wallet_tables_stalled" in REGISTERED
    assert "poker_dealer_grpc_request_duration_seconds_bucket" in REGISTERED
    assert REGISTERED["poker_dealer_grpc_requests_total"] >= {"method", "code"}


def test_two_dashboards_are_shipped() -> None:
    assert {path.stem for path in DASHBOARDS} == {"dealer", "wallet"}


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.stem)
def test_dashboard_is_valid_grafana_json(path: Path) -> None:
    dashboard = _dashboard(path)
    assert isinstance(dashboard["schemaVersion"], int)
    assert dashboard["uid"] and dashboard["title"]
    panels = list(_panels(dashboard))
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids)), f"duplicate panel ids in {path.name}"
    for panel in panels:
        grid = panel["gridPos"]
        assert {"h", "w", "x", "y"} <= grid.keys()
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]
            assert all(target["expr"] and target["refId"] for target in panel["targets"])


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.stem)
def test_dashboard_uses_only_registered_metrics(path: Path) -> None:
    exprs = _dashboard_exprs(path)
    assert any(_SELECTOR.search(expr) for expr in exprs)
    assert _unknown(exprs) == []


def test_alert_rules_use_only_registered_metrics() -> None:
    exprs = _alert_exprs()
    assert len(exprs) >= 8
    assert _unknown(exprs) == []


def test_every_poker_name_in_the_alert_file_is_registered() -> None:
    """Also the comments and annotations: a renamed metric must not linger anywhere."""
    names = set(re.findall(r"\bpoker_[a-z0-9_]+", ALERTS.read_text(encoding="utf-8")))
    assert names
    assert names - REGISTERED.keys() == set()


def test_prometheus_scrapes_the_default_metrics_ports() -> None:
    text = PROMETHEUS.read_text(encoding="utf-8")
    jobs = re.findall(r"job_name:\s*(\S+)", text)
    targets = re.findall(r"targets:\s*\[([^\]]*)\]", text)
    assert len(jobs) == len(targets)
    scraped = {
        job: {target.strip().strip("\"'") for target in listed.split(",")}
        for job, listed in zip(jobs, targets, strict=True)
    }
    # The defaults a bare start gets (no flags, no environment), as `make run` starts them.
    secret = ["--token-secret", "ab" * 32]
    dealer_port = dealer_settings(secret, environ={}).metrics_port
    wallet_port = wallet_settings(secret, environ={}).metrics_port
    assert scraped == {
        "dealer": {f"127.0.0.1:{dealer_port}"},
        "wallet": {f"127.0.0.1:{wallet_port}"},
    }
    assert re.search(r"rule_files:\s*\n\s*-\s*alerts\.yml", text)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.stem)
def test_dashboard_picks_its_prometheus_by_a_datasource_variable(path: Path) -> None:
    dashboard = _dashboard(path)
    variables = {variable["name"]: variable for variable in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    users = [variable for variable in variables.values() if "datasource" in variable]
    users += [panel for panel in _panels(dashboard) if panel.get("datasource")]
    users += [target for panel in _panels(dashboard) for target in panel.get("targets", [])]
    assert users
    for user in users:
        assert user["datasource"]["uid"] == "${datasource}", user.get("title", user.get("name"))


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.stem)
def test_dashboard_has_a_jetstream_row(path: Path) -> None:
    exprs = _dashboard_exprs(path)
    assert any(f"poker_{path.stem}_jetstream_" in expr for expr in exprs)
