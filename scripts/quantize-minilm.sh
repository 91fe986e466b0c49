#!/usr/bin/env bash
# Makes the int8 copy of the bi-encoder used for fast embedding (embeddings.precision "int8"): a small Python venv
# OUTSIDE the repository with onnxruntime's quantisation tooling (onnxruntime + onnx + numpy, about 60 MB), then
# scripts/quantize-minilm.py. Takes well under a minute once the venv exists; safe to re-run.
#
#   scripts/quantize-minilm.sh                       # ../shared/models/all-MiniLM-L6-v2 -> ~/.cache/notary/models/all-MiniLM-L6-v2-int8
#   scripts/quantize-minilm.sh --src DIR --out DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${NOTARY_QUANTIZE_VENV:-${HOME}/.cache/notary/quantize-venv}"
python="${PYTHON:-python3}"
shared="${NOTARY_SHARED_DIR:-${here}/../../shared}"
args=("$@")
if [[ " $* " != *" --src "* ]]; then args+=(--src "${shared}/models/all-MiniLM-L6-v2"); fi
if [[ " $* " != *" --out "* ]]; then args+=(--out "${HOME}/.cache/notary/models/all-MiniLM-L6-v2-int8"); fi
if [ ! -x "${venv}/bin/python" ]; then
  echo "[quantize-minilm.sh] creating virtualenv ${venv}" >&2
  "${python}" -m venv "${venv}"
fi
if ! "${venv}/bin/python" -c 'import onnx, onnxruntime.quantization, sympy' 2>/dev/null; then
  # sympy: onnxruntime.transformers' optimizer (--fuse) needs it for symbolic shape inference.
  echo "[quantize-minilm.sh] installing onnxruntime==1.31.1 onnx==1.23.2 numpy==2.4.6 sympy==1.14.0 into ${venv}" >&2
  "${venv}/bin/pip" install -q onnxruntime==1.31.1 onnx==1.23.2 numpy==2.4.6 sympy==1.14.0 >&2
fi
exec "${venv}/bin/python" "${here}/quantize-minilm.py" "${args[@]}"
