#!/usr/bin/env bash
# The three suites we did not write, at pinned versions, installed outside the repository (nothing in package.json):
#   Schemathesis (PyPI) in a venv, Spectral with the OWASP ruleset and the MCP conformance suite (npm) in a prefix.
# test/external-suites.test.ts runs them against a live `notary serve`, the OpenAPI document and `notary mcp --http`.
#
#   bash scripts/external-suites.sh          install what is missing, then run test/external-suites.test.ts
#   bash scripts/external-suites.sh --env    install what is missing, print the NOTARY_* exports the test reads
#                                            (scripts/test.sh: eval "$(bash scripts/external-suites.sh --env)")
# NOTARY_EXTERNAL_SUITES_DIR overrides the location (default ~/.cache/notary/external-suites).
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS_VERSION=4.32.5
SPECTRAL_VERSION=6.16.3
OWASP_RULESET_VERSION=2.0.1
MCP_CONFORMANCE_VERSION=0.1.16

dir="${NOTARY_EXTERNAL_SUITES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/notary/external-suites}"
venv="$dir/schemathesis-venv"
npm_prefix="$dir/npm"
mkdir -p "$dir"

if [ ! -x "$venv/bin/schemathesis" ] || [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" != "$SCHEMATHESIS_VERSION" ]; then
  echo "notary: installing Schemathesis $SCHEMATHESIS_VERSION into $venv" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi

# shellcheck source=scripts/node-env.sh
. scripts/node-env.sh >&2
want="@stoplight/spectral-cli@$SPECTRAL_VERSION @stoplight/spectral-owasp-ruleset@$OWASP_RULESET_VERSION @modelcontextprotocol/conformance@$MCP_CONFORMANCE_VERSION"
if [ "$(cat "$npm_prefix/.installed" 2>/dev/null)" != "$want" ]; then
  echo "notary: installing $want into $npm_prefix" >&2
  mkdir -p "$npm_prefix"
  [ -f "$npm_prefix/package.json" ] || echo '{"name":"notary-external-suites","private":true}' >"$npm_prefix/package.json"
  # shellcheck disable=SC2086
  npm install --prefix "$npm_prefix" --no-audit --no-fund --save-exact --loglevel=error $want >&2
  echo "$want" >"$npm_prefix/.installed"
fi

exports=(
  "NOTARY_SCHEMATHESIS=$venv/bin/schemathesis"
  "NOTARY_SPECTRAL=$npm_prefix/node_modules/.bin/spectral"
  "NOTARY_EXTERNAL_NODE_MODULES=$npm_prefix/node_modules"
  "NOTARY_MCP_CONFORMANCE=$npm_prefix/node_modules/.bin/conformance"
)
if [ "${1:-}" = --env ]; then
  for e in "${exports[@]}"; do printf 'export %q\n' "$e"; done
  exit 0
fi
for e in "${exports[@]}"; do export "${e?}"; done
exec npx vitest run test/external-suites.test.ts
