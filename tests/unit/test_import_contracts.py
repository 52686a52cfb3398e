"""The import contracts of the layers, read from the source with :mod:`ast` (no import runs).

Every package of the project lives under ``poker``, in layers that import only inward:

====  ==========================================  ==============================================
 0    ``poker.v1``                                the generated messages (the one schema, API v1)
 1    ``poker.engine``, ``poker.wallet.ledger``   the pure rules: the standard library and 0 only
 2    ``poker.eventstore``                        the log, snapshot and lease stores
 3    ``poker.servicekit``                        what both services share (config, auth, gRPC)
 4    ``poker.tablelog``                          the table stream both services read
 5    ``poker.dealer``, ``poker.wallet``          the services; neither imports the other
 6    ``poker.tools``                             pokerctl, devrun, the client library, the bot
 7    ``poker.testing``                           the test kit (in-process services, nats-server)
====  ==========================================  ==============================================

Beside them, nothing outside ``tests`` imports ``tests``, and the application knows nothing of
gRPC: only the transport edge (the servicers, the ``wire`` modules, the apps that serve them, the
gRPC client of the wallet, servicekit's server stack) and the tools import ``grpc``, or
``poker.servicekit.status``, the one table from the application's error families to gRPC status.

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

#: The layers, innermost first: a module may import its own layer and the ones before it.
#: Within a layer, the two services may not import each other (nor the ledger the engine).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("poker.v1",),
    ("poker.engine", "poker.wallet.ledger"),
    ("poker.eventstore",),
    ("poker.servicekit",),
    ("poker.tablelog",),
    ("poker.dealer", "poker.wallet"),
    ("poker.tools",),
    ("poker.testing",),
)

#: The transport edge and the tools: the modules that may speak gRPC. Everything else under
#: the service packages is the application, and does not.
GRPC_EDGE: frozenset[str] = frozenset(
    {
        # the servicers, their conversions and the apps that serve them
        "poker/dealer/grpc_api.py",
        "poker/dealer/grpc_edge.py",
        "poker/dealer/wire.py",
        "poker/dealer/replies.py",
        "poker/dealer/app.py",
        "poker/wallet/grpc_api.py",
        "poker/wallet/wire.py",
        "poker/wallet/app.py",
        # the dealer's gRPC client of the wallet: the edge on the way out (statuses back to
        # the application's families)
        "poker/dealer/wallet_client.py",
        # servicekit's gRPC side: the server, its interceptor stack, the status table, the
        # authenticating interceptor, the request decoding guard, channel/server credentials
        "poker/servicekit/server.py",
        "poker/servicekit/composition.py",
        "poker/servicekit/stack.py",
        "poker/servicekit/status.py",
        "poker/servicekit/auth.py",
        "poker/servicekit/decoding.py",
        "poker/servicekit/tls.py",
    }
)
#: What the application may not import: gRPC itself, and the edge's status table.
GRPC_MODULES = (
    "grpc",
    "grpc_health",
    "grpc_reflection",
    "grpc_status",
    "google.rpc",
    "poker.servicekit.status",
)
#: The product: every layer but the tools and the test kit, which may speak gRPC freely.
PRODUCT = (
    "poker/engine",
    "poker/eventstore",
    "poker/servicekit",
    "poker/tablelog",
    "poker/dealer",
    "poker/wallet",
)


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), path


def _dotted(relative: str) -> str:
    return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _package_parts(path: Path) -> tuple[str, ...]:
    """The package of the module at ``path``, as its names."""
    return path.relative_to(ROOT).with_suffix("").parts[:-1]


def _imports(path: Path) -> Iterator[str]:
    """The absolute module names ``path`` imports (relative imports resolved)."""
    return _imports_of(path.read_text(encoding="utf-8"), _package_parts(path))


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


def _layer(module: str) -> int | None:
    """The index of the innermost layer ``module`` belongs to (the ledger before the wallet)."""
    found = [
        (len(prefix), index)
        for index, layer in enumerate(LAYERS)
        for prefix in layer
        if _within(module, prefix)
    ]
    return max(found)[1] if found else None


def _package_of(module: str) -> str | None:
    """The layer entry (``poker.dealer``, ``poker.wallet.ledger``...) ``module`` belongs to."""
    prefixes = [prefix for layer in LAYERS for prefix in layer if _within(module, prefix)]
    return max(prefixes, key=len) if prefixes else None


def _outward_imports() -> list[str]:
    """``file: module`` for every import of a project module from a layer further out, or of
    a sibling of the same layer."""
    found = []
    for relative, path in _modules("poker"):
        here = _dotted(relative)
        if here == "poker":  # the namespace's own docstring-only module
            continue
        own_layer, own_package = _layer(here), _package_of(here)
        assert own_layer is not None, f"{relative} belongs to no layer"
        for name in _imports(path):
            layer, package = _layer(name), _package_of(name)
            if layer is None:
                continue
            if layer > own_layer or (layer == own_layer and package != own_package):
                found.append(f"{relative}: {name}")
    return found


def test_every_package_imports_only_inward() -> None:
    assert _outward_imports() == []


def test_the_pure_rules_import_only_the_standard_library_and_the_generated_messages() -> None:
    found = [
        f"{relative}: {name}"
        for package in ("poker/engine", "poker/wallet/ledger")
        for relative, path in _modules(package)
        for name in _imports(path)
        if _top(name) not in STDLIB
        and not _within(name, "poker.v1")
        and not _within(name, _dotted(package))
    ]
    assert found == []


#: What the engine may not import, even from the standard library: the clock, randomness, the
#: operating system, files, the network, concurrency, logging. The rules are a function of the
#: state and the command: a deck, a seed, the time (``now``) come in through the command
#: (``poker.engine.fairness`` derives decks from seeds it is given).
IMPURE: frozenset[str] = frozenset(
    {
        # the clock and randomness
        "time", "datetime", "zoneinfo", "calendar", "random", "secrets", "uuid",
        # the process, the operating system and files
        "os", "sys", "io", "pathlib", "shutil", "tempfile", "glob", "fnmatch", "fileinput",
        "subprocess", "signal", "resource", "platform", "getpass", "pwd", "grp", "atexit",
        "gc", "ctypes", "mmap", "fcntl", "msvcrt", "winreg", "builtins",
        # serialisation that reaches for files or runs code
        "pickle", "shelve", "marshal", "dbm", "sqlite3",
        # the network
        "socket", "ssl", "select", "selectors", "http", "urllib", "ftplib", "smtplib",
        "socketserver", "xmlrpc", "email", "webbrowser",
        # concurrency
        "asyncio", "threading", "_thread", "multiprocessing", "concurrent", "sched", "queue",
        # output
        "logging", "warnings",
    }
)  # fmt: skip
#: Built-in functions that read or write the outside world.
IMPURE_BUILTINS: frozenset[str] = frozenset({"open", "input", "print", "breakpoint"})
#: The engine's command-line entry points (``python -m poker.engine``, its ``phh replay``): the
#: edge where arguments, files, standard output and the demo's randomness come in. They stay in
#: the engine's package so that ``python -m poker.engine`` keeps working; no other engine module
#: imports them (tested below), so the rules never reach the outside world through them.
ENGINE_ENTRY_POINTS: frozenset[str] = frozenset(
    {"poker/engine/__main__.py", "poker/engine/phh/cli.py"}
)


def _impurities(source: str, package: tuple[str, ...]) -> list[str]:
    """What ``source`` (a module of ``package``) imports from :data:`IMPURE`, or calls of
    :data:`IMPURE_BUILTINS`."""
    found = [name for name in _imports_of(source, package) if _top(name) in IMPURE]
    found += [
        f"{node.func.id}()"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in IMPURE_BUILTINS
    ]
    return found


def test_the_engine_has_no_clock_randomness_or_outside_world() -> None:
    found = [
        f"{relative}: {name}"
        for relative, path in _modules("poker/engine")
        if relative not in ENGINE_ENTRY_POINTS
        for name in _impurities(path.read_text(encoding="utf-8"), _package_parts(path))
    ]
    assert found == []


def test_no_engine_module_imports_the_engines_entry_points() -> None:
    entry_points = {_dotted(relative) for relative in ENGINE_ENTRY_POINTS}
    found = []
    for relative, path in _modules("poker/engine"):
        if relative in ENGINE_ENTRY_POINTS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set(_imports(path))
        # ``from poker.engine.phh import cli`` names the module as what it imports.
        names |= {
            f"{node.module}.{alias.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and not node.level
            for alias in node.names
        }
        found += [f"{relative}: {name}" for name in sorted(names & entry_points)]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "import time\n",
        "from time import monotonic\n",
        "import os.path\n",
        "from datetime import datetime as clock\n",
        "def later():\n    import random\n    return random.random()\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import asyncio\n",
        "def save(text):\n    with open('x', 'w') as out:\n        out.write(text)\n",
    ],
)
def test_the_purity_check_finds_a_clock_in_any_hand_module(source: str) -> None:
    # As it would read poker/engine/hand/anything.py.
    assert _impurities(source, ("poker", "engine", "hand")) != []


def test_the_purity_check_admits_the_pure_standard_library() -> None:
    source = "import hashlib\nfrom dataclasses import dataclass\nfrom poker.engine import cards\n"
    assert _impurities(source, ("poker", "engine", "hand")) == []


@pytest.mark.parametrize("package", ["poker", "bench"])
def test_nothing_outside_the_tests_imports_them(package: str) -> None:
    found = [
        f"{relative}: {name}"
        for relative, path in _modules(package)
        for name in _imports(path)
        if _within(name, "tests")
    ]
    assert found == []


@pytest.mark.parametrize("package", PRODUCT)
def test_the_application_knows_nothing_of_grpc(package: str) -> None:
    found = [
        f"{relative}: {name}"
        for relative, path in _modules(package)
        if relative not in GRPC_EDGE
        for name in _imports(path)
        if any(_within(name, forbidden) for forbidden in GRPC_MODULES)
    ]
    assert found == []


def test_the_application_error_families_know_nothing_of_grpc() -> None:
    """The families the application raises carry no status: only the edge's table does."""
    assert set(_imports(ROOT / "poker/servicekit/errors.py")) <= {"__future__", "typing"}


def test_the_token_logic_knows_nothing_of_grpc() -> None:
    """Issuing and verifying tokens (settings, tools, the wallet's client) needs no gRPC: only
    the interceptor at the edge (``auth.py``) does."""
    assert "poker/servicekit/tokens.py" not in GRPC_EDGE
    imported = set(_imports(ROOT / "poker/servicekit/tokens.py"))
    assert not {name for name in imported if _within(name, "grpc")}
    assert not {name for name in imported if _within(name, "poker.servicekit.auth")}


def test_every_edge_module_exists() -> None:
    """A module named on the edge list that is gone would let its successor slip by."""
    assert sorted(name for name in GRPC_EDGE if not (ROOT / name).is_file()) == []


def test_the_layers_catch_an_outward_import() -> None:
    """The layer order itself: the engine may not reach the dealer, the wallet not the dealer,
    the dealer may reach the table log."""
    assert _layer("poker.engine.cards") == 1 and _layer("poker.wallet.ledger.state") == 1
    assert _layer("poker.dealer.tables") == 5 and _layer("poker.wallet.app") == 5
    assert _package_of("poker.wallet.ledger.state") == "poker.wallet.ledger"
    assert _package_of("poker.wallet.consumer") == "poker.wallet"


def test_the_checker_sees_imports_of_every_kind() -> None:
    """The walk finds lazy and TYPE_CHECKING imports and resolves relative ones."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import poker.engine.cards, os.path as p\n"
        "from . import sibling\n"
        "from ..ledger import state\n"
        "if TYPE_CHECKING:\n"
        "    from poker.dealer.tables import TableService\n"
        "def later():\n"
        "    import tests.support\n"
    )
    assert list(_imports_of(source, ("poker.wallet", "ledger"))) == [
        "typing",
        "poker.engine.cards",
        "os.path",
        "poker.wallet.ledger",
        "poker.wallet.ledger",
        "poker.dealer.tables",
        "tests.support",
    ]


def test_the_schema_layer_holds_only_generated_code() -> None:
    """``poker.v1`` is what ``make proto`` writes from ``protos/poker/v1`` (not committed): no
    hand-written module hides in the innermost layer, where every other layer may import it."""
    generated = sorted(path.name for path in (ROOT / "poker/v1").glob("*.py"))
    protos = sorted(path.stem for path in (ROOT / "protos/poker/v1").glob("*.proto"))
    assert generated == sorted(
        ["__init__.py", *(f"{stem}_pb2.py" for stem in protos)]
        + [f"{stem}_pb2_grpc.py" for stem in protos]
    )
