"""LoRA-input layouts of the bench-10m model (random_model seed 0, the weights of bench/engine's
bundles) for bench/lora-overhead. Not bundles; written under .cache/, never committed.

    training/.venv/bin/python bench/lora-variants.py PLAIN_LM_ONNX OUT_DIR

  all7.onnx    per-module inputs lora.{i}.{m}.A|B on all seven targets
  packed.onnx  all7's inputs replaced by two, lora.A [b, ΣD_in, r] and lora.B [b, r, ΣD_out], cut
               apart by two Split nodes: 2 inputs instead of 2 · layers · modules
  qv.onnx      per-module inputs on q and v only (LoRA's and Text-to-LoRA's targets)
  nodes.json   node and input counts of these and of PLAIN_LM_ONNX, after onnxruntime's optimizations
"""
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from pskills_train.export.bundle import random_model
from pskills_train.export.onnx_lm import export_lm


def packed(src: Path, dst: Path) -> None:
    m = onnx.load(src)
    g = m.graph
    lora = [i for i in g.input if i.name.startswith("lora.")]
    a = [i for i in lora if i.name.endswith(".A")]
    b = [i for i in lora if i.name.endswith(".B")]
    dim = lambda vi, k: vi.type.tensor_type.shape.dim[k]  # noqa: E731
    batch, rank = dim(a[0], 0).dim_param, dim(a[0], 2).dim_param
    a_sizes, b_sizes = [dim(i, 1).dim_value for i in a], [dim(i, 2).dim_value for i in b]
    g.initializer.extend([numpy_helper.from_array(np.array(a_sizes, np.int64), "lora.A.sizes"),
                          numpy_helper.from_array(np.array(b_sizes, np.int64), "lora.B.sizes")])
    split = [helper.make_node("Split", ["lora.A", "lora.A.sizes"], [i.name for i in a], axis=1),
             helper.make_node("Split", ["lora.B", "lora.B.sizes"], [i.name for i in b], axis=2)]
    rest = [i for i in g.input if not i.name.startswith("lora.")]
    del g.input[:]
    g.input.extend(rest + [helper.make_tensor_value_info("lora.A", TensorProto.FLOAT, [batch, sum(a_sizes), rank]),
                           helper.make_tensor_value_info("lora.B", TensorProto.FLOAT, [batch, rank, sum(b_sizes)])])
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(split + nodes)
    onnx.checker.check_model(m)
    onnx.save(m, dst)


def counts(path: Path) -> dict:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(path.with_suffix(".opt.onnx"))
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    g = onnx.load(so.optimized_model_filepath, load_external_data=False).graph
    path.with_suffix(".opt.onnx").unlink()
    return {"nodes": len(g.node), "inputs": len(g.input), "matmul": sum(n.op_type == "MatMul" for n in g.node)}


def main() -> None:
    plain, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    lm, _ = random_model("bench-10m", seed=0)
    for name, targets in (("all7", ("q", "k", "v", "o", "gate", "up", "down")), ("qv", ("q", "v"))):
        lm.cfg = replace(lm.cfg, lora_targets=targets)
        export_lm(lm, out / f"{name}.onnx")
    packed(out / "all7.onnx", out / "packed.onnx")
    graphs = {"plain": plain, "all7": out / "all7.onnx", "packed": out / "packed.onnx", "qv": out / "qv.onnx"}
    (out / "nodes.json").write_text(json.dumps({k: counts(p) for k, p in graphs.items()}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
