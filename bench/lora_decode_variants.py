"""What the LoRA path costs a decode step of a 4-bit fused lm.onnx, by graph variant (docs/results.md "The
engine against llama.cpp"): onnxruntime's CPU time of one run (batch 1, 100 cached tokens, 1 thread), the
variants' runs interleaved in rounds, medians. Variants are made from the bundle's lm.onnx in a scratch folder
(never bundles, never committed):

  lora      the graph as exported (qkv, o, gate, up, down pairs per layer)
  plain     its 450 LoRA nodes and 300 lora.* inputs dropped (what a LoRA-free second session would run)
  packed    the 300 inputs fed as two, cut apart by two Split nodes (rank 0 only: the groups' ranks differ)
  gate_up   gate and up sharing one pair: MatMul(x, A [d, 2r]), MatMul(., B [2r, 2·ff]), Split, two Adds
  sum       Add(residual, Add(projection, LoRA)) as one Sum (o and down)

    PYTHONPATH=training/src training/.venv/bin/python bench/lora_decode_variants.py LM_ONNX [OUT_JSON]
"""

import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

PAST, ROUNDS, RUNS = 100, 8, 30


def _lora_inputs(g: onnx.GraphProto) -> set[str]:
    return {i.name for i in g.input if i.name.startswith("lora.")}


def plain(m: onnx.ModelProto) -> None:
    g = m.graph
    lora = _lora_inputs(g)
    prod = {o: n for n in g.node for o in n.output}

    def lora_mm(x: str) -> bool:
        p = prod.get(x)
        return p is not None and p.op_type == "MatMul" and any(y in lora for y in p.input)

    ren, drop = {}, set()
    for n in g.node:
        if n.op_type == "Add" and any(lora_mm(x) for x in n.input):
            ren[n.output[0]] = next(x for x in n.input if not lora_mm(x))
            drop.add(n.name)
        if n.op_type == "MatMul" and (any(y in lora for y in n.input) or any(lora_mm(x) for x in n.input)):
            drop.add(n.name)
    nodes = [n for n in g.node if n.name not in drop]
    for n in nodes:
        for i, x in enumerate(n.input):
            while x in ren:
                x = ren[x]
            n.input[i] = x
    del g.node[:]
    g.node.extend(nodes)
    keep = [i for i in g.input if i.name not in lora]
    del g.input[:]
    g.input.extend(keep)


def packed(m: onnx.ModelProto) -> None:
    g = m.graph
    lora = [i for i in g.input if i.name.startswith("lora.")]
    a, b = [i for i in lora if i.name.endswith(".A")], [i for i in lora if i.name.endswith(".B")]
    dim = lambda vi, k: vi.type.tensor_type.shape.dim[k].dim_value
    sa, sb = [dim(i, 1) for i in a], [dim(i, 2) for i in b]
    g.initializer.extend(
        [
            numpy_helper.from_array(np.array(sa, np.int64), "lora.A.sizes"),
            numpy_helper.from_array(np.array(sb, np.int64), "lora.B.sizes"),
        ]
    )
    split = [
        helper.make_node("Split", ["lora.A", "lora.A.sizes"], [i.name for i in a], axis=1),
        helper.make_node("Split", ["lora.B", "lora.B.sizes"], [i.name for i in b], axis=2),
    ]
    rest = [i for i in g.input if not i.name.startswith("lora.")]
    del g.input[:]
    g.input.extend(
        rest
        + [
            helper.make_tensor_value_info("lora.A", TensorProto.FLOAT, ["batch", sum(sa), "r"]),
            helper.make_tensor_value_info("lora.B", TensorProto.FLOAT, ["batch", "r", sum(sb)]),
        ]
    )
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(split + nodes)


def gate_up(m: onnx.ModelProto) -> None:
    g = m.graph
    dims = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in g.input}
    cons: dict[str, list[onnx.NodeProto]] = collections.defaultdict(list)
    for n in g.node:
        for x in n.input:
            cons[x].append(n)
    layers = sorted({int(i.split(".")[1]) for i in dims if i.startswith("lora.") and ".gate." in i})
    d, f = dims[f"lora.{layers[0]}.gate.A"][1], dims[f"lora.{layers[0]}.gate.B"][2]
    g.initializer.append(numpy_helper.from_array(np.array([f, f], np.int64), "gate_up.split"))
    drop, made, inputs = set(), {}, []
    for i in layers:
        pairs = {}
        for mod in ("gate", "up"):
            a_mm, b_mm = cons[f"lora.{i}.{mod}.A"][0], cons[f"lora.{i}.{mod}.B"][0]
            pairs[mod] = (a_mm, b_mm, cons[b_mm.output[0]][0])
            drop |= {a_mm.name, b_mm.name}
        x = pairs["gate"][0].input[0]
        outs = [f"gu{i}.g", f"gu{i}.u"]
        made[i] = [
            helper.make_node("MatMul", [x, f"lora.{i}.gate_up.A"], [f"gu{i}.xa"], name=f"gu{i}.a"),
            helper.make_node("MatMul", [f"gu{i}.xa", f"lora.{i}.gate_up.B"], [f"gu{i}.xb"], name=f"gu{i}.b"),
            helper.make_node("Split", [f"gu{i}.xb", "gate_up.split"], outs, axis=-1, name=f"gu{i}.split"),
        ]
        for mod, s in zip(("gate", "up"), outs, strict=True):
            add, lo = pairs[mod][2], pairs[mod][1].output[0]
            add.input[list(add.input).index(lo)] = s
        inputs += [
            helper.make_tensor_value_info(f"lora.{i}.gate_up.A", TensorProto.FLOAT, ["batch", d, "r2"]),
            helper.make_tensor_value_info(f"lora.{i}.gate_up.B", TensorProto.FLOAT, ["batch", "r2", 2 * f]),
        ]
    nodes, pending = [], dict(made)
    for n in g.node:
        if n.name in drop:
            continue
        for i, new in list(pending.items()):  # before the first node that reads them
            if any(o in n.input for nn in new for o in nn.output):
                nodes.extend(new)
                del pending[i]
        nodes.append(n)
    keep = [i for i in g.input if not (i.name.startswith("lora.") and (".gate." in i.name or ".up." in i.name))]
    del g.input[:]
    g.input.extend(keep + inputs)
    del g.node[:]
    g.node.extend(nodes)


def summed(m: onnx.ModelProto) -> None:
    g = m.graph
    lora = _lora_inputs(g)
    prod = {o: n for n in g.node for o in n.output}
    uses = collections.Counter(x for n in g.node for x in n.input)

    def lora_add(n: onnx.NodeProto) -> bool:
        return n.op_type == "Add" and any(
            x in prod and prod[x].op_type == "MatMul" and any(y in lora for y in prod[x].input) for x in n.input
        )

    drop, new = set(), {}
    for n in g.node:
        for j, x in enumerate(n.input if n.op_type == "Add" else []):
            p = prod.get(x)
            if p is not None and lora_add(p) and uses[x] == 1:
                new[n.name] = helper.make_node("Sum", [n.input[1 - j], *p.input], list(n.output), name=n.name + "_sum")
                drop.add(p.name)
                break
    nodes = [new.get(n.name, n) for n in g.node if n.name not in drop]
    del g.node[:]
    g.node.extend(nodes)


def feeds(s: ort.InferenceSession, rank: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for i in s.get_inputs():
        n = i.name
        if n == "input_ids":
            out[n] = np.array([[11]], np.int64)
        elif n == "attention_mask":
            out[n] = np.ones((1, PAST + 1), np.int64)
        elif n == "position_ids":
            out[n] = np.array([[PAST]], np.int64)
        elif n == "logits_to_keep":
            out[n] = np.array([1], np.int64)
        elif n.startswith("past_key_values."):
            out[n] = (rng.standard_normal([1, i.shape[1], PAST, i.shape[3]]) * 0.1).astype(np.float32)
        else:  # lora.*: members of the group times the rank
            k = 3 if ".qkv." in n else 2 if ".gate_up." in n else 1
            shape = [1, i.shape[1], k * rank] if n.endswith("A") else [1, k * rank, i.shape[2]]
            out[n] = (rng.standard_normal(shape) * 0.01).astype(np.float32)
    return out


def timed_rounds(cases: dict[str, tuple[ort.InferenceSession, dict, list[str]]], rounds: int,
                 runs: int) -> dict[str, list[float]]:
    """Per case, the median CPU ms of `runs` runs in each of `rounds` rounds, the cases interleaved in every
    round (after 10 warm-up runs each)."""
    times: dict[str, list[float]] = {k: [] for k in cases}
    for s, f, fetch in cases.values():
        for _ in range(10):
            s.run(fetch, f)
    for _ in range(rounds):
        for k, (s, f, fetch) in cases.items():
            ts = []
            for _ in range(runs):
                t0 = time.thread_time()
                s.run(fetch, f)
                ts.append(time.thread_time() - t0)
            times[k].append(float(np.median(ts)) * 1e3)
    return times


def run_info(rounds: int, runs: int, load_before: tuple[float, float, float]) -> dict:
    """What a result says about how it was measured."""
    return {"onnxruntime": ort.__version__, "past": PAST, "rounds": rounds, "runs_per_round": runs,
            "loadavg_before": [round(x, 2) for x in load_before], "loadavg": [round(x, 2) for x in os.getloadavg()],
            "measured": time.strftime("%Y-%m-%dT%H:%M:%S")}


def write_json(out_json: Path | None, result: dict) -> None:
    if out_json:
        out_json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out_json}")


def main() -> None:
    src = Path(sys.argv[1])
    out_json = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    base = onnx.load(str(src))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    load_before = os.getloadavg()
    cases: dict[str, tuple[ort.InferenceSession, dict, list[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("lora", None), ("plain", plain), ("packed", packed), ("gate_up", gate_up), ("sum", summed)):
            m = onnx.ModelProto()
            m.CopyFrom(base)
            if make:
                make(m)
            path = Path(tmp) / f"{name}.onnx"
            onnx.save(m, str(path))
            s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            fetch = [o.name for o in s.get_outputs() if o.name != "hidden_states"]
            for rank in (0, 8) if name not in ("plain", "packed") else (0,):
                cases[f"{name} r{rank}"] = (s, feeds(s, rank, np.random.default_rng(0)), fetch)
            del m
        del base
        times = timed_rounds(cases, ROUNDS, RUNS)
    ms = {k: round(float(np.median(v)), 3) for k, v in times.items()}
    result = {
        "bench": "lora_decode_variants",
        "lm": str(src),
        **run_info(ROUNDS, RUNS, load_before),
        "cpu_ms_per_run": ms,
    }
    for k, v in ms.items():
        print(f"{k:12s} {v:7.3f} ms   rounds {' '.join(f'{x:.2f}' for x in times[k])}")
    write_json(out_json, result)


if __name__ == "__main__":
    main()
