"""Generates the Python code of every ``protos/**/*.proto``: messages (``*_pb2.py``), gRPC stubs
(``*_pb2_grpc.py``) and their type stubs (``.pyi``, mypy-protobuf).

One generator for every way the code is built, so they cannot differ:

- the package build (``setup.py``'s ``build_py``): into the build directory for a wheel or
  ``pip install .``, into the checkout for an editable install;
- ``make proto`` (``python build_protos.py``): into the checkout.

The generated packages follow the protos' folders, whatever they are: ``protos/pokerpb/x.proto``
becomes ``pokerpb/x_pb2.py`` and ``protos/poker/v1/x.proto`` becomes ``poker/v1/x_pb2.py``
(``-Iprotos``, so each file's import path is its path under ``protos/``). Each such folder gets an
``__init__.py`` and a ``py.typed`` marker if it has none.

It needs grpcio-tools (protoc and the gRPC plugin), googleapis-common-protos (the
``google/rpc/*.proto`` the API imports) and mypy-protobuf (the stub plugins): the build
requirements in pyproject.toml, and the dev extras.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PROTO_ROOT = ROOT / "protos"
# What protoc writes into a package folder: removed first, so a deleted .proto leaves nothing.
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
PACKAGE_MARKERS = ("__init__.py", "py.typed")
STUB_PLUGINS = ("protoc-gen-mypy", "protoc-gen-mypy_grpc")


def proto_files() -> list[Path]:
    """Every .proto under protos/, sorted (protoc's output does not depend on the order)."""
    return sorted(PROTO_ROOT.rglob("*.proto"))


def generated_packages() -> list[str]:
    """The dotted names of the packages the protos generate: their folders under protos/."""
    packages = set()
    for proto in proto_files():
        parts = proto.parent.relative_to(PROTO_ROOT).parts
        if not parts:
            raise SystemExit(f"{proto}: a .proto lives in its package's folder under protos/")
        packages.add(".".join(parts))
    return sorted(packages)


def generate(out: Path) -> list[Path]:
    """Writes the generated packages under ``out`` and returns every file written there."""
    protos = proto_files()
    if not protos:
        raise SystemExit(f"no .proto files under {PROTO_ROOT}")
    folders = [out.joinpath(*package.split(".")) for package in generated_packages()]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.iterdir():
            if stale.name.endswith(GENERATED_SUFFIXES):
                stale.unlink()
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{_googleapis_protos()}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        *_stub_options(out),
        *(str(proto) for proto in protos),
    ]
    subprocess.run(command, check=True)
    written: list[Path] = []
    for folder in folders:
        for marker in PACKAGE_MARKERS:
            if not (folder / marker).exists():
                (folder / marker).touch()
        written.extend(sorted(path for path in folder.iterdir() if _is_generated(path)))
    return written


def _is_generated(path: Path) -> bool:
    return path.name.endswith(GENERATED_SUFFIXES) or path.name in PACKAGE_MARKERS


def _googleapis_protos() -> Path:
    """Where google/rpc/status.proto is: googleapis-common-protos ships the .proto files next to
    its Python modules."""
    try:
        import google.rpc
    except ImportError as missing:
        raise SystemExit("generating the protos needs googleapis-common-protos") from missing
    return Path(next(iter(google.rpc.__path__))).parents[1]


def _stub_options(out: Path) -> list[str]:
    """The mypy-protobuf plugins, named by path: those beside this Python first (``make proto``
    need not have the venv on PATH), else PATH's (a build environment's scripts)."""
    options = []
    for plugin in STUB_PLUGINS:
        found = shutil.which(plugin, path=str(Path(sys.executable).parent)) or shutil.which(plugin)
        if found is None:
            raise SystemExit(f"generating the protos needs mypy-protobuf ({plugin} not found)")
        language = plugin.removeprefix("protoc-gen-")
        # quiet: no "Writing mypy to ..." line per file.
        options += [f"--plugin={plugin}={found}", f"--{language}_opt=quiet"]
        options.append(f"--{language}_out={out}")
    return options


def main(argv: list[str] | None = None) -> None:
    """``python build_protos.py [--out DIR]``: generate into the checkout (or DIR)."""
    parser = argparse.ArgumentParser(description="Generates the protos' Python code.")
    parser.add_argument("--out", type=Path, default=ROOT, help="where the packages go (checkout)")
    arguments = parser.parse_args(argv)
    written = generate(arguments.out.resolve())
    print(f"build_protos: {len(written)} files in {', '.join(generated_packages())}")


if __name__ == "__main__":
    main()
