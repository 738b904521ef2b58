# The two commands of the README: `make run` (open the IDE) and `make test` (every test).
# Both do all the set-up on a fresh machine: a virtualenv in .venv with the pinned deps, the
# node packages (npm ci), code-server (a real VS Code, from npm, into build/vscode/) and the
# packaged extension (build/pypto-ide.vsix).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
VSIX := build/pypto-ide.vsix
# the compiler's hot modules as C extensions (mypyc), into build/native/ (pypto/native.py: used only while it is of
# the current pypto sources, every one of them: mypyc builds in the annotations of what the modules import)
NATIVE := build/native/manifest.json
NATIVE_SRC := tools/build_native.py $(shell find pypto -name '*.py' -not -path '*/__pycache__/*' 2>/dev/null)
# what the .vsix is built from: the extension, the webview bundle and the Python packages (the wheel)
VSIX_SRC := package.json package-lock.json pyproject.toml \
	$(shell find extension webview pypto server -type f -not -path '*/dist/*' -not -path '*/node_modules/*' \
	  -not -path '*/__pycache__/*' -not -name '*.pyc' 2>/dev/null)

.PHONY: run reset-workspace examples test test-vscode lint bench setup clean chromium vscode vsix

setup: $(STAMP) $(NODE_STAMP) $(NATIVE)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[torch,dev]"
	# numba's machine code for the sim board's compiled loop, into its on-disk cache (about 10 s once):
	# otherwise every process that first needs it compiles it at once (tests, servers' workers)
	PYPTO_SIM_JIT=1 $(BIN)/pypto-ide profile examples/softmax.py > /dev/null
	touch $(STAMP)

# the native build (NATIVE, above)
$(NATIVE): $(STAMP) $(NATIVE_SRC)
	$(BIN)/python tools/build_native.py

# node packages (package-lock.json): esbuild/typescript, vsce, playwright-core, the SARIF schema, ...
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# code-server 4.100.3 (VS Code 1.100.3) into build/vscode/code-server, and the Debian packages it
# needs to build, when missing; returns at once when it is there (tools/vscode/install.sh)
vscode:
	bash tools/vscode/install.sh

# the VS Code extension package: bundled extension, webview bundle, the Python wheel
$(VSIX): $(STAMP) $(NODE_STAMP) $(VSIX_SRC)
	npm run package:vsix
vsix: $(VSIX)

# open the IDE: code-server on 127.0.0.1 with our extension and a scratch workspace open — a copy
# of examples/ in build/workspace/, made on first run and kept (the IDE never writes tracked files);
# prints the URL and stays in the foreground until Ctrl-C (PORT=... to choose the port, default 18200)
WORKSPACE ?= build/workspace
run: setup vscode $(VSIX)
	PYPTO_WORKSPACE=$(WORKSPACE) bash tools/vscode/run.sh

# delete the scratch workspace (your edits in it too): the next `make run` copies examples/ afresh
reset-workspace:
	rm -rf $(WORKSPACE)

# compile and run every example and compare it with torch (the command-line check)
examples: $(STAMP)
	$(BIN)/pypto-ide examples

# Debian's chromium for the browser tests (playwright-core drives /usr/bin/chromium)
chromium:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

test: setup chromium vscode $(VSIX)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 -q
	npm run test:webview
	npm run test:extension
	$(MAKE) --no-print-directory test-vscode

# the static checks alone: ruff and the layer contracts (import-linter, pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# the end-to-end tests: the packaged extension in a real VS Code (code-server), driven by
# Chromium; screenshots in build/vscode/screenshots/
test-vscode: setup chromium vscode $(VSIX)
	PYPTO_E2E_REQUIRED=1 node --test tests/vscode/

bench: setup chromium vscode $(VSIX)
	for b in benchmarks/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build
