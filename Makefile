PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` installs what serving needs; everything else also the dev extras.
# Both install exact versions with hashes from the lock files (`make lock`
# writes them from pyproject.toml), then the project itself without deps.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-dev
LOCK := requirements.lock
DEV_LOCK := requirements-dev.lock
BUILD_LOCK := requirements-build.lock
# checkov pins packaging<24, pytest 9 needs >=24: it gets a venv and a lock of
# its own, from requirements-checkov.in.
CHECKOV_LOCK := requirements-checkov.lock
CHECKOV_STAMP := $(VENV)/checkov/.installed
# Options as `--name=value` and every source a file: the header of each lock
# is then a command Renovate can run again (renovate.json, lock maintenance).
UV_COMPILE = $(BIN)/uv pip compile --quiet --universal --python-version=3.11 --generate-hashes
HOST ?= 127.0.0.1
PORT ?= 8000
DATA_DIR ?= .data
# Browser origins a local frontend is served from during development.
PROOFGATE_CORS_ORIGINS ?= http://localhost:3000,http://127.0.0.1:3000,http://localhost:5173,http://127.0.0.1:5173,http://localhost:8080,http://127.0.0.1:8080,http://localhost:$(PORT),http://127.0.0.1:$(PORT)
GRAPHIQL_VERSION := 3.8.3
REACT_VERSION := 18.3.1
ESBUILD_VERSION := 0.25.12
PACKAGES := api resolvers services storage domain
EXPLORER_STATIC := api/http/static

.PHONY: run venv test bench lint lock wheel schema docs explorer-assets clean

$(VENV)/bin/pip:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml $(LOCK) | $(VENV)/bin/pip
	$(BIN)/pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml $(DEV_LOCK) | $(VENV)/bin/pip
	$(BIN)/pip install --quiet --require-hashes -r $(DEV_LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP) $(RUN_STAMP)

$(CHECKOV_STAMP): $(CHECKOV_LOCK) | $(VENV)/bin/pip
	$(PYTHON) -m venv $(VENV)/checkov
	$(VENV)/checkov/bin/pip install --quiet --require-hashes -r $(CHECKOV_LOCK)
	touch $(CHECKOV_STAMP)

# After changing dependencies in pyproject.toml. Versions already locked are
# kept where they still fit; the serving and build locks take the dev lock's
# versions, so all three agree. tests/deploy/test_lock.py fails while a lock is stale.
lock: $(STAMP)
	$(UV_COMPILE) --extra=dev --output-file=$(DEV_LOCK) pyproject.toml
	$(UV_COMPILE) --constraint=$(DEV_LOCK) --output-file=$(LOCK) pyproject.toml
	$(UV_COMPILE) --constraint=$(DEV_LOCK) --output-file=$(BUILD_LOCK) requirements-build.in
	$(UV_COMPILE) --output-file=$(CHECKOV_LOCK) requirements-checkov.in

# The wheel the systemd unit installs (deploy/README.md), into dist/.
wheel: $(STAMP)
	$(BIN)/pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist .

# The venv alone, for the recipes in docs/operations.md (.venv/bin/proofgate).
venv: $(RUN_STAMP)

run: $(RUN_STAMP)
	PROOFGATE_CORS_ORIGINS="$(PROOFGATE_CORS_ORIGINS)" \
		$(BIN)/proofgate serve --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR) --demo

test: $(STAMP) $(CHECKOV_STAMP) lint
	$(BIN)/python -m pytest -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check $(PACKAGES) tests bench
	$(BIN)/ruff format --check $(PACKAGES) tests bench
	$(BIN)/mypy

schema: $(RUN_STAMP)
	$(BIN)/proofgate export-schema > schema.graphql

docs: $(RUN_STAMP)
	$(BIN)/proofgate explain --markdown > docs/access-patterns.md

# The explorer's vendored GraphiQL, rebuilt from the npm registry (needs npm).
# The output is committed: neither `make run` nor a browser needs the network.
explorer-assets:
	set -e; work=$$(mktemp -d); trap 'rm -rf "$$work"' EXIT; cd "$$work"; \
	npm pack --silent graphiql@$(GRAPHIQL_VERSION) react@$(REACT_VERSION) \
		react-dom@$(REACT_VERSION) >/dev/null; \
	printf '%s  %s\n' \
		1cadb1c2ca0dc51ea71fb4bb2680e6185e83fe400c9a62ca5fb9dfb922472bbd graphiql-$(GRAPHIQL_VERSION).tgz \
		8d9bed01a672e7eaf387942d781ad47c6a43089a30a0306060f9fd5ac7870347 react-$(REACT_VERSION).tgz \
		031d4427a99f2f3f6cac18bbbf308594a67e4f47d10f4896fdec446505b040e0 react-dom-$(REACT_VERSION).tgz \
		| sha256sum --quiet -c -; \
	for f in *.tgz; do mkdir "$${f%.tgz}"; tar xzf "$$f" -C "$${f%.tgz}"; done; \
	npm install --silent --no-save --no-audit --no-fund esbuild@$(ESBUILD_VERSION) >/dev/null; \
	static="$(CURDIR)/$(EXPLORER_STATIC)"; graphiql=graphiql-$(GRAPHIQL_VERSION)/package; \
	for asset in graphiql.min.js graphiql.min.css; do \
		node_modules/.bin/esbuild "$$graphiql/$$asset" --minify --legal-comments=eof \
			--log-level=error --outfile="$$static/$$asset"; \
	done; \
	cp react-$(REACT_VERSION)/package/umd/react.production.min.js "$$static/"; \
	cp react-dom-$(REACT_VERSION)/package/umd/react-dom.production.min.js "$$static/"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
