PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
DATA_DIR ?= .data

.PHONY: run test bench lint typecheck schema docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/proofgate serve --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR) --demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check proofgate tests bench
	$(BIN)/mypy

schema: $(STAMP)
	$(BIN)/proofgate export-schema > schema.graphql

docs: $(STAMP)
	$(BIN)/proofgate explain --markdown > docs/access-patterns.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
