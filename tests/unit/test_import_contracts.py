"""The import contracts of the layers, read from the source with :mod:`ast` (no import runs).

- the engine imports only the standard library, the generated messages (``pokerpb``) and itself;
- the wallet's ledger (``wallet_service.ledger``) only the standard library, ``pokerpb`` and itself;
- the dealer and the wallet never import each other: what both need of the table stream is in
  ``tablelog``, which imports neither;
- nothing outside ``tests`` imports ``tests``;
- the application knows nothing of gRPC: only the transport edge (the servicers, the ``wire``
  modules, the apps that serve them, the gRPC client of the wallet, servicekit's server stack)
  and the tools import ``grpc``, or ``servicekit.status``, the one table from the application's
  error families to gRPC status.

Every import counts: at module level, inside functions and under ``TYPE_CHECKING`` alike.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STDLIB = frozenset(sys.stdlib_module_names)

#: Tools beside the product (test harnesses, benchmarks) that still import what the contracts
#: forbid; every one says why. The product modules (everything but these) must be clean.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {
    # The wallet's test harness puts a wallet beside a dealer of dealer_service.testing on one
    # (authorizing) nats-server: it takes the dealer's settings and NATS namespace helpers. A
    # tools/ home shared by both harnesses is the planned fix (issue #11, "a tools/ home").
    ("wallet_service/testing.py", "dealer_service.config"): "the harness pairs with a dealer's",
    ("wallet_service/testing.py", "dealer_service.testing"): "the shared NATS test namespace",
    # The service benchmarks start a real nats-server and real service processes exactly as the
    # integration and fault tests do; the support modules would move with the tools.
    ("bench/services.py", "tests.support.nats_server"): "a real nats-server, as the tests run",
    ("bench/services.py", "tests.support.service_process"): "real service processes",
    ("bench/wallet.py", "tests.support.nats_server"): "a real nats-server, as the tests run",
    ("bench/wallet.py", "tests.support.service_process"): "real service processes",
}

#: The transport edge and the tools: the modules that may speak gRPC. Everything else under
#: the service packages is the application, and does not.
GRPC_EDGE: frozenset[str] = frozenset(
    {
        # the servicers, their conversions and the apps that serve them
        "dealer_service/grpc_api.py",
        "dealer_service/wire.py",
        "dealer_service/app.py",
        "wallet_service/grpc_api.py",
        "wallet_service/wire.py",
        "wallet_service/app.py",
        # the dealer's gRPC client of the wallet: the edge on the way out (statuses back to
        # the application's families)
        "dealer_service/wallet_client.py",
        # the tools: pokerctl, the development runner, the client helpers of the tests
        "dealer_service/cli.py",
        "dealer_service/devrun.py",
        "dealer_service/testing.py",
        "wallet_service/testing.py",
        # servicekit's gRPC side: the server, its interceptor stack, the status table, the
        # authenticating interceptor, the request decoding guard, channel/server credentials
        "servicekit/server.py",
        "servicekit/stack.py",
        "servicekit/interceptors.py",
        "servicekit/status.py",
        "servicekit/auth.py",
        "servicekit/decoding.py",
        "servicekit/tls.py",
    }
)
#: What the application may not import: gRPC itself, and the edge's status table.
GRPC_MODULES = ("grpc", "grpc_health", "grpc_reflection", "servicekit.status")


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), path


def _imports(path: Path) -> Iterator[str]:
    """The absolute module names ``path`` imports (relative imports resolved)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    return _imports_of(path.read_text(encoding="utf-8"), package)


def _imports_of(source: str, package: tuple[str, ...]) -> Iterator[str]:
    """The absolute module names ``source``, a module of ``package``, imports."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                yield f"{base}.{node.module}" if node.module else base
            else:
                assert node.module is not None
                yield node.module


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(f"{prefix}.")


def _violations(package: str, allowed: tuple[str, ...], *, stdlib: bool = True) -> list[str]:
    """``file: module`` for every import under ``package`` outside ``allowed`` (and the
    standard library when ``stdlib``), less the known exceptions."""
    found = []
    for relative, path in _modules(package):
        for name in _imports(path):
            if stdlib and _top(name) in STDLIB:
                continue
            if any(_within(name, prefix) for prefix in allowed):
                continue
            if (relative, name) not in KNOWN_EXCEPTIONS:
                found.append(f"{relative}: {name}")
    return found


def _forbidden(package: str, forbidden: tuple[str, ...]) -> list[str]:
    """``file: module`` for every import under ``package`` of one of ``forbidden``, less the
    known exceptions."""
    return [
        f"{relative}: {name}"
        for relative, path in _modules(package)
        for name in _imports(path)
        if any(_within(name, prefix) for prefix in forbidden)
        and (relative, name) not in KNOWN_EXCEPTIONS
    ]


def test_the_engine_imports_only_the_standard_library_and_the_generated_messages() -> None:
    assert _violations("engine", ("engine", "pokerpb")) == []


def test_the_ledger_imports_only_the_standard_library_and_the_generated_messages() -> None:
    assert _violations("wallet_service/ledger", ("wallet_service.ledger", "pokerpb")) == []


@pytest.mark.parametrize(
    ("package", "other"),
    [("dealer_service", "wallet_service"), ("wallet_service", "dealer_service")],
)
def test_the_services_do_not_import_each_other(package: str, other: str) -> None:
    assert _forbidden(package, (other,)) == []


def test_the_table_log_imports_neither_service() -> None:
    assert _forbidden("tablelog", ("dealer_service", "wallet_service")) == []


@pytest.mark.parametrize(
    "package",
    ["engine", "eventstore", "servicekit", "tablelog", "dealer_service", "wallet_service", "bench"],
)
def test_nothing_outside_the_tests_imports_them(package: str) -> None:
    assert _forbidden(package, ("tests",)) == []


@pytest.mark.parametrize(
    "package", ["dealer_service", "wallet_service", "tablelog", "eventstore", "servicekit"]
)
def test_the_application_knows_nothing_of_grpc(package: str) -> None:
    found = [
        violation
        for violation in _forbidden(package, GRPC_MODULES)
        if violation.split(":", 1)[0] not in GRPC_EDGE
    ]
    assert found == []


def test_the_application_error_families_know_nothing_of_grpc() -> None:
    """The families the application raises carry no status: only the edge's table does."""
    assert list(_imports(ROOT / "servicekit" / "errors.py")) == ["__future__"]


def test_every_edge_module_exists() -> None:
    """A module named on the edge list that is gone would let its successor slip by."""
    assert sorted(name for name in GRPC_EDGE if not (ROOT / name).is_file()) == []


def test_every_known_exception_is_still_needed() -> None:
    """An exception that no file needs any more is taken off the list (it would hide a new one)."""
    used = {
        (relative, name)
        for package in ("dealer_service", "wallet_service", "bench", "tablelog")
        for relative, path in _modules(package)
        for name in _imports(path)
    }
    assert sorted(set(KNOWN_EXCEPTIONS) - used) == []


def test_the_checker_sees_imports_of_every_kind() -> None:
    """The walk finds lazy and TYPE_CHECKING imports and resolves relative ones."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import engine.cards, os.path as p\n"
        "from . import sibling\n"
        "from ..ledger import state\n"
        "if TYPE_CHECKING:\n"
        "    from dealer_service.tables import TableService\n"
        "def later():\n"
        "    import tests.support\n"
    )
    assert list(_imports_of(source, ("wallet_service", "ledger"))) == [
        "typing",
        "engine.cards",
        "os.path",
        "wallet_service.ledger",
        "wallet_service.ledger",
        "dealer_service.tables",
        "tests.support",
    ]
