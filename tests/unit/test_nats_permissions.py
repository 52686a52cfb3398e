"""The NATS configs and credentials files: deploy/nats/permissions.conf is the generator's
current output, the deployed and the `make run` configs are valid for nats-server, the
credentials files are private and checked with a sentence."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from poker.servicekit.nats_connect import (
    NatsConfigError,
    NatsSettings,
    _redacted,
    load_credentials,
)
from poker.servicekit.nats_permissions import (
    RIGHTS_BEGIN,
    RIGHTS_END,
    Namespace,
    TableNames,
    WalletNames,
    dealer_grants,
    render_permissions_conf,
    render_rights_table,
    wallet_grants,
)
from poker.testing.nats_server import nats_server_binary
from poker.tools import devrun

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "nats"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def _valid(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [nats_server_binary(), "-t", "-c", str(config)],
        capture_output=True,
        text=True,
        check=False,
        cwd=config.parent,
    )


def test_the_deployed_permissions_are_the_generators_output() -> None:
    assert (DEPLOY / "permissions.conf").read_text() == render_permissions_conf(), (
        "regenerate: python -m poker.servicekit.nats_permissions > deploy/nats/permissions.conf"
    )


def test_the_deployed_config_is_valid_with_its_passwords_and_refuses_without(
    tmp_path: Path,
) -> None:
    for name in ("nats.conf", "permissions.conf", "cluster.conf"):
        shutil.copy(DEPLOY / name, tmp_path / name)
    config = tmp_path / "nats.conf"
    assert _valid(config).returncode != 0  # no passwords.conf: the server does not start
    bcrypt = "$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG"
    (tmp_path / "passwords.conf").write_text(
        f'DEALER_PASSWORD: "{"d" * 24}"\n'
        f'WALLET_PASSWORD: "{"w" * 24}"\n'
        f'ADMIN_PASSWORD: "{bcrypt}"\n'  # a bcrypt hash, as a deployment should keep them
    )
    assert _valid(config).returncode == 0, _valid(config).stderr
    with config.open("a") as handle:
        handle.write('include "cluster.conf"\n')
    assert _valid(config).returncode == 0, _valid(config).stderr


def test_make_run_writes_private_credentials_once_and_a_valid_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(devrun, "ROOT", tmp_path)
    (tmp_path / "deploy" / "nats").mkdir(parents=True)
    shutil.copy(DEPLOY / "permissions.conf", tmp_path / "deploy" / "nats")
    first = devrun._nats_credentials()
    again = devrun._nats_credentials()
    assert {user: path.read_text() for user, path in first.items()} == {
        user: path.read_text() for user, path in again.items()
    }
    config = devrun._nats_config(first)
    for path in (*first.values(), config):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(first) == ["admin", "dealer", "wallet"]
    passwords = {load_credentials(str(path)).password for path in first.values()}
    assert len(passwords) == 3 and all(password in config.read_text() for password in passwords)
    assert "no_auth_user" not in config.read_text()
    assert _valid(config).returncode == 0, _valid(config).stderr


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        (None, "cannot be read"),
        ("dealer\nsecret-password", "is not JSON"),
        ('["dealer", "secret-password"]', 'exactly "user" and "password"'),
        ('{"user": "dealer", "password": "secret-password", "x": 1}', 'exactly "user"'),
        ('{"user": "dealer.x", "password": "secret-password"}', "letters, digits"),
        ('{"user": "", "password": "secret-password"}', "letters, digits"),
        ('{"user": "dealer", "password": "short"}', "at least 12"),
        ('{"user": "dealer", "password": 123456789012345}', "at least 12"),
    ],
)
def test_a_bad_credentials_file_is_refused_with_a_sentence(
    tmp_path: Path, content: str | None, complaint: str
) -> None:
    path = tmp_path / "credentials.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(NatsConfigError, match=complaint) as refused:
        NatsSettings(credentials=str(path)).connect_options()
    assert str(path) in str(refused.value)
    assert "secret-password" not in str(refused.value)


def test_credentials_connect_on_their_own_inbox_and_hide_the_password(tmp_path: Path) -> None:
    path = tmp_path / "wallet.json"
    path.write_text(json.dumps({"user": "wallet", "password": "p" * 20}))
    options = NatsSettings(credentials=str(path)).connect_options()
    assert (options["user"](), options["password"]()) == ("wallet", "p" * 20)
    assert options["inbox_prefix"] == "_INBOX.wallet"
    path.write_text(json.dumps({"user": "wallet", "password": "q" * 20}))  # rotated
    assert (options["user"](), options["password"]()) == ("wallet", "q" * 20)
    assert "q" * 20 not in repr(load_credentials(str(path)))
    path.write_text("broken")  # a half-written file: the last good ones
    assert (options["user"](), options["password"]()) == ("wallet", "q" * 20)
    assert _redacted(("nats://admin:pw@127.0.0.1:4222",)) == ["nats://admin:***@127.0.0.1:4222"]


def test_the_wallet_gets_no_stream_or_bucket_changes_on_the_dealers_side() -> None:
    tables, wallet = TableNames(), WalletNames()
    granted = set(wallet_grants(tables, wallet).publish_subjects())
    for verb in ("CREATE", "UPDATE", "DELETE", "PURGE"):
        for stream in (tables.stream, f"KV_{tables.snapshot_bucket}", f"KV_{tables.lease_bucket}"):
            assert f"$JS.API.STREAM.{verb}.{stream}" not in granted
    assert not any(subject.startswith(f"$KV.{tables.snapshot_bucket}") for subject in granted)
    dealer = set(dealer_grants(tables).publish_subjects())
    assert not any(wallet.stream in subject or "WALLET" in subject for subject in dealer)
    everything = dealer | granted
    assert not any(".DELETE." in s or ".PURGE." in s or s in (">", "$JS.API.>") for s in everything)


def test_no_service_user_manages_a_stream_a_bucket_or_a_durable_consumer() -> None:
    """Issue #24: the operator provisions every stream, bucket and durable consumer; a service
    user that could update a stream could republish it into another, cap or seal it, or source
    another service's stream."""
    tables, wallet = TableNames(), WalletNames()
    for grants in (dealer_grants(tables), wallet_grants(tables, wallet)):
        subjects = grants.publish_subjects()
        for verb in ("CREATE", "UPDATE", "DELETE", "PURGE", "SNAPSHOT", "RESTORE"):
            assert not [s for s in subjects if s.startswith(f"$JS.API.STREAM.{verb}.")], verb
        assert not [s for s in subjects if s.startswith("$JS.API.STREAM.MSG.DELETE.")]
        assert not [s for s in subjects if s.startswith("$JS.API.CONSUMER.DURABLE.")]
        assert not [s for s in subjects if ".CONSUMER.DELETE." in s or ".CONSUMER.PAUSE." in s]
        # Ordered consumers only: the nameless (ephemeral) form, no wildcard after it.
        creates = [s for s in subjects if s.startswith("$JS.API.CONSUMER.CREATE.")]
        assert all(s.count(".") == 4 and not s.endswith(">") for s in creates), creates
    durable = f"{tables.stream}.{wallet.consumer}"
    assert {s for s in wallet_grants(tables, wallet).publish_subjects() if durable in s} == {
        f"$JS.API.CONSUMER.INFO.{durable}",
        f"$JS.API.CONSUMER.MSG.NEXT.{durable}",
        f"$JS.ACK.{durable}.>",
    }


def test_the_rights_table_of_the_docs_is_the_generators_output() -> None:
    text = (DOCS / "security" / "nats.md").read_text(encoding="utf-8")
    assert RIGHTS_BEGIN in text and RIGHTS_END in text
    block = text.split(RIGHTS_BEGIN, 1)[1].split(RIGHTS_END, 1)[0]
    assert block.strip() == render_rights_table().strip(), (
        "regenerate docs/security/nats.md's table: "
        "python -m poker.servicekit.nats_permissions --markdown"
    )


def test_namespaces_merge_into_one_config() -> None:
    other = Namespace(TableNames("T_x", "tx.table", "S_x", "L_x"), wallet=None)
    text = render_permissions_conf([Namespace(), other])
    assert '"$JS.API.STREAM.INFO.T_x"' in text and '"$JS.API.STREAM.INFO.POKER_TABLES"' in text
    assert text.count('"_INBOX.dealer.>"') == 1
