#!/usr/bin/env bash
# Why: one way to start code-server for both `make run` and the end-to-end tests — bound to
# 127.0.0.1 without a password, everything it writes (HOME, XDG dirs, user data, extensions)
# kept under a run directory, in its own process group so that stop.sh can end all of it.
#
# Usage: tools/vscode/start.sh --run DIR --port N --folder DIR [--interpreter PY]
#                              [--settings JSON] [--vsix FILE]... [--owner PID] [--prefix CODE_SERVER_PREFIX]
#   --interpreter  written as the remote (machine) setting pypto.interpreter
#   --settings     a JSON object merged over the default user settings (e.g. '{"pypto.debounceMs":100}')
#   --vsix         installed with --install-extension (--force: a rebuilt .vsix replaces the old one)
#   --owner        a pid: code-server is ended when that process is gone
# Prints the URL on the last line. Writes DIR/cs.pid (the process group), DIR/cs.log, DIR/url.
# The caller's environment reaches the extension host.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX=$ROOT/build/vscode/code-server; RUN=; PORT=; FOLDER=; INTERP=; SETTINGS='{}'; VSIX=(); OWNER=
while [ $# -gt 0 ]; do
  case $1 in
    --run) RUN=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --folder) FOLDER=$2; shift 2 ;;
    --interpreter) INTERP=$2; shift 2 ;;
    --settings) SETTINGS=$2; shift 2 ;;
    --vsix) VSIX+=("$2"); shift 2 ;;
    --prefix) PREFIX=$2; shift 2 ;;
    --owner) OWNER=$2; shift 2 ;;
    *) echo "start.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$RUN" ] && [ -n "$PORT" ] && [ -n "$FOLDER" ] || { echo "usage: start.sh --run DIR --port N --folder DIR [...]" >&2; exit 2; }
CS="$PREFIX/node_modules/.bin/code-server"
[ -x "$CS" ] || { echo "error: no code-server in $PREFIX: run tools/vscode/install.sh (make run does)" >&2; exit 1; }
RUN=$(mkdir -p "$RUN" && cd "$RUN" && pwd); FOLDER=$(cd "$FOLDER" && pwd)
if [ -f "$RUN/cs.pid" ] && kill -0 -- -"$(cat "$RUN/cs.pid")" 2>/dev/null; then
  echo "error: a code-server from $RUN is still running (pid $(cat "$RUN/cs.pid")): tools/vscode/stop.sh $RUN" >&2; exit 1
fi
if curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" || (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "error: port $PORT on 127.0.0.1 is already in use (choose another: PORT=... make run)" >&2; exit 1
fi

# Files outside the run directory (pitfall 8): HOME and the XDG dirs point inside it. TMPDIR
# holds code-server's IPC sockets, whose paths must stay under 108 bytes: inside the run dir
# when its path is short, else a private one in /tmp (stop.sh removes it).
export HOME="$RUN/home" XDG_CONFIG_HOME="$RUN/xdg/config" XDG_DATA_HOME="$RUN/xdg/data" XDG_CACHE_HOME="$RUN/xdg/cache"
if [ ${#RUN} -le 40 ]; then TMPDIR=$RUN/tmp; mkdir -p "$TMPDIR"
else TMPDIR=$(mktemp -d "${PYPTO_VSCODE_TMP:-/tmp}/pypto-cs.XXXXXX"); echo "$TMPDIR" > "$RUN/tmpdir"; fi
export TMPDIR
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$RUN/ud/User" "$RUN/ext"

# User settings: a quiet workbench (no telemetry, update checks, tips or trust prompt) and ours.
# pypto.interpreter is machine-scoped, and code-server is a remote window: VS Code takes such a
# setting from the remote ("Machine") settings, not the browser-side user settings, so it goes
# into ud/Machine/settings.json (Preferences: Open Remote Settings).
BASE='{ "workbench.startupEditor": "none", "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off", "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "update.mode": "none", "workbench.enableExperiments": false, "workbench.tips.enabled": false,
  "extensions.ignoreRecommendations": true, "git.enabled": false, "workbench.welcomePage.walkthroughs.openOnInstall": false }'
mkdir -p "$RUN/ud/Machine"
node -e '
  const [base, interp, extra, user, machine] = process.argv.slice(1);
  const fs = require("fs");
  fs.writeFileSync(user, JSON.stringify({ ...JSON.parse(base), ...JSON.parse(extra) }, null, 2) + "\n");
  let m = {};
  try { m = fs.existsSync(machine) ? JSON.parse(fs.readFileSync(machine, "utf8") || "{}") : {}; }
  catch (e) { console.error(`warning: ${machine} is not plain JSON (comments?); pypto.interpreter left as it is there`); m = null; }
  if (m && interp) { m["pypto.interpreter"] = interp; fs.writeFileSync(machine, JSON.stringify(m, null, 2) + "\n"); }
' "$BASE" "$INTERP" "$SETTINGS" "$RUN/ud/User/settings.json" "$RUN/ud/Machine/settings.json"

for v in ${VSIX[@]+"${VSIX[@]}"}; do
  [ -f "$v" ] || { echo "error: no extension package $v" >&2; exit 1; }
  "$CS" --user-data-dir "$RUN/ud" --extensions-dir "$RUN/ext" --install-extension "$v" --force >"$RUN/install.log" 2>&1 \
    || { cat "$RUN/install.log" >&2; echo "error: could not install $v" >&2; exit 1; }
done

# setsid: its own process group, so stop.sh ends the extension host and file watcher too (pitfall 9).
# The group's leader is a small shell that runs code-server and, with --owner, ends the whole
# group once the owner process is gone (a test runner killed hard, a closed terminal).
setsid nohup bash -c '
  owner=$1; shift
  "$@" &
  cs=$!
  if [ -n "$owner" ]; then
    while kill -0 "$owner" 2>/dev/null && kill -0 "$cs" 2>/dev/null; do sleep 1; done
    kill -TERM -- -$$ 2>/dev/null
  fi
  wait "$cs"
' pypto-code-server "$OWNER" "$CS" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust --disable-getting-started-override --user-data-dir "$RUN/ud" --extensions-dir "$RUN/ext" \
  "$FOLDER" > "$RUN/cs.log" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$RUN/cs.pid"
# interrupted before it answered: take it down with us
trap 'kill -- -"$PID" 2>/dev/null; exit 130' INT TERM HUP
URL="http://127.0.0.1:$PORT/?folder=$FOLDER"
# wait for /healthz, or for the process to die (a bad flag, a port taken meanwhile)
for _ in $(seq 300); do
  if curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz"; then echo "$URL" > "$RUN/url"; echo "$URL"; exit 0; fi
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
echo "error: code-server did not come up on 127.0.0.1:$PORT; its log ($RUN/cs.log):" >&2
cat "$RUN/cs.log" >&2
kill -- -"$PID" 2>/dev/null || true
exit 1
