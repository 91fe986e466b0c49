#!/usr/bin/env bash
# A virtualenv outside the repository with the Python reference pipeline for the reranker parity test.
# Prints the venv's python on stdout. NOTARY_REFERENCE_VENV overrides the location.
set -euo pipefail
venv="${NOTARY_REFERENCE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/notary/reference-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import onnxruntime, tokenizers, numpy' 2>/dev/null; then
  echo "notary: creating the reranker reference venv in $venv (onnxruntime, tokenizers)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check onnxruntime==1.31.1 tokenizers==0.23.3 numpy==2.4.6 >&2
fi
echo "$venv/bin/python"
