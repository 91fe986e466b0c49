#!/usr/bin/env python3
"""Derive an int8 copy of a bi-encoder ONNX model (e.g. ../shared/models/all-MiniLM-L6-v2) for faster embedding.

Dynamic quantisation with onnxruntime's own tooling: weights of MatMul/Gemm to int8 (per channel), activations
quantised at run time. The source folder is only read; the result is a complete model folder (tokenizer.json,
config.json, onnx/model_int8.onnx, quantize-report.json) written atomically to --out, outside the repository.

Usage (inside the venv made by scripts/quantize-minilm.sh):
  python scripts/quantize-minilm.py --src ../shared/models/all-MiniLM-L6-v2 --out ~/.cache/notary/models/all-MiniLM-L6-v2-int8
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

START = time.monotonic()
COPIED = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json")


def log(msg: str) -> None:
    print(f"[quantize-minilm {time.monotonic() - START:5.1f}s] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, required=True, help="model folder with onnx/model.onnx (fp32)")
    parser.add_argument("--out", type=Path, required=True, help="model folder to write")
    parser.add_argument("--per-tensor", action="store_true", help="one weight scale per tensor instead of per channel")
    args = parser.parse_args()

    import onnx
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src: Path = args.src.expanduser().resolve()
    out: Path = args.out.expanduser().resolve()
    repo_root = Path(__file__).resolve().parent.parent
    if out == repo_root or repo_root in out.parents:
        log(f"refusing to write inside the repository ({out})")
        return 2
    fp32 = src / "onnx" / "model.onnx"
    if not fp32.is_file():
        log(f"no {fp32}")
        return 1
    for name in ("tokenizer.json", "config.json"):
        if not (src / name).is_file():
            log(f"no {src / name}")
            return 1

    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=str(out.parent)))
    try:
        (work / "onnx").mkdir()
        int8 = work / "onnx" / "model_int8.onnx"
        per_channel = not args.per_tensor
        log(f"quantize_dynamic {fp32} (QInt8 weights, per_channel={per_channel})")
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=per_channel)
        onnx.checker.check_model(str(int8))
        for name in COPIED:
            if (src / name).is_file():
                shutil.copyfile(src / name, work / name)
        report = {
            "source": str(src),
            "source_onnx_sha256": sha256_file(fp32),
            "method": f"onnxruntime.quantization.quantize_dynamic(weight_type=QInt8, per_channel={per_channel})",
            "onnxruntime": onnxruntime.__version__,
            "onnx": onnx.__version__,
            "files": {},
        }
        for path in sorted(p for p in work.rglob("*") if p.is_file()):
            report["files"][str(path.relative_to(work))] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
        (work / "quantize-report.json").write_text(json.dumps(report, indent=2) + "\n")
        work.chmod(0o755)
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)
        work = out
        log(f"wrote {out} ({int8.name}: {(out / 'onnx' / 'model_int8.onnx').stat().st_size:,} bytes)")
        return 0
    finally:
        if work != out and work.exists():
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
