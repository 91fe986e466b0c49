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
    parser.add_argument("--weight-type", choices=("s8", "u8"), default="s8", help="int8 weights signed (QInt8) or unsigned (QUInt8)")
    parser.add_argument("--reduce-range", action="store_true", help="7-bit weights (quantize_dynamic reduce_range)")
    parser.add_argument(
        "--fuse",
        action="store_true",
        help="fuse attention, LayerNorm and GELU with onnxruntime.transformers' BERT optimizer first (needs sympy)",
    )
    parser.add_argument("--no-quantize", action="store_true", help="with --fuse: write the fused fp32 model only (measurements)")
    args = parser.parse_args()
    if args.no_quantize and not args.fuse:
        log("--no-quantize only makes sense with --fuse")
        return 2

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
        int8 = work / "onnx" / ("model_fused.onnx" if args.no_quantize else "model_int8.onnx")
        per_channel = not args.per_tensor
        weight_type = QuantType.QInt8 if args.weight_type == "s8" else QuantType.QUInt8
        source = fp32
        steps = []
        if args.fuse:
            from onnxruntime.transformers import optimizer

            config = json.loads((src / "config.json").read_text())
            heads, hidden = int(config["num_attention_heads"]), int(config["hidden_size"])
            log(f"fusing {fp32} (bert, {heads} heads, hidden {hidden})")
            fused = optimizer.optimize_model(str(fp32), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=0)
            stats = fused.get_fused_operator_statistics()
            log(f"fused operators: { {k: v for k, v in stats.items() if v} }")
            source = int8 if args.no_quantize else work / "fused.onnx"
            fused.save_model_to_file(str(source))
            steps.append(f"onnxruntime.transformers.optimizer.optimize_model(model_type=bert, num_heads={heads}, hidden_size={hidden}, opt_level=0)")
        if not args.no_quantize:
            log(f"quantize_dynamic {source} ({weight_type.name} weights, per_channel={per_channel}, reduce_range={args.reduce_range})")
            quantize_dynamic(
                str(source),
                str(int8),
                weight_type=weight_type,
                per_channel=per_channel,
                reduce_range=args.reduce_range,
                # Fused operators (Attention, SkipLayerNormalization) are outside ONNX shape inference's domain.
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
            steps.append(f"onnxruntime.quantization.quantize_dynamic(weight_type={weight_type.name}, per_channel={per_channel}, reduce_range={args.reduce_range})")
            if source != fp32:
                source.unlink()
        onnx.checker.check_model(str(int8))
        for name in COPIED:
            if (src / name).is_file():
                shutil.copyfile(src / name, work / name)
        report = {
            "source": str(src),
            "source_onnx_sha256": sha256_file(fp32),
            "method": " then ".join(steps),
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
        log(f"wrote {out} ({int8.name}: {(out / 'onnx' / int8.name).stat().st_size:,} bytes)")
        return 0
    finally:
        if work != out and work.exists():
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
