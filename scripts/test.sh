#!/usr/bin/env bash
# One command from a fresh clone to the whole test suite: installs what is missing (Chromium, PostgreSQL,
# the PostgreSQL docs corpus, Go, npm packages), then typecheck, lint and every vitest project.
set -euo pipefail
cd "$(dirname "$0")/.."
# Node first: install.sh then finds Node >= 22 on PATH, so "notary: using Node ..." is said once, here.
# shellcheck source=scripts/node-env.sh
. scripts/node-env.sh
bash scripts/install.sh test
# The Python reference pipeline (tokenizers + onnxruntime) the reranker parity test compares against.
NOTARY_REFERENCE_PYTHON="$(bash scripts/reference-venv.sh)"
export NOTARY_REFERENCE_PYTHON
# The independent receipt verifier (cryptography + rfc8785) the receipt suites run against a live server.
NOTARY_RECEIPTS_PYTHON="$(bash scripts/receipts-venv.sh)"
export NOTARY_RECEIPTS_PYTHON
# The Python client library's dependencies (httpx, cryptography, rfc8785, eth-account, pytest) for its pytest run.
NOTARY_SDK_PYTHON="$(bash scripts/sdk-python-venv.sh)"
export NOTARY_SDK_PYTHON
# The Go client library is tested with go test (its modules from the Go module proxy): a go new enough first on PATH.
# shellcheck source=scripts/go-env.sh
. scripts/go-env.sh
npm run typecheck
npm run lint
# Schemathesis, Spectral + OWASP ruleset and MCP conformance at pinned versions, for test/external-suites.test.ts.
eval "$(bash scripts/external-suites.sh --env)"
report="$(mktemp -t notary-vitest-XXXXXX.json)"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" || status=$?
# A closing line CI can read: "N passed, N failed, N skipped".
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
if (r.numTotalTests === 0) { console.error("no test ran"); process.exit(1); }
' "$report" || status=1
rm -f "$report"
exit $status
