#!/usr/bin/env bash
# Installs what notary needs on a fresh Debian machine: Debian packages (only those missing), Node.js >= 22 (Node 24
# from the npm registry when the system's Node is older, see scripts/node-env.sh) and the npm dependencies.
# Usage: scripts/install.sh [runtime|test]. Safe to re-run: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-runtime}"

# A compiler and python3 for any native module without a prebuilt binary (node-gyp), and the reference venv.
debs=(build-essential python3 python3-venv)
if [ "$profile" = test ]; then
  debs+=(chromium postgresql postgresql-doc-15 python3.11-doc python3-cryptography curl openssl)
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

# shellcheck source=scripts/node-env.sh
. scripts/node-env.sh

# onnxruntime-node's install script downloads CUDA files; its CPU library ships inside the package.
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
