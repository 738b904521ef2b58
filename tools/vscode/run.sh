#!/usr/bin/env bash
# Why: `make run` opens the IDE — code-server on 127.0.0.1 with the packaged extension
# installed, a scratch copy of examples/ open (build/workspace/, made on first run by
# workspace.sh and kept after: the IDE never writes the repository's tracked files) and the
# extension pointed at .venv's python — and stays in the foreground until Ctrl-C, which stops
# code-server's whole process group.
# The set-up (venv, npm ci, code-server, the .vsix) is the Makefile's; this only starts and stops.
#
# Usage: tools/vscode/run.sh [--port N] [--folder DIR]     (PORT=N in the environment works too)
#   --folder   open DIR itself instead of the scratch workspace (edits then land in DIR)
#   PYPTO_WORKSPACE=DIR     the scratch workspace (default build/workspace; make reset-workspace deletes it)
#   PYPTO_VSCODE_RUN=DIR    code-server's run directory (default build/vscode/run)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PORT=${PORT:-18200}; FOLDER=
while [ $# -gt 0 ]; do
  case $1 in
    --port) PORT=$2; shift 2 ;;
    --folder) FOLDER=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
SCRATCH=
if [ -z "$FOLDER" ]; then
  FOLDER=$(bash "$ROOT/tools/vscode/workspace.sh"); SCRATCH=1
fi
RUN=${PYPTO_VSCODE_RUN:-$ROOT/build/vscode/run}   # kept between runs: your open editors, panels and settings
VSIX=${PYPTO_VSIX:-$ROOT/build/pypto-ide.vsix}

TAIL=
stop() {
  trap - INT TERM EXIT; echo; echo "stopping code-server"
  bash "$ROOT/tools/vscode/stop.sh" "$RUN"
  [ -z "$TAIL" ] || kill "$TAIL" 2>/dev/null || true
}
interrupted() { stop; exit 0; }
URL=$(bash "$ROOT/tools/vscode/start.sh" --run "$RUN" --port "$PORT" --folder "$FOLDER" \
  --interpreter "$ROOT/.venv/bin/python" --vsix "$VSIX" --owner $$ | tail -1)
trap interrupted INT TERM
trap stop EXIT
cat <<EOF

  PyPTO IDE (VS Code $(node -p "require('$ROOT/build/vscode/code-server/node_modules/code-server/lib/vscode/product.json').version" 2>/dev/null || echo '') in code-server) is running:

      $URL

  Workspace: $FOLDER
$( [ -n "$SCRATCH" ] && echo "  (a copy of examples/, kept between runs; make reset-workspace starts a fresh one)" || echo "  (opened as given: edits are saved into it)")

  Open it in a browser on this machine (bound to 127.0.0.1 only, no password).
  From another machine: ssh -L $PORT:127.0.0.1:$PORT <this host>, then open the same URL.
  Logs: $RUN/cs.log. Press Ctrl-C to stop.

EOF
# in the foreground until code-server exits or Ctrl-C (the trap stops it); new log lines show here.
# `wait` on a background tail, because bash runs a trap only once its foreground command ends.
tail -n 0 --pid="$(cat "$RUN/cs.pid")" -f "$RUN/cs.log" &
TAIL=$!
wait "$TAIL" || true
TAIL=
echo "code-server exited; its log is $RUN/cs.log" >&2
exit 1
