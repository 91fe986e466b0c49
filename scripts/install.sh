#!/usr/bin/env bash
# Installs what notary needs on a fresh Debian machine with Node 20: Debian packages (only those missing) and the
# npm dependencies. Usage: scripts/install.sh [runtime|test]. Safe to re-run: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-runtime}"

# better-sqlite3 builds from source here: it needs a compiler, python3 and Node's headers.
debs=(build-essential python3)
if [ "$profile" = test ]; then
  debs+=(chromium postgresql postgresql-doc-15)
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

# onnxruntime-node's install script downloads CUDA files; its CPU library ships inside the package.
export ONNXRUNTIME_NODE_INSTALL=skip
if [ -d /usr/include/node ] && [ -z "${npm_config_nodedir:-}" ]; then export npm_config_nodedir=/usr; fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
  || [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ]; then
  echo "notary: installing npm packages (better-sqlite3 compiles from source, about 2 minutes)" >&2
  npm ci --no-audit --no-fund
fi
