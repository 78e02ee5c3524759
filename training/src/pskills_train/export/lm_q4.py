"""A bundle whose lm.onnx keeps its weight MatMuls in 4 bits (`--weights q4`), while whole train-step
graphs keep running on the float32 weights (layered ones read the 4-bit blocks: train_layers.py).

lm.onnx: every MatMul whose weight is an initializer becomes onnxruntime's MatMulNBits (`com.microsoft`
domain; 4 bits, blocks of BLOCK_SIZE along d_in, symmetric), computing with int8 activations
(accuracy_level 4: MLAS's integer kernels, as llama.cpp computes its quantized types). A tied LM head
(a MatMul of Transpose(embedding), which the quantizer skips) gets a transposed copy of the embedding of
its own, in 8 bits (llama.cpp's SmolLM2 file keeps its embedding in Q8_0; 4 bits cost 0.05 nats there).
The LoRA MatMuls take their factors from graph inputs and stay float32, as does the embedding Gather.
Measured on SmolLM2-135M (docs/results.md): lm.onnx 2.5× smaller than float32, decode per CPU second
1.5× the float32-compute 4-bit graph's with a float32 head, at the same NLL. `float_twin` is the graph
PyTorch computes on the same weights (float32 arithmetic, the tied head on the embedding): the layered
train steps' reading of the 4-bit blocks is checked against it.

The train-step graphs read lm.onnx's float32 tensors as external data ranges. Before lm.onnx is
replaced, those ranges are copied into one file of their own, TRAIN_STEP_DATA, and the graphs pointed at
it: distillation trains against the float32 weights (the GGUF dequantized), generation runs the 4-bit
requantization of the same weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
from onnx import helper, numpy_helper
from onnx.external_data_helper import ExternalDataInfo, uses_external_data
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

from .onnx_weights import save_graph

WEIGHTS = ("fp32", "q4")
BLOCK_SIZE = 32
ACCURACY_LEVEL = 4  # MatMulNBits' int8 activations; None: float32 compute
HEAD_BITS = 8  # a tied head's own copy; None leaves it float32
HEAD_COPY = ".head"  # suffix of that copy's name: `lm.`-prefixed, so train_layers.lm_layout lists no extra projection
TRAIN_STEP_DATA = "train_step.data"


def tied_head(model: onnx.ModelProto) -> tuple[onnx.NodeProto, onnx.NodeProto] | None:
    """The tied LM head's (MatMul, Transpose(embedding initializer)) nodes, or None (an untied head)."""
    inits = {t.name for t in model.graph.initializer}
    made = {n.output[0]: n for n in model.graph.node if n.op_type == "Transpose" and n.input[0] in inits}
    return next(((n, made[n.input[1]]) for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in made), None)


def _quantize(model: onnx.ModelProto, bits: int, block_size: int, accuracy_level: int | None,
              exclude: list[str]) -> onnx.ModelProto:
    q = MatMulNBitsQuantizer(model, bits=bits, block_size=block_size, is_symmetric=True,
                             accuracy_level=accuracy_level, nodes_to_exclude=exclude)
    q.process()
    return q.model.model


def quantize_lm(model: onnx.ModelProto, block_size: int = BLOCK_SIZE, accuracy_level: int | None = ACCURACY_LEVEL,
                head_bits: int | None = HEAD_BITS) -> onnx.ModelProto:
    """`model` with its initializer-weight MatMuls as 4-bit MatMulNBits at `accuracy_level`, and a tied head
    as a `head_bits` MatMulNBits of a transposed copy of the embedding (the Gather keeps the original)."""
    tied = tied_head(model) if head_bits else None
    if tied is None or head_bits is None:
        return _quantize(model, 4, block_size, accuracy_level, [])
    head, transpose = tied
    embed = next(t for t in model.graph.initializer if t.name == transpose.input[0])
    model.graph.initializer.append(numpy_helper.from_array(numpy_helper.to_array(embed).T.copy(),
                                                           embed.name + HEAD_COPY))
    head.input[1] = embed.name + HEAD_COPY
    if not any(transpose.output[0] in n.input for n in model.graph.node):
        model.graph.node.remove(transpose)
    model = _quantize(model, 4, block_size, accuracy_level, [head.name])
    others = [n.name for n in model.graph.node if n.op_type == "MatMul" and n.name != head.name]
    return _quantize(model, head_bits, block_size, accuracy_level, others)


def float_twin(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of a `quantize_lm` graph computing what PyTorch does with the same weights: MatMulNBits in
    float32 (no accuracy_level), and a tied head's copy replaced by MatMul(x, Transpose(embedding))."""
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    graph = twin.graph
    nodes: list[onnx.NodeProto] = []
    dropped: set[str] = set()
    for n in graph.node:
        if n.op_type == "MatMulNBits":
            for a in [a for a in n.attribute if a.name == "accuracy_level"]:
                n.attribute.remove(a)
            if HEAD_COPY + "_Q" in n.input[1]:
                embed = n.input[1][: n.input[1].rindex(HEAD_COPY + "_Q")]
                dropped.update(n.input[1:])
                t = f"{embed}.transposed"
                nodes.append(helper.make_node("Transpose", [embed], [t], perm=[1, 0], name=t))
                n = helper.make_node("MatMul", [n.input[0], t], list(n.output), name=n.name + "_float")
        nodes.append(n)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {x for n in graph.node for x in n.input}
    for t in [t for t in graph.initializer if t.name in dropped and t.name not in used]:
        graph.initializer.remove(t)
    return twin


def write_float_twin(lm_path: Path, out: Path) -> list[Path]:
    """`float_twin` of the graph at `lm_path`, written to `out` (with `out`.data if large); the files."""
    return save_graph(float_twin(onnx.load(str(lm_path))), out)


def detach_train_steps(folder: Path, graphs: list[str], lm_files: tuple[str, ...]) -> None:
    """Copy the ranges of `lm_files` the train-step `graphs` read into TRAIN_STEP_DATA (each range once,
    in the order first read) and point the graphs there, so lm.onnx can change under them."""
    sources = {name: (folder / name).read_bytes() for name in lm_files if (folder / name).exists()}
    moved: dict[tuple[str, int, int], int] = {}  # (file, offset, length) -> offset in TRAIN_STEP_DATA
    chunks: list[bytes] = []
    size = 0
    for name in graphs:
        model = onnx.load(str(folder / name), load_external_data=False)
        for t in model.graph.initializer:
            if not uses_external_data(t):
                continue
            info = ExternalDataInfo(t)
            if info.location not in sources:
                continue
            offset = info.offset or 0
            length = info.length if info.length is not None else len(sources[info.location]) - offset
            key = (info.location, offset, length)
            if key not in moved:
                moved[key] = size
                chunks.append(sources[info.location][offset: offset + length])
                size += length
            del t.external_data[:]  # set_external_data wants raw_data, which a graph loaded without data lacks
            for k, v in (("location", TRAIN_STEP_DATA), ("offset", str(moved[key])), ("length", str(length))):
                t.external_data.add(key=k, value=v)
        onnx.save_model(model, str(folder / name))
    (folder / TRAIN_STEP_DATA).write_bytes(b"".join(chunks))


def to_q4(folder: Path, manifest: dict[str, Any], external_threshold: int, block_size: int = BLOCK_SIZE) -> None:
    """lm.onnx (and lm.onnx.data) in `folder` replaced by the 4-bit graph; train-step graphs detached first."""
    lm_file = manifest["io"]["lm"]["file"]
    lm_files = (lm_file, f"{lm_file}.data")
    steps = [b["file"] for b in manifest.get("train_step", {}).get("buckets", []) if "file" in b]  # whole graphs
    if steps:
        detach_train_steps(folder, steps, lm_files)
    model = quantize_lm(onnx.load(str(folder / lm_file)), block_size)  # int8 activations, a tied head in 8 bits
    for name in lm_files:
        (folder / name).unlink(missing_ok=True)
    save_graph(model, folder / lm_file, external_threshold)
