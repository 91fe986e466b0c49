#!/usr/bin/env bash
# One command from a fresh clone to a running service on embedded defaults (SQLite + FTS5 in ./data).
# Extra arguments go to `notary serve`, e.g. scripts/quickstart.sh --port 9000
# The first start fetches the two pinned models (bi-encoder and cross-encoder) into ./data/models with progress;
# without a reachable hub (NOTARY_HUB_URL) it says so in one line and serves lexically (docs/models.md, Fetching the models).
set -euo pipefail
cd "$(dirname "$0")/.."
# Node first: install.sh then finds Node >= 22 on PATH, so "notary: using Node ..." is said once, here.
# shellcheck source=scripts/node-env.sh
. scripts/node-env.sh
bash scripts/install.sh runtime
exec node bin/notary.js serve "$@"
