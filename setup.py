"""The package build's one hook; everything else about the package is in pyproject.toml.

``build_py`` also generates the protobuf and gRPC code of ``protos/`` (``build_protos.py``), so
``pip install .``, a built wheel and an editable install all carry it from a clean checkout,
where it does not exist (it is not committed).
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# A PEP 517 build does not put the project on sys.path; build_protos.py sits beside this file.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_protos


class BuildPyWithProtos(build_py):
    """``build_py``, then the generated packages: into the build directory, or, for an editable
    install (where ``build_py`` copies nothing and the checkout is imported), into the checkout."""

    def run(self) -> None:
        """Copies the sources (not in editable mode), then generates the protos' packages."""
        super().run()
        if self.editable_mode:
            # Imported from the checkout (pyproject.toml's package-dir: the checkout on sys.path).
            build_protos.generate(build_protos.ROOT)
        else:
            self._generated = build_protos.generate(Path(self.build_lib))

    _generated: list[Path] = []  # noqa: RUF012 (a default read before run(), never mutated)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        """The copied sources and the generated files (an install's record lists both); in editable
        mode the generated files are in the checkout, not outputs of the build."""
        return [*super().get_outputs(include_bytecode), *map(str, self._generated)]


setup(cmdclass={"build_py": BuildPyWithProtos})
