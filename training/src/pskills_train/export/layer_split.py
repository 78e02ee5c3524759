"""Split a decoder layer's joint forward-and-VJP graph into a forward that also returns what the backward
needs and a backward that takes it (docs/distill.md "Layered train step"), so a layered step whose memory
allows it need not recompute the layer's forward in its backward.

What is kept is chosen by a minimum cut over the forward's values (as AOTAutograd's partitioner, but
costed in ONNX terms, where a transpose or reshape is a copy): a product (MatMul) is never recomputed,
anything else may be, and the cut keeps the fewest bytes from which the backward can recompute the rest.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx  # type: ignore[import-untyped]
import numpy as np
import onnx
from onnx import helper

# Ops the backward may not recompute: the products are the forward's cost.
KEEP_OPS = frozenset({"MatMul", "Gemm", "FusedMatMul", "MatMulNBits"})
SAVED = "saved."
INF = float("inf")


def _bytes(vi: onnx.ValueInfoProto | None) -> float:
    if vi is None or not vi.type.HasField("tensor_type"):
        return INF
    t = vi.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
    if any(d < 0 for d in dims):
        return INF
    size = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)).itemsize
    return float(int(np.prod(dims, dtype=np.int64)) * size)


def _graph(template: onnx.ModelProto, nodes: Iterable[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], name: str) -> onnx.ModelProto:
    nodes = list(nodes)
    used = {i for n in nodes for i in n.input}
    inits = [t for t in template.graph.initializer if t.name in used]
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=list(template.opset_import), ir_version=template.ir_version)
    return model


def split_joint(joint: onnx.ModelProto, tangent: str, forward_outputs: list[str]
                ) -> tuple[onnx.ModelProto, onnx.ModelProto, list[tuple[str, list[int]]]]:
    """(forward, backward, kept) from a joint graph whose inputs are the primals and `tangent`, and whose
    outputs are `forward_outputs` then the gradients. The forward takes the primals and returns
    `forward_outputs` and the kept values `saved.0`, `saved.1`, …; the backward takes the primals it uses,
    the kept values and `tangent`, and returns the gradients. `kept` lists each kept value's name and shape."""
    model = onnx.shape_inference.infer_shapes(joint, strict_mode=True)
    g = model.graph
    info = {v.name: v for v in [*g.value_info, *g.input, *g.output]}
    free = {i.name for i in g.input if i.name != tangent} | {t.name for t in g.initializer}
    producer: dict[str, int] = {}
    for k, n in enumerate(g.node):
        for o in n.output:
            producer[o] = k
    # The backward's nodes: those that depend on the tangent.
    late = {tangent}
    back: list[int] = []
    for k, n in enumerate(g.node):
        if any(i in late for i in n.input):
            back.append(k)
            late.update(n.output)
    back_set = set(back)
    fwd = [k for k in range(len(g.node)) if k not in back_set]
    needed = {i for k in back for i in g.node[k].input if i and i in producer and producer[i] not in back_set}
    needed |= {o.name for o in g.output if o.name not in forward_outputs and o.name in producer
               and producer[o.name] not in back_set}

    # Flow network: value v as v/in -> v/out (capacity: its bytes, the cost of keeping it); an edge from each
    # input's v/out to the consumer's outputs' v/in; products tied to the source (never recomputed); what
    # the backward reads tied to the sink. The source side of the cut is computed in the forward; the values
    # whose in-vertex is there and out-vertex is not are kept.
    flow = nx.DiGraph()
    for k in fwd:
        n = g.node[k]
        for o in n.output:
            if not o:
                continue
            flow.add_edge(("in", o), ("out", o), capacity=_bytes(info.get(o)))
            if n.op_type in KEEP_OPS:
                flow.add_edge("source", ("in", o), capacity=INF)
            for i in n.input:
                if i and i not in free and i in producer:
                    flow.add_edge(("out", i), ("in", o), capacity=INF)
            if not [i for i in n.input if i and i not in free]:
                flow.add_edge("source", ("in", o), capacity=0.0)  # from the primals alone
    for v in needed:
        flow.add_edge(("out", v), "sink", capacity=INF)
    if "source" not in flow or "sink" not in flow:
        raise ValueError("the joint graph's backward reads nothing of its forward")
    _, (reach, _) = nx.minimum_cut(flow, "source", "sink")
    kept = sorted((v for kind, v in (x for x in reach if isinstance(x, tuple)) if kind == "in"
                   and ("out", v) not in reach), key=lambda v: producer[v])
    if any(_bytes(info.get(v)) == INF for v in kept):
        raise ValueError("a kept value has no static shape")
    kept_set = set(kept)
    # The backward recomputes every forward node it reads, back to the kept values and the primals.
    redo: set[int] = set()
    stack = [v for v in needed if v not in kept_set]
    while stack:
        v = stack.pop()
        k = producer[v]
        if k in redo:
            continue
        redo.add(k)
        stack.extend(i for i in g.node[k].input if i and i in producer and i not in kept_set and i not in free)
    rename = {v: f"{SAVED}{j}" for j, v in enumerate(kept)}

    def renamed(n: onnx.NodeProto, again: bool = False) -> onnx.NodeProto:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        for j, i in enumerate(c.input):
            c.input[j] = rename.get(i, i)
        for j, o in enumerate(c.output):  # a recomputed node's output that is also kept goes unused
            c.output[j] = f"{o}/again" if again and o in rename else rename.get(o, o)
        return c

    def vi(name: str, src: str | None = None) -> onnx.ValueInfoProto:
        c = onnx.ValueInfoProto()
        c.CopyFrom(info[src or name])
        c.name = name
        return c

    inputs = [i for i in g.input if i.name != tangent]
    f_nodes = [renamed(g.node[k]) for k in fwd]
    f_outs = [vi(o) for o in forward_outputs] + [vi(rename[v], v) for v in kept]
    forward = _prune(_graph(model, f_nodes, list(inputs), f_outs, "layer_forward"))
    b_nodes = [renamed(g.node[k], k in redo) for k in sorted(redo | back_set)]
    b_used = {i for n in b_nodes for i in n.input}
    b_ins = [vi(i.name) for i in inputs if i.name in b_used] + [vi(rename[v], v) for v in kept]
    b_ins.append(vi(tangent))
    b_outs = [vi(o.name) for o in g.output if o.name not in forward_outputs]
    backward = _prune(_graph(model, b_nodes, b_ins, b_outs, "layer_backward"))
    shapes = [(rename[v], [int(d.dim_value) for d in info[v].type.tensor_type.shape.dim]) for v in kept]
    return forward, backward, shapes


def prune(model: onnx.ModelProto, outputs: list[str]) -> onnx.ModelProto:
    """A copy of `model` that returns only `outputs` (its inputs as they were), without the nodes they do
    not need."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    keep = [o for o in out.graph.output if o.name in outputs]
    if [o.name for o in keep] != outputs:
        raise ValueError(f"outputs {outputs} are not all of the graph's, in its order")
    del out.graph.output[:]
    out.graph.output.extend(keep)
    return _prune(out)


def saved_bytes(forward: onnx.ModelProto) -> int:
    """Bytes of the kept values one forward run returns."""
    return int(sum(_bytes(o) for o in forward.graph.output if o.name.startswith(SAVED)))


def _prune(model: onnx.ModelProto) -> onnx.ModelProto:
    """Drop the nodes no output needs."""
    g = model.graph
    want = {o.name for o in g.output}
    keep: list[onnx.NodeProto] = []
    for n in reversed(list(g.node)):
        if any(o in want for o in n.output):
            keep.append(n)
            want.update(i for i in n.input if i)
    del g.node[:]
    g.node.extend(reversed(keep))
    used = {i for n in g.node for i in n.input}
    inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(inits)
    return model


