# Everything a newcomer needs: `make test` and `make run` set up what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PROTOS := $(wildcard protos/poker/v1/*.proto)
PROTO_STAMP := poker/v1/.generated-stamp
# buf (schema lint and breaking-change checks), from npm at the version package-lock.json pins.
BUF := node_modules/.bin/buf
BUF_STAMP := node_modules/.installed-stamp
# Where google/rpc/status.proto is (googleapis-common-protos ships it next to its Python modules).
GOOGLEAPIS_PROTOS = $(PY) -c 'import google.rpc, pathlib; print(pathlib.Path(google.rpc.__path__[0]).parents[1])'

.PHONY: all setup proto protocheck proto-baseline lint typecheck unit test bench run cluster demo clean

all: test

# A .venv whose python does not run, or is older than 3.11 (left by a set-up that failed with a
# too-old Python, or by a Python since removed), is not trusted: its stamp goes, so the rule below
# runs again and builds the .venv from scratch.
VENV_PYTHON_OK := $(shell $(PY) -c 'import sys; print(sys.version_info >= (3, 11))' 2>/dev/null)
ifneq ($(VENV_PYTHON_OK),True)
$(shell rm -f $(STAMP))
endif

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
		echo "make: this project needs Python 3.11 or newer; '$(PYTHON)' is" \
			"$$($(PYTHON) -c 'import platform; print(platform.python_version())' 2>/dev/null || echo 'not a working Python')." \
			"Install one and run e.g. 'make PYTHON=python3.12 $(MAKECMDGOALS)'."; exit 1; }
	@if [ -e $(VENV) ] && [ "$(VENV_PYTHON_OK)" != True ]; then \
		echo "make: $(VENV) has no working Python 3.11+ (a set-up that failed?): rebuilding it"; \
		rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# compat mode puts the checkout on sys.path, so the generated pokerpb package is importable too.
	$(PY) -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

setup: $(STAMP) $(PROTO_STAMP) $(BUF_STAMP)

# The generated package poker.v1 (poker/v1/, not committed) from protos/poker/v1.
$(PROTO_STAMP): $(STAMP) $(PROTOS)
	rm -rf poker/v1 && mkdir -p poker/v1
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m grpc_tools.protoc -Iprotos -I"$$($(GOOGLEAPIS_PROTOS))" \
		--python_out=. --grpc_python_out=. --mypy_out=. --mypy_grpc_out=. $(PROTOS)
	printf '"""The generated messages and gRPC stubs of the API v1 (protos/poker/v1, make proto)."""\n' \
		> poker/v1/__init__.py
	touch poker/v1/py.typed $@

proto: $(PROTO_STAMP)

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

clean:
	rm -rf $(VENV) pokerpb poker/v1 node_modules build/schema.binpb .mypy_cache .ruff_cache .pytest_cache .hypothesis bench-results.json
