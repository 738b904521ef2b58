# The two commands of the README: `make run` (the main job) and `make test` (every test).
# Both do all the set-up on a fresh machine: a virtualenv in .venv with the pinned deps.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed

.PHONY: run test lint bench setup clean chromium

setup: $(STAMP) $(NODE_STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[torch,dev]"
	touch $(STAMP)

# node packages (package-lock.json): the SARIF schema the report tests validate against; later the webview
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

run: $(STAMP)
	$(BIN)/pypto-ide examples

# Debian's chromium for the webview browser tests (playwright-core drives /usr/bin/chromium)
chromium:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

test: $(STAMP) $(NODE_STAMP) chromium
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 -q
	npm run test:webview

bench: $(STAMP)
	for b in benchmarks/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV)
