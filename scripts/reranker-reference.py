#!/usr/bin/env python3
"""The reference cross-encoder pipeline: Hugging Face tokenizers (Rust) + onnxruntime, one pair per run.

Reads {"model_dir", "onnx", "max_length", "pairs": [[query, passage], ...]} as JSON on stdin and writes
{"onnxruntime", "cases": [{"input_ids", "token_type_ids", "logit"}]} on stdout. test/reranker-parity.test.ts runs it
on the same machine as notary's TypeScript pipeline, because int8 kernels round differently between CPUs.
"""
import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main() -> None:
    req = json.load(sys.stdin)
    tokenizer = Tokenizer.from_file(f"{req['model_dir']}/tokenizer.json")
    tokenizer.enable_truncation(max_length=req["max_length"], strategy="longest_first")
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(f"{req['model_dir']}/{req['onnx']}", options, providers=["CPUExecutionProvider"])
    cases = []
    for query, passage in req["pairs"]:
        enc = tokenizer.encode(query, passage)
        ids = np.array([enc.ids], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
        }
        logit = float(session.run(None, feeds)[0][0][0])
        cases.append({"input_ids": enc.ids, "token_type_ids": enc.type_ids, "logit": logit})
    json.dump({"onnxruntime": ort.__version__, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
