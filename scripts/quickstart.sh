#!/usr/bin/env bash
# One command from a fresh clone to a running service on embedded defaults (SQLite + FTS5 in ./data).
# Extra arguments go to `notary serve`, e.g. scripts/quickstart.sh --port 9000
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh runtime
# shellcheck source=scripts/node-env.sh
. scripts/node-env.sh
exec node bin/notary.js serve "$@"
