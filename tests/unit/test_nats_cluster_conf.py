"""The NATS deployment files: deploy/nats/cluster.conf is the generator's current output, the
durability choice is in nats.conf, and nats-server itself accepts a node alone and a node of
the cluster (``nats-server -t``: the config is parsed and checked, nothing listens)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from poker.servicekit.nats_cluster import render_cluster, render_deployed_cluster_conf
from poker.testing.nats_server import nats_server_binary

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "nats"


def test_the_cluster_template_is_the_generators_output() -> None:
    assert (DEPLOY / "cluster.conf").read_text(encoding="utf-8") == render_deployed_cluster_conf()


def test_the_deployed_node_fsyncs_before_it_acknowledges() -> None:
    lines = [line.split("#")[0].strip() for line in (DEPLOY / "nats.conf").read_text().splitlines()]
    assert "sync_interval: always" in lines


def test_a_route_password_that_would_break_a_url_is_refused() -> None:
    with pytest.raises(ValueError, match="URL-safe"):
        render_cluster(["h:1"], "h:1", "p@ss:word/with-parts")


def _check(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [nats_server_binary(), "-t", "-c", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("clustered", [False, True], ids=["single-node", "cluster-node"])
def test_nats_server_accepts_the_deployed_config(tmp_path: Path, clustered: bool) -> None:
    for name in ("nats.conf", "permissions.conf", "cluster.conf"):
        shutil.copy(DEPLOY / name, tmp_path / name)
    users = ("DEALER", "WALLET", "ADMIN", "WALLET_ADMIN")
    passwords = {user: f"{user}-password-long-enough" for user in users}
    (tmp_path / "passwords.conf").write_text(
        "".join(f'{user}_PASSWORD: "{password}"\n' for user, password in passwords.items())
    )
    if clustered:
        with (tmp_path / "nats.conf").open("a") as config:
            config.write('include "cluster.conf"\n')
    checked = _check(tmp_path / "nats.conf")
    assert checked.returncode == 0, checked.stderr
    assert "is valid" in checked.stdout + checked.stderr


def test_nats_server_accepts_a_node_of_make_cluster(tmp_path: Path) -> None:
    from poker.servicekit.nats_permissions import NATS_USERS
    from poker.tools.devcluster import node_config

    (tmp_path / "deploy" / "nats").mkdir(parents=True)
    shutil.copy(DEPLOY / "permissions.conf", tmp_path / "deploy" / "nats" / "permissions.conf")
    home = tmp_path / "var" / "cluster"
    home.mkdir(parents=True)
    passwords = {user: f"{user}-password-long-enough" for user in NATS_USERS}
    config = home / "n2.conf"
    config.write_text(node_config(1, passwords, "route-password-long-enough"))
    checked = _check(config)
    assert checked.returncode == 0, checked.stderr
    text = config.read_text()
    assert "server_name: n2" in text and "sync_interval: always" in text
