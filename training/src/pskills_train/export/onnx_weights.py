"""How lm.onnx stores its weights: float16 storage behind Cast nodes, and ONNX external data past 2 GB.

Both keep the graph's I/O float32 (docs/bundle-format.md v1 `io.lm.float_dtype`), so a reader of
format 1 runs an fp16 bundle unchanged: the weights are half the bytes on disk and are computed in
float32 after the Cast (onnxruntime folds the Casts when it loads the session, so memory at run time
is that of float32).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

# Protobuf refuses a message over 2 GiB; past 2·10⁹ bytes of weights they go to `<graph>.data`.
EXTERNAL_DATA_BYTES = 2_000_000_000
# Weights smaller than this stay float32 (norm scales, biases): precision for nearly no bytes.
FP16_MIN_ELEMENTS = 4096


def weight_bytes(model: onnx.ModelProto, embedded_only: bool = False) -> int:
    """Bytes of the graph's initializers (raw data, or the external data they point to; with
    `embedded_only`, only those the graph itself holds)."""
    total = 0
    for t in model.graph.initializer:
        if embedded_only and t.data_location == TensorProto.EXTERNAL:
            continue
        n = int(np.prod(t.dims)) if t.dims else 1
        total += n * helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    return total


def to_fp16_storage(model: onnx.ModelProto) -> int:
    """Store every large float32 initializer that float16 holds exactly as float16, and Cast it back
    to float32 at the top of the graph under its old name, so no consumer changes. Lossless by
    construction: the caller rounds the weights to float16 before export (`round_weights_fp16`), and
    constants float16 cannot hold (masks of -3.4e38) stay float32. Returns how many were converted."""
    graph = model.graph
    casts, converted = [], 0
    for t in graph.initializer:
        if t.data_type != TensorProto.FLOAT or int(np.prod(t.dims or [1])) < FP16_MIN_ELEMENTS:
            continue
        full = numpy_helper.to_array(t)
        with np.errstate(over="ignore"):
            small = full.astype(np.float16)
        if not np.array_equal(small.astype(np.float32), full):
            continue
        half = numpy_helper.from_array(small, t.name + ".fp16")
        name = t.name
        t.CopyFrom(half)
        casts.append(helper.make_node("Cast", [name + ".fp16"], [name], to=TensorProto.FLOAT,
                                      name=f"Cast_fp16_{converted}"))
        converted += 1
    nodes = casts + list(graph.node)  # Casts first: the node list stays topologically sorted
    del graph.node[:]
    graph.node.extend(nodes)
    return converted


def round_weights_fp16(module: torch.nn.Module) -> None:
    """Round every matrix and every parameter of FP16_MIN_ELEMENTS or more to the nearest float16 (kept
    as float32), so the exported graph's weights are exactly what its float16 storage holds. Matrices of
    any size: the exporters concatenate q, k and v into one initializer (export/onnx_lm.py)."""
    with torch.no_grad():
        for p in module.parameters():
            if (p.numel() >= FP16_MIN_ELEMENTS or p.dim() >= 2) and p.dtype == torch.float32:
                p.copy_(p.to(torch.float16).to(torch.float32))


def save_graph(model: onnx.ModelProto, path: Path, external_threshold: int = EXTERNAL_DATA_BYTES) -> list[Path]:
    """Write `path` (temp name, then rename); with weights over `external_threshold` bytes, every
    initializer of 1 KiB or more goes to one `<name>.data` file beside it. Returns the files written.
    Initializers that already point at external data (encoder.onnx's ranges of lm.onnx) keep it."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if weight_bytes(model, embedded_only=True) <= external_threshold:
        onnx.save_model(model, str(tmp))
        os.replace(tmp, path)
        return [path]
    data = path.with_name(path.name + ".data")
    tmp_data = data.with_name(data.name + ".tmp")
    for f in (data, tmp_data):
        f.unlink(missing_ok=True)
    # The graph records `location` as the final name; the bytes go to tmp_data first.
    onnx.save_model(model, str(tmp), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=tmp_data.name, size_threshold=1024)
    relocated = onnx.load(str(tmp), load_external_data=False)
    for t in relocated.graph.initializer:
        for entry in t.external_data:
            if entry.key == "location" and entry.value == tmp_data.name:  # not a range shared with lm.onnx
                entry.value = data.name
    onnx.save_model(relocated, str(tmp))
    os.replace(tmp_data, data)
    os.replace(tmp, path)
    return [path, data]
