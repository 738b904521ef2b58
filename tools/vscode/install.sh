#!/usr/bin/env bash
# Why: a real VS Code for `make run` and the end-to-end tests, installed from the npm registry
# only (code-server, which contains the VS Code server and web workbench), project-locally and
# idempotently. Adapted from the team's offline recipe (shared/vscode-e2e); the numbered
# pitfalls below are the ones that recipe hit on these machines.
#
# Usage: tools/vscode/install.sh [--browser] [prefix]     (prefix defaults to build/vscode/code-server)
#   --browser   also make sure Debian's chromium is there (the e2e tests drive it)
# A second run with code-server already in place returns at once.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BROWSER=0
if [ "${1:-}" = --browser ]; then BROWSER=1; shift; fi
PREFIX=${1:-$ROOT/build/vscode/code-server}
VER=${PYPTO_CODE_SERVER_VERSION:-4.100.3}   # = VS Code 1.100.3, the last line that runs on Node 20
mkdir -p "$PREFIX"; PREFIX=$(cd "$PREFIX" && pwd)
CS="$PREFIX/node_modules/.bin/code-server"

# Debian packages, only those missing: rg seeds @vscode/ripgrep's download (pitfall 5); argon2
# and kerberos fall back to source builds (pitfall 6).
need=()
if [ "$BROWSER" = 1 ]; then command -v chromium >/dev/null || need+=(chromium); fi
installed() { [ -x "$CS" ] && [ "$(node -p "require('$PREFIX/node_modules/code-server/package.json').version" 2>/dev/null)" = "$VER" ]; }
if ! installed; then
  command -v rg >/dev/null || need+=(ripgrep)
  command -v g++ >/dev/null || need+=(g++)
  command -v make >/dev/null || need+=(make)
  command -v python3 >/dev/null || need+=(python3)
  [ -e /usr/include/krb5.h ] || [ -e /usr/include/krb5/krb5.h ] || need+=(libkrb5-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "tools/vscode/install.sh: installing Debian packages: ${need[*]}"
  SUDO=(); [ "$(id -u)" = 0 ] || SUDO=(sudo)
  if [ ${#SUDO[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
    echo "error: these Debian packages are missing and I am not root: apt-get install ${need[*]}" >&2; exit 1
  fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if installed; then echo "code-server $VER already installed in $PREFIX"; exit 0; fi

# Node: code-server's postinstall insists on the exact major in its engines.node (pitfall 1).
NEED=$(npm view "code-server@$VER" engines.node 2>/dev/null | tr -dc '0-9')
HAVE=$(node -p 'process.versions.node.split(".")[0]')
if [ "$NEED" != "$HAVE" ]; then
  echo "error: code-server $VER needs Node $NEED, this machine has Node $HAVE" >&2; exit 1
fi
NODEHOME=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
[ -f "$NODEHOME/include/node/node.h" ] || { echo "error: no Node headers under $NODEHOME/include/node (node-gyp needs them)" >&2; exit 1; }

# node-gyp uses the local headers instead of downloading them (2); npx inside node-pty's
# postinstall must not prompt, whatever ~/.npmrc says (3); postinstall as root (4).
export npm_config_nodedir="$NODEHOME" npm_config_yes=true npm_config_unsafe_perm=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export TMPDIR="$PREFIX/tmp"; rm -rf "$TMPDIR"; mkdir -p "$TMPDIR"

# Seed @vscode/ripgrep's download cache with Debian's rg (5): its postinstall looks there
# before GitHub. The version and file name come from the code-server package itself.
(cd "$TMPDIR" && npm pack -s "code-server@$VER" >/dev/null && tar xzf "code-server-$VER.tgz" package/lib/vscode/npm-shrinkwrap.json)
RGV=$(node -p "(require('$TMPDIR/package/lib/vscode/npm-shrinkwrap.json').packages['node_modules/@vscode/ripgrep']||{}).version||''")
if [ -n "$RGV" ]; then
  (cd "$TMPDIR" && npm pack -s "@vscode/ripgrep@$RGV" >/dev/null && tar xzf "vscode-ripgrep-$RGV.tgz" package/lib/postinstall.js)
  RGBIN=$(grep -oE "^const VERSION = '[^']+'" "$TMPDIR/package/lib/postinstall.js" | cut -d"'" -f2)
  mkdir -p "$TMPDIR/vscode-ripgrep-cache-$RGV"
  tar czf "$TMPDIR/vscode-ripgrep-cache-$RGV/ripgrep-$RGBIN-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
fi

# code-server itself: ~8 native modules built by node-gyp, about a minute on 2 cores.
echo "{\"name\":\"pypto-ide-code-server\",\"private\":true,\"dependencies\":{\"code-server\":\"$VER\"}}" > "$PREFIX/package.json"
(cd "$PREFIX" && npm install --no-audit --no-fund --loglevel=error --no-package-lock)
rm -rf "$TMPDIR"
installed || { echo "error: code-server $VER did not install into $PREFIX" >&2; exit 1; }
echo "code-server $VER installed in $PREFIX"
