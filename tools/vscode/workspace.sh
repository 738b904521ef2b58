#!/usr/bin/env bash
# Why: `make run` opens a scratch workspace, never the repository's tracked examples/: code-server
# saves as you type and Apply rewrites a tile-shape call, so every tuning experiment would dirty
# the repository. The workspace is a copy of examples/ made on first use and then left alone (your
# edits, .pypto/history/ and open editors survive restarts); delete it for a fresh copy
# (`make reset-workspace`).
#
# Usage: tools/vscode/workspace.sh [DIR]   (default: $PYPTO_WORKSPACE, else build/workspace)
# Prints the workspace's absolute path.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WS=${1:-${PYPTO_WORKSPACE:-$ROOT/build/workspace}}
if [ -e "$WS" ] && [ ! -d "$WS" ]; then
  echo "workspace.sh: $WS exists and is not a folder" >&2; exit 1
fi
if [ ! -d "$WS" ]; then
  PARENT=$(dirname "$WS"); mkdir -p "$PARENT"
  # copied beside it and renamed into place: an interrupted copy is never taken for the workspace
  TMP=$(mktemp -d "$PARENT/.workspace.XXXXXX")
  trap 'rm -rf "$TMP"' EXIT
  (cd "$ROOT/examples" && tar --exclude=__pycache__ --exclude='*.pyc' -cf - .) | (cd "$TMP" && tar -xf -)
  chmod 755 "$TMP"
  mv "$TMP" "$WS"
  trap - EXIT
fi
cd "$WS" && pwd
