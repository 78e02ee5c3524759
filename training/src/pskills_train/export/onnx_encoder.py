"""encoder.onnx: tokens -> the encoder layer's hidden states, and nothing else (docs/bundle-format.md).

Inputs   input_ids [batch, sequence_length] int64
         attention_mask [batch, sequence_length] int64   (1 = real token; no past, so it spans the sequence)
         position_ids [batch, sequence_length] int64
Outputs  hidden_states [batch, sequence_length, hidden]  (residual stream `encoder.layer`, as lm.onnx's)

Compiling a skill only reads layer k of L, so this graph stops there: no later layers, no LM head (at a
152k vocabulary the logits alone are ~1.2 GB per 2,048-token skill), no KV cache, no LoRA inputs.

    python -m pskills_train.export.onnx_encoder BUNDLE [--checkpoint HF_DIR]

adds (or replaces) encoder.onnx in an existing bundle folder, in place and idempotently: the weights come
from HF_DIR when given, else are recovered from the bundle's own lm.onnx (model/from_onnx.py). Either way
the new graph's states are checked against lm.onnx's `hidden_states` before anything is written.
Its weights are not copied: they are ONNX external data pointing at the bytes lm.onnx (or
lm.onnx.data) already holds (export/shared_weights.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
from torch import Tensor

from ..model import load_hf
from ..model.backend import OrtBackend
from ..model.from_onnx import load_onnx_lm
from ..model.layers import attention_mask_4d
from ..model.llama import LlamaLM
from .manifest import MANIFEST, file_table
from .onnx_lm import fused_projections
from .onnx_weights import save_graph, to_fp16_storage
from .shared_weights import external_locations, share_weights, uses_fp16_storage
from .staging import staged_folder

ENCODER_FILE = "encoder.onnx"
LM_FILE = "lm.onnx"
ENCODER_INPUTS = ["input_ids", "attention_mask", "position_ids"]
ENCODER_OUTPUTS = ["hidden_states"]
OPSET = 17
# encoder.onnx vs lm.onnx hidden_states: the same weights and ops, so only kernel-order noise differs.
PARITY_TOL = 1e-4


class EncoderGraph(nn.Module):
    """LlamaLM up to `encoder_layer_index` (the same numbers as its third output)."""

    def __init__(self, lm: LlamaLM):
        super().__init__()
        self.lm = lm
        self.k = lm.cfg.encoder_layer_index

    def forward(self, input_ids: Tensor, attention_mask: Tensor, position_ids: Tensor) -> Tensor:
        lm, cfg = self.lm, self.lm.cfg
        x = lm.model.embed_tokens(input_ids)  # [b, s, d]
        if self.k == 0:
            return x
        cos, sin = lm.model.rotary(position_ids, x.dtype)  # [b, 1, s, hd]
        mask = attention_mask_4d(attention_mask, input_ids.shape[1], x.dtype, cfg.sliding_window)  # [b, 1, s, s]
        for layer in lm.model.layers[: self.k]:
            x, _ = layer(x, cos, sin, mask, None, {})
        return lm.model.norm(x) if self.k == cfg.num_layers else x  # layer L: post-norm, as LlamaLM


def encoder_io() -> dict[str, Any]:
    """bundle.json `io.encoder`."""
    return {"file": ENCODER_FILE, "float_dtype": "float32", "inputs": list(ENCODER_INPUTS),
            "outputs": list(ENCODER_OUTPUTS)}


def export_encoder(lm: LlamaLM, path: str | os.PathLike, share_with: str | None = LM_FILE) -> Path:
    """Write encoder.onnx (to a temp name, then rename). Every dimension but hidden stays symbolic.
    With `share_with` (a graph beside `path`, lm.onnx by default) present, every weight it already
    holds is referenced there instead of copied (export/shared_weights.py), in its storage dtype."""
    path = Path(path)
    graph = EncoderGraph(lm).eval()
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, lm.cfg.vocab_size, (2, 3), generator=g)  # [b, s]
    mask = torch.ones(2, 3, dtype=torch.int64)  # [b, s]
    pos = torch.arange(3).expand(2, 3).contiguous()  # [b, s]
    axes = {n: {0: "batch", 1: "sequence_length"} for n in [*ENCODER_INPUTS, *ENCODER_OUTPUTS]}
    # A scratch folder: past 2 GB the exporter writes one file per tensor beside the graph.
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".export-") as scratch:
        raw = Path(scratch) / path.name
        # Fused q|k|v as in lm.onnx, so the encoder's weights are lm.onnx's bytes and can be shared.
        with torch.no_grad(), warnings.catch_warnings(), fused_projections(lm):
            warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter, as onnx_lm.py
            torch.onnx.export(graph, (ids, mask, pos), str(raw), input_names=ENCODER_INPUTS,
                              output_names=ENCODER_OUTPUTS, dynamic_axes=axes, opset_version=OPSET, dynamo=False,
                              do_constant_folding=True)
        model = onnx.load(str(raw))
    # At layer 0 the states are the embeddings and the tracer drops the unused mask and positions; the
    # contract keeps all three inputs, so every encoder graph takes the same feeds.
    have = {v.name: v for v in model.graph.input}
    if list(have) != ENCODER_INPUTS:
        del model.graph.input[:]
        model.graph.input.extend(have.get(n) or onnx.helper.make_tensor_value_info(
            n, onnx.TensorProto.INT64, ["batch", "sequence_length"]) for n in ENCODER_INPUTS)
    shared = path.with_name(share_with) if share_with else None
    if shared is not None and shared.exists():
        if uses_fp16_storage(shared):  # the same float16 bytes lm.onnx holds (weights rounded to them)
            to_fp16_storage(model)
        share_weights(model, shared)
    save_graph(model, path)
    onnx.checker.check_model(str(path))
    return path


def check_encoder_graph(path: Path, manifest: dict[str, Any]) -> None:
    """Names, dtypes and the fixed hidden width of encoder.onnx equal what bundle.json says, and the
    files its external data lies in are the bundle's own."""
    graph = onnx.load(str(path), load_external_data=False).graph

    def shape(v):
        return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]

    got_in = [v.name for v in graph.input]
    got_out = [v.name for v in graph.output]
    if got_in != ENCODER_INPUTS or got_out != ENCODER_OUTPUTS:
        raise AssertionError(f"{path.name}: I/O {got_in} -> {got_out}, expected {ENCODER_INPUTS} -> {ENCODER_OUTPUTS}")
    hidden = manifest["architecture"]["hidden"]
    if shape(graph.output[0]) != ["batch", "sequence_length", hidden]:
        raise AssertionError(f"{path.name}: hidden_states shape {shape(graph.output[0])}, expected "
                             f"[batch, sequence_length, {hidden}]")
    for location in sorted(external_locations(graph)):
        if location not in manifest["files"] or Path(location).name != location:
            raise AssertionError(f"{path.name}: external data in {location!r}, not a file of the bundle's files")


def parity(bundle: Path, encoder: Path, seed: int = 0) -> float:
    """Max |Δ| / max |state| between encoder.onnx and lm.onnx's hidden_states on a right-padded batch of
    two random rows (one padded), each at positions 0 … m−1."""
    lm = OrtBackend(bundle)
    sess = ort.InferenceSession(str(encoder), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    lens = [min(24, lm.cfg.max_positions), min(17, lm.cfg.max_positions)]
    width = max(lens)
    ids = rng.integers(4, lm.cfg.vocab_size, (2, width)).astype(np.int64)  # [2, m]
    mask = np.array([[1] * n + [0] * (width - n) for n in lens], np.int64)  # [2, m]
    pos = np.broadcast_to(np.arange(width), (2, width)).astype(np.int64)  # [2, m]
    got = sess.run(["hidden_states"], {"input_ids": ids, "attention_mask": mask, "position_ids": pos})[0]
    want = lm.forward(torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(pos), None, None)[2].numpy()
    worst = 0.0
    for row, n in enumerate(lens):  # pad slots' states are never read
        diff = float(np.abs(got[row, :n] - want[row, :n]).max())
        worst = max(worst, diff / max(float(np.abs(want[row, :n]).max()), 1e-12))
    return worst


def with_encoder(manifest: dict[str, Any], files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = dict(manifest)
    out["files"] = files
    out["io"] = {**manifest["io"], "encoder": encoder_io()}
    return out


def add_encoder_files(folder: Path, lm: LlamaLM) -> dict[str, Any]:
    """Export encoder.onnx into a bundle folder being assembled, check it, return the new manifest
    (the caller writes it)."""
    manifest = json.loads((folder / MANIFEST).read_text()) if (folder / MANIFEST).exists() else None
    if manifest is None:
        raise FileNotFoundError(f"{folder / MANIFEST}: missing")
    if lm.cfg.encoder_layer_index != manifest["encoder"]["layer"]:
        raise ValueError(f"the model's encoder layer {lm.cfg.encoder_layer_index} != bundle.json encoder.layer "
                         f"{manifest['encoder']['layer']}")
    export_encoder(lm, folder / ENCODER_FILE)
    new = with_encoder(manifest, file_table(folder))
    check_encoder_graph(folder / ENCODER_FILE, new)
    return new


def check_encoder_parity(folder: Path) -> None:
    """A written bundle's encoder.onnx gives lm.onnx's hidden_states (raises naming the file)."""
    err = parity(folder, folder / ENCODER_FILE)
    if err > PARITY_TOL:
        raise AssertionError(f"{folder / ENCODER_FILE}: states differ from lm.onnx's hidden_states "
                             f"(relative {err:.2e} > {PARITY_TOL})")


def base_lm(bundle: Path, checkpoint: Path | None = None) -> LlamaLM:
    """The bundle's base LM: an HF folder's weights, or recovered from lm.onnx."""
    manifest = json.loads((bundle / MANIFEST).read_text())
    if checkpoint is not None:
        return load_hf(checkpoint, encoder_layer=manifest["encoder"]["layer"],
                       lora_targets=tuple(t["module"] for t in manifest["lora"]["targets"])).eval()
    try:
        return load_onnx_lm(bundle)
    except ValueError as err:  # e.g. a random-init model whose identical norm weights were merged
        raise ValueError(f"{err}; give the base weights with `python -m pskills_train.export.onnx_encoder "
                         f"{bundle} --checkpoint HF_DIR`, or export without encoder.onnx (--no-encoder-graph)") from err


def add_encoder(bundle: str | os.PathLike, lm: LlamaLM | None = None, checkpoint: Path | None = None) -> Path:
    """Add or replace encoder.onnx in `bundle`, assembled in a copy and renamed into place."""
    bundle = Path(bundle)
    lm = lm if lm is not None else base_lm(bundle, checkpoint)
    with staged_folder(bundle, force=True) as tmp:
        for p in bundle.iterdir():
            if p.is_file() and p.name != ENCODER_FILE:
                shutil.copyfile(p, tmp / p.name)
        new = add_encoder_files(tmp, lm)
        (tmp / MANIFEST).write_text(json.dumps(new, indent=2) + "\n")
        check_encoder_parity(tmp)
    return bundle


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.onnx_encoder", description=__doc__.split("\n")[0])
    ap.add_argument("bundle", type=Path, help="bundle folder (changed in place)")
    ap.add_argument("--checkpoint", type=Path, help="HF folder with the base weights (default: from lm.onnx)")
    a = ap.parse_args(argv)
    out = add_encoder(a.bundle, checkpoint=a.checkpoint)
    size = (out / ENCODER_FILE).stat().st_size
    layer = json.loads((out / MANIFEST).read_text())["encoder"]["layer"]
    print(f"{out / ENCODER_FILE}: {size / 1e6:.2f} MB, the states of layer {layer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
