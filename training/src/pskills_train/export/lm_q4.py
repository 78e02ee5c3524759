"""A bundle whose lm.onnx keeps its weight MatMuls in 4 bits (`--weights q4`), while the train-step
graphs keep running on the float32 weights.

lm.onnx: every MatMul whose weight is an initializer becomes onnxruntime's MatMulNBits (`com.microsoft`
domain; 4 bits, blocks of BLOCK_SIZE along d_in, symmetric, float32 compute). The LoRA MatMuls take
their factors from graph inputs and stay float32, as do the embedding Gather and a tied LM head (its
MatMul reads Transpose(embedding), which the quantizer skips). Measured on SmolLM2-135M (docs/results.md):
lm.onnx 3× smaller, half the RSS, decode 1.6–1.8× faster on 2 cores.

The train-step graphs read lm.onnx's float32 tensors as external data ranges. Before lm.onnx is
replaced, those ranges are copied into one file of their own, TRAIN_STEP_DATA, and the graphs pointed at
it: distillation trains against the float32 weights (the GGUF dequantized), generation runs the 4-bit
requantization of the same weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
from onnx.external_data_helper import ExternalDataInfo, uses_external_data
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

from .onnx_weights import save_graph

WEIGHTS = ("fp32", "q4")
BLOCK_SIZE = 32
TRAIN_STEP_DATA = "train_step.data"


def quantize_lm(model: onnx.ModelProto, block_size: int = BLOCK_SIZE, accuracy_level: int | None = None
                ) -> onnx.ModelProto:
    """`model` with its initializer-weight MatMuls as MatMulNBits; accuracy_level 4 computes with int8
    activations (bench/lm_4bit.py compares it), None in float32."""
    q = MatMulNBitsQuantizer(model, bits=4, block_size=block_size, is_symmetric=True, accuracy_level=accuracy_level)
    q.process()
    return q.model.model


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
    model = quantize_lm(onnx.load(str(folder / lm_file)), block_size)
    for name in lm_files:
        (folder / name).unlink(missing_ok=True)
    save_graph(model, folder / lm_file, external_threshold)
