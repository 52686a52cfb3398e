"""The operator's provisioning and the services' start-up check, against the real authorizing
nats-server: ``python -m poker.servicekit.provision`` creates a room as the admin and is
idempotent; a service whose stream, bucket or consumer is missing or not as it needs refuses to
start with one sentence naming it and the command; it creates and repairs nothing."""

from __future__ import annotations

import subprocess
import sys
import uuid
from dataclasses import replace

import nats
import nats.js.errors
import pytest
from prometheus_client import CollectorRegistry

from poker.dealer.app import build_dealer
from poker.dealer.config import DealerSettings
from poker.servicekit.nats_permissions import Namespace, TableNames
from poker.servicekit.provisioning import (
    PROVISION_COMMAND,
    NotProvisioned,
    Room,
    TablesSpec,
    streams_of,
)
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret, table_names
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ROOT, harness_deck_key_file, harness_log_keys_file
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.wallet.app import build_wallet


def unprovisioned(nats_server: NatsServer) -> DealerSettings:
    """Dealer settings whose names the dealer user is granted but nobody provisioned."""
    provisioned = namespace_settings(nats_server.url, new_secret())
    name = uuid.uuid4().hex[:10]
    settings = replace(
        provisioned,
        table_stream=f"U_{name}",
        table_subject_prefix=f"u{name}.table",
        table_snapshot_bucket=f"US_{name}",
        table_lease_bucket=f"UL_{name}",
    )
    nats_server.authorize(Namespace(table_names(settings), wallet=None))
    return settings


async def test_a_dealer_refuses_to_start_without_its_stream_and_creates_nothing(
    nats_server: NatsServer,
) -> None:
    settings = unprovisioned(nats_server)
    with pytest.raises(NotProvisioned) as refused:
        await build_dealer(settings, registry=CollectorRegistry())
    assert str(refused.value) == (
        f"stream {settings.table_stream} does not exist: run `{PROVISION_COMMAND}` with the "
        "operator's credentials"
    )
    admin = await nats.connect(nats_server.url)
    try:
        with pytest.raises(nats.js.errors.NotFoundError):
            await admin.jetstream().stream_info(settings.table_stream)
    finally:
        await admin.close()


async def test_a_drifted_stream_is_refused_until_the_operator_provisions_it(
    nats_server: NatsServer,
) -> None:
    settings = namespace_settings(nats_server.url, new_secret())
    admin = await nats.connect(nats_server.url)
    try:
        js = admin.jetstream()
        info = await js.stream_info(settings.table_stream)
        await js.update_stream(replace(info.config, max_msgs_per_subject=1))
        with pytest.raises(NotProvisioned, match=r"max_msgs_per_subject=1 \(needs -1\)"):
            await build_dealer(settings, registry=CollectorRegistry())
        # Still capped: the dealer repaired nothing.
        assert (await js.stream_info(settings.table_stream)).config.max_msgs_per_subject == 1
        nats_server.provision(
            Room(TablesSpec(table_names(settings), 1, settings.lease_ttl_s), None)
        )
        async with DealerHarness(settings):
            pass
    finally:
        await admin.close()


async def test_a_wallet_refuses_to_start_without_its_durable_consumer(
    nats_server: NatsServer,
) -> None:
    dealer = namespace_settings(nats_server.url, new_secret())
    settings = wallet_settings(dealer)
    admin = await nats.connect(nats_server.url)
    try:
        await admin.jetstream().delete_consumer(dealer.table_stream, settings.consumer_name)
        with pytest.raises(NotProvisioned, match=f"consumer {settings.consumer_name} of stream"):
            await build_wallet(settings, registry=CollectorRegistry())
        with pytest.raises(nats.js.errors.NotFoundError):
            await admin.jetstream().consumer_info(dealer.table_stream, settings.consumer_name)
    finally:
        await admin.close()
    async with WalletHarness(wallet_settings(dealer, namespace=uuid.uuid4().hex[:10])):
        pass  # provisioned again through the harness: it starts


def _provision(
    nats_server: NatsServer, names: TableNames, *flags: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "poker.servicekit.provision",
            "--nats-url",
            nats_server.service_url,
            "--nats-credentials",
            str(nats_server.credentials("admin")),
            "--wallet-nats-credentials",
            str(nats_server.credentials("wallet-admin")),
            "--table-stream",
            names.stream,
            "--table-subject-prefix",
            names.subject_prefix,
            "--table-snapshot-bucket",
            names.snapshot_bucket,
            "--table-lease-bucket",
            names.lease_bucket,
            "--table-index-bucket",
            names.index_bucket,
            *flags,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_command_provisions_a_room_as_the_admin_and_is_idempotent(
    nats_server: NatsServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    name = uuid.uuid4().hex[:8]
    names = TableNames(f"P_{name}", f"p{name}.table", f"PS_{name}", f"PL_{name}", f"PI_{name}")
    wallet = [
        "--journal-stream",
        f"PW_{name}",
        "--journal-subject-prefix",
        f"pw{name}.wallet",
        "--journal-snapshot-bucket",
        f"PWS_{name}",
        "--journal-lease-bucket",
        f"PWL_{name}",
        "--consumer-name",
        f"pc-{name}",
    ]
    # The journal and its buckets are the WALLET account's: its admin provisions them.
    without = _provision(nats_server, names, *wallet, "--wallet-nats-credentials", "")
    assert without.returncode == 1 and "--wallet-nats-credentials" in without.stderr
    first = _provision(nats_server, names, *wallet)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"stream {names.stream}: created"
    assert lines[-1] == f"consumer pc-{name} of stream {names.stream}: created"
    assert len(lines) == len(streams_of(Room())) + 1
    again = _provision(nats_server, names, *wallet)
    assert again.returncode == 0, again.stderr
    assert all(line.endswith(": unchanged") for line in again.stdout.splitlines())

    # And a dealer process on those names starts and serves (it only checks them).
    log = tmp_path_factory.mktemp("provisioned") / "dealer.log"
    nats_server.authorize(Namespace(names, wallet=None))
    dealer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "poker.dealer",
            *nats_server.service_flags("dealer"),
            *("--grpc-port", "0", "--metrics-port", "0", "--token-secret", "ab" * 32),
            *("--table-stream", names.stream, "--table-subject-prefix", names.subject_prefix),
            *("--table-snapshot-bucket", names.snapshot_bucket),
            *("--table-lease-bucket", names.lease_bucket),
            *("--table-index-bucket", names.index_bucket),
            *("--log-keys", str(harness_log_keys_file(log.parent, "dealer"))),
            *("--deck-key", str(harness_deck_key_file(log.parent))),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )
    try:
        assert dealer.stdout is not None
        assert dealer.stdout.readline().startswith("dealer serving grpc=")
    finally:
        dealer.terminate()
        dealer.wait(timeout=30)


def test_a_dealer_process_on_unprovisioned_names_exits_with_one_sentence(
    nats_server: NatsServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    name = uuid.uuid4().hex[:8]
    names = TableNames(f"N_{name}", f"n{name}.table", f"NS_{name}", f"NL_{name}", f"NI_{name}")
    nats_server.authorize(Namespace(names, wallet=None))
    folder = tmp_path_factory.mktemp("unprovisioned")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "poker.dealer",
            *nats_server.service_flags("dealer"),
            *("--grpc-port", "0", "--metrics-port", "0", "--token-secret", "ab" * 32),
            *("--table-stream", names.stream, "--table-subject-prefix", names.subject_prefix),
            *("--table-snapshot-bucket", names.snapshot_bucket),
            *("--table-lease-bucket", names.lease_bucket),
            *("--table-index-bucket", names.index_bucket),
            *("--log-keys", str(harness_log_keys_file(folder, "dealer"))),
            *("--deck-key", str(harness_deck_key_file(folder))),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"dealer refuses to start: stream {names.stream} does not exist: run "
        f"`{PROVISION_COMMAND}` with the operator's credentials"
    )
