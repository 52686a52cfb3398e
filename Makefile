# Everything a newcomer needs: `make test` and `make run` set up what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PROTOS := $(wildcard protos/pokerpb/*.proto)
PROTO_STAMP := pokerpb/.generated-stamp
# Where google/rpc/status.proto is (googleapis-common-protos ships it next to its Python modules).
GOOGLEAPIS_PROTOS = $(PY) -c 'import google.rpc, pathlib; print(pathlib.Path(google.rpc.__path__[0]).parents[1])'

.PHONY: all setup proto lint typecheck unit test bench run demo clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# compat mode puts the checkout on sys.path, so the generated pokerpb package is importable too.
	$(PY) -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

setup: $(STAMP) $(PROTO_STAMP)

$(PROTO_STAMP): $(STAMP) $(PROTOS)
	rm -rf pokerpb && mkdir -p pokerpb
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m grpc_tools.protoc -Iprotos -I"$$($(GOOGLEAPIS_PROTOS))" \
		--python_out=. --grpc_python_out=. --mypy_out=. --mypy_grpc_out=. $(PROTOS)
	touch pokerpb/__init__.py pokerpb/py.typed $@

proto: $(PROTO_STAMP)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

unit: setup
	$(VENV)/bin/pytest -n 2

# The README's test command: lint, types, then the whole suite (CI runs exactly this).
test: lint typecheck unit

bench: setup
	$(PY) -m bench

# nats-server (deploy/nats/nats.conf, data under ./var) and the dealer, until Ctrl-C; then try
# `.venv/bin/pokerctl create` and `.venv/bin/pokerctl bots <table id>` in another terminal.
run: setup
	$(PY) -m poker.tools.devrun

# The evaluation demo of the engine.
demo: setup
	$(PY) -m poker.engine demo

clean:
	rm -rf $(VENV) pokerpb .mypy_cache .ruff_cache .pytest_cache .hypothesis bench-results.json
