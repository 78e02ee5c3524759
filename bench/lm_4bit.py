"""A bundle's lm.onnx with its weight MatMuls in 4 bits (onnxruntime's MatMulNBits, com.microsoft
domain), written as a sibling bundle for bench/engine.ts to compare with the float32 one.

    training/.venv/bin/python bench/lm_4bit.py BUNDLE OUT [--block-size 32] [--accuracy-level 0|4] [--head-bits 0|4|8]

Only lm.onnx changes (quantized as `bundle create --weights q4` does, export/lm_q4.py): the train-step
graphs read lm.onnx's float32 weights as external data, so this 4-bit copy leaves them out.
The LoRA MatMuls take their B from graph inputs and stay float32; the embedding (a Gather) too. The
defaults are --weights q4's (int8 activations, a tied head in 8 bits); the options give the other variants.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import onnx
from onnx import numpy_helper
from pskills_train.export.lm_q4 import ACCURACY_LEVEL, HEAD_BITS, quantize_lm
from pskills_train.export.manifest import sha256_file


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--accuracy-level", type=int, default=ACCURACY_LEVEL, help="0: float32 compute; 4: int8 activations")
    ap.add_argument("--head-bits", type=int, choices=(0, 4, 8), default=HEAD_BITS,
                    help="a tied LM head (its MatMul reads Transpose(embedding), which the quantizer skips): a "
                         "transposed copy of its own in 8 or 4 bits, or 0 to leave it float32 (the Gather stays float32)")
    a = ap.parse_args()

    t0 = time.time()
    model = onnx.load(str(a.bundle / "lm.onnx"))
    if a.head_bits == 4:  # the copy made here is quantized with the projections
        inits = {i.name: i for i in model.graph.initializer}
        made = {n.output[0]: n for n in model.graph.node if n.op_type == "Transpose" and n.input[0] in inits}
        for n in model.graph.node:
            if n.op_type == "MatMul" and n.input[1] in made:
                src = inits[made[n.input[1]].input[0]]
                w = numpy_helper.to_array(src).T.copy()
                model.graph.initializer.append(numpy_helper.from_array(w, f"{src.name}.T"))
                n.input[1] = f"{src.name}.T"
    out_model = quantize_lm(model, a.block_size, a.accuracy_level or None, a.head_bits or None)
    ops: dict[str, int] = {}
    for n in out_model.graph.node:
        key = f"{n.domain or 'ai.onnx'}:{n.op_type}"
        ops[key] = ops.get(key, 0) + 1
    tmp = a.out.with_name(f".{a.out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    onnx.save(out_model, str(tmp / "lm.onnx"))
    manifest = json.loads((a.bundle / "bundle.json").read_text())
    files = {"lm.onnx": {"sha256": sha256_file(tmp / "lm.onnx"), "bytes": (tmp / "lm.onnx").stat().st_size}}
    for name in (manifest["tokenizer"]["file"], manifest["tokenizer"]["config"]):
        shutil.copy2(a.bundle / name, tmp / name)
        files[name] = manifest["files"][name]
    manifest["files"] = files
    manifest.pop("train_step", None)
    manifest["id"] = f"{manifest['id']}-q4"
    manifest["training_card"] = {**manifest.get("training_card", {}),
                                 "lm_weights": f"MatMulNBits 4-bit, block {a.block_size}, symmetric, "
                                               f"accuracy_level {a.accuracy_level}"}
    (tmp / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(a.out, ignore_errors=True)
    tmp.rename(a.out)
    print(json.dumps({"out": str(a.out), "seconds": round(time.time() - t0, 1),
                      "lm_onnx_bytes": files["lm.onnx"]["bytes"],
                      "fp32_lm_onnx_bytes": (a.bundle / "lm.onnx").stat().st_size,
                      "matmul_nbits": ops.get("com.microsoft:MatMulNBits", 0), "matmul": ops.get("ai.onnx:MatMul", 0)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
