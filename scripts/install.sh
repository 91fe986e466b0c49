#!/usr/bin/env bash
# Installs what notary needs on a fresh Debian machine: Debian packages (only those missing), Node.js >= 22 (Node 24
# from the npm registry when the system's Node is older, see scripts/node-env.sh) and the npm dependencies; for
# tests also Go for sdk/go (scripts/go-env.sh) with its modules, and the Python client library's venv.
# Usage: scripts/install.sh [runtime|test]. Safe to re-run: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-runtime}"

# A compiler and python3 for any native module without a prebuilt binary (node-gyp), and the reference venv.
debs=(build-essential python3 python3-venv)
if [ "$profile" = test ]; then
  # Redis and pgvector for the scaled-out backends' suites. Debian 12 ships no pgvector package: it is built from the
  # source in vendor/pgvector (v0.8.6, PostgreSQL License) against Debian's PostgreSQL 15 server headers.
  debs+=(chromium postgresql postgresql-doc-15 python3.11-doc python3-cryptography curl openssl redis-server postgresql-server-dev-15)
  # go test of sdk/go: with no go at all, Debian's golang-go (1.19 on bookworm) bootstraps the release in .go-version
  # from the Go module proxy (scripts/go-env.sh, sourced below).
  if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then debs+=(golang-go); fi
fi

missing=()
for p in "${debs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "notary: installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "$profile" = test ]; then
  pg_config_bin=/usr/lib/postgresql/15/bin/pg_config
  if [ -x "$pg_config_bin" ] && [ ! -f "$("$pg_config_bin" --pkglibdir)/vector.so" ]; then
    echo "notary: building pgvector from vendor/pgvector for PostgreSQL 15" >&2
    build="$(mktemp -d)"
    cp -r vendor/pgvector/. "$build/"
    sudo_cmd=()
    if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
    make -s -C "$build" PG_CONFIG="$pg_config_bin" OPTFLAGS="" >/dev/null
    "${sudo_cmd[@]}" make -s -C "$build" PG_CONFIG="$pg_config_bin" install >/dev/null
    rm -rf "$build"
  fi
fi

# shellcheck source=scripts/node-env.sh
. scripts/node-env.sh
if [ "$profile" = test ]; then
  # shellcheck source=scripts/go-env.sh
  . scripts/go-env.sh
fi

# onnxruntime-node's install script downloads CUDA files; its CPU library ships inside the package. package.json's
# allowScripts denies that script (npm 11.16+; npm 12 runs only the scripts listed there); older npm reads this.
export ONNXRUNTIME_NODE_INSTALL=skip
# node_modules records the Node ABI it was built for: a switch of Node version (20 -> 24) rebuilds it.
node_abi="$(node -p process.versions.modules)"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
  || [ ! -d node_modules/better-sqlite3 ] \
  || [ "$(cat node_modules/.notary-node-abi 2>/dev/null)" != "$node_abi" ]; then
  echo "notary: installing npm packages for Node $(node --version)" >&2
  # Headers for node-gyp come from the Node in use (the npm package carries include/node): no download.
  if [ -f "$NOTARY_NODE_DIR/include/node/node.h" ]; then export npm_config_nodedir="$NOTARY_NODE_DIR"; fi
  npm ci --no-audit --no-fund
  echo "$node_abi" > node_modules/.notary-node-abi
fi

if [ "$profile" = test ]; then
  # The client libraries' suites: sdk/go's modules, and sdk/python's venv (httpx, cryptography, rfc8785, eth-account, pytest).
  (cd sdk/go && go mod download)
  bash scripts/sdk-python-venv.sh >/dev/null
fi
