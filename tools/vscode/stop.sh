#!/usr/bin/env bash
# Why: killing only code-server's main pid leaves its extension host or file watcher behind
# (pitfall 9); start.sh made it a process group leader, so end the whole group.
# Usage: tools/vscode/stop.sh RUN_DIR
set -uo pipefail
trap '' INT HUP   # finish even when the terminal or the caller is going away (Ctrl-C, hang-up)
RUN=${1:?usage: stop.sh RUN_DIR}
[ -f "$RUN/cs.pid" ] || exit 0
PID=$(cat "$RUN/cs.pid")
if kill -0 -- -"$PID" 2>/dev/null; then
  kill -TERM -- -"$PID" 2>/dev/null
  for _ in $(seq 50); do kill -0 -- -"$PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- -"$PID" 2>/dev/null
fi
rm -f "$RUN/cs.pid" "$RUN/url"
if [ -f "$RUN/tmpdir" ]; then rm -rf "$(cat "$RUN/tmpdir")" "$RUN/tmpdir"; fi
exit 0
