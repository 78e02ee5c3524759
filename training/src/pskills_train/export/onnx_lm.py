"""Export the base LM to lm.onnx with the I/O names of docs/design.md §4 (docs/bundle-format.md).

Inputs   input_ids [batch, sequence_length] int64
         logits_to_keep [1] int64: logits of the last n positions only (generation: 1); 0 = all
         attention_mask [batch, total_sequence_length] int64
         position_ids [batch, sequence_length] int64
         past_key_values.{i}.key|value [batch, kv_heads, past_sequence_length, head_dim]
         lora.{i}.{group}.A [batch, d_in, rank]   lora.{i}.{group}.B [batch, rank, d_out]
           (groups: ModelConfig.lora_groups; q, k and v share the fused projection's "qkv" pair)
Outputs  logits [batch, logits_length, vocab]   (sequence_length, or the last logits_to_keep of it)
         present.{i}.key|value [batch, kv_heads, total_sequence_length, head_dim]
           (fused attention instead: step.{i}.key|value [batch, sequence_length, kv_heads·head_dim], this
           step's keys and values only, which the engine appends to its cache: onnx_attention.py)
         hidden_states [batch, sequence_length, hidden]   (the encoder layer, ModelConfig.encoder_layer)

The LoRA scale is folded into A/B by the feeder (see model/lora.py); lora_rank may be 0 and
past_sequence_length may be 0 (prefill). `LMExportConfig.lora_inputs=False` drops the lora.* inputs
(same weights, plain graph): the baseline the engine benchmark compares LoRA decoding against. Uses the
TorchScript exporter (dynamo=False): it needs no onnxscript and keeps every dimension above symbolic when
traced with nonzero sizes.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import helper, numpy_helper
from torch import Tensor

from ..model.config import ModelConfig
from ..model.layers import Attention
from ..model.llama import LlamaLM
from ..model.lora import LoraInputs, group_lora
from .onnx_attention import ATTENTIONS, MS, fused_attention
from .onnx_structure import read_structure, tensor_bytes, write_graph
from .onnx_weights import EXTERNAL_DATA_BYTES


@dataclass
class LMExportConfig:
    opset: int = 17
    # Sizes of the example used for tracing. Nonzero so no dimension is specialised away.
    trace_batch: int = 2
    trace_seq: int = 3
    trace_past: int = 2
    trace_rank: int = 2
    dtype: torch.dtype = torch.float32
    lora_inputs: bool = True
    # "ops": attention from ONNX operators; "fused": onnxruntime's RotaryEmbedding and GroupQueryAttention
    # (onnx_attention.py), the same inputs and outputs
    attention: str = "ops"


@dataclass(frozen=True)
class LMGraphNames:
    inputs: list[str]
    outputs: list[str]
    dynamic_axes: dict[str, dict[int, str]]
    lora_keys: list[tuple[int, str]]  # (layer, group) order of the lora.* inputs, A then B per key


def graph_names(cfg: ModelConfig, lora_inputs: bool = True, attention: str = "ops") -> LMGraphNames:
    batch, seq, rank = "batch", "sequence_length", "lora_rank"
    past, total = "past_sequence_length", "total_sequence_length"
    inputs = ["input_ids", "attention_mask", "position_ids", "logits_to_keep"]
    axes: dict[str, dict[int, str]] = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: total},
        "position_ids": {0: batch, 1: seq},
    }
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            inputs.append(f"past_key_values.{i}.{kind}")
            axes[inputs[-1]] = {0: batch, 2: past}
    groups = cfg.lora_groups() if lora_inputs else []
    lora_keys = [(i, g.name) for i in range(cfg.num_layers) for g in groups]
    ranks = {g.name: rank if len(g.members) == 1 else f"{rank}_{g.name}" for g in groups}  # qkv: n·r
    for i, m in lora_keys:
        inputs += [f"lora.{i}.{m}.A", f"lora.{i}.{m}.B"]
        axes[f"lora.{i}.{m}.A"] = {0: batch, 2: ranks[m]}
        axes[f"lora.{i}.{m}.B"] = {0: batch, 1: ranks[m]}
    outputs = ["logits"]
    axes["logits"] = {0: batch, 1: "logits_length"}  # sequence_length, or logits_to_keep of it
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            if attention == "fused":
                outputs.append(f"step.{i}.{kind}")
                axes[outputs[-1]] = {0: batch, 1: seq}
            else:
                outputs.append(f"present.{i}.{kind}")
                axes[outputs[-1]] = {0: batch, 2: total}
    outputs.append("hidden_states")
    axes["hidden_states"] = {0: batch, 1: seq}
    return LMGraphNames(inputs, outputs, axes, lora_keys)


class FlatLM(nn.Module):
    """LlamaLM with positional tensor I/O in `graph_names` order, as the exporter needs."""

    def __init__(self, lm: LlamaLM, lora_inputs: bool = True, attention: str = "ops"):
        super().__init__()
        self.lm = lm
        self.names = graph_names(lm.cfg, lora_inputs, attention)

    def forward(self, input_ids: Tensor, attention_mask: Tensor, position_ids: Tensor, logits_to_keep: Tensor,
                *rest: Tensor):
        n_layers = self.lm.cfg.num_layers
        past = [(rest[2 * i], rest[2 * i + 1]) for i in range(n_layers)]
        flat_lora = rest[2 * n_layers:]
        lora = {key: (flat_lora[2 * j], flat_lora[2 * j + 1]) for j, key in enumerate(self.names.lora_keys)}
        logits, present, hidden = self.lm(input_ids, attention_mask, position_ids, past, lora, logits_to_keep)
        return (logits, *[t for kv in present for t in kv], hidden)


@contextmanager
def fused_projections(lm: LlamaLM) -> Iterator[LlamaLM]:
    """The exported graphs compute q|k|v as one product (layers.Attention._fused_qkv): same numbers,
    fewer nodes and inputs per decode step. Training keeps the separate projections."""
    attns = [m for m in lm.modules() if isinstance(m, Attention)]
    for a in attns:
        a.fuse_qkv = True
    try:
        yield lm
    finally:
        for a in attns:
            a.fuse_qkv = False


def lora_graph_feeds(cfg: ModelConfig, lora: LoraInputs) -> dict[str, Tensor]:
    """Per-module LoRA inputs (one rank for all, `stack_rows`) -> lm.onnx's lora.{i}.{group}.A|B feeds."""
    return {f"lora.{i}.{g}.{ab}": t for (i, g), pair in group_lora(cfg, lora).items()
            for ab, t in zip("AB", pair, strict=True)}


def graph_feeds(cfg: ModelConfig, feeds: dict[str, Tensor]) -> dict[str, Tensor]:
    """`example_feeds`-style feeds (lora.{i}.{module}.A|B) -> the graph's (lora.{i}.{group}.A|B)."""
    def is_module(k: str) -> bool:  # group names that are not targets ("qkv") pass through
        return k.startswith("lora.") and k.split(".")[2] in cfg.lora_targets

    per_module = {(int(k.split(".")[1]), k.split(".")[2]): (feeds[k], feeds[k[:-1] + "B"])
                  for k in feeds if is_module(k) and k.endswith(".A")}
    rest = {k: v for k, v in feeds.items() if not is_module(k)}
    return {**rest, **(lora_graph_feeds(cfg, per_module) if per_module else {})}


def example_feeds(cfg: ModelConfig, batch: int, seq: int, past: int, rank: int,
                  dtype: torch.dtype = torch.float32, seed: int = 0) -> dict[str, Tensor]:
    """Random feeds named as the graph's inputs; no padding, positions continue after `past`."""
    g = torch.Generator().manual_seed(seed)
    feeds: dict[str, Tensor] = {
        "input_ids": torch.randint(0, cfg.vocab_size, (batch, seq), generator=g),  # [b, s]
        "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),  # [b, t]
        "position_ids": torch.arange(past, past + seq).expand(batch, seq).contiguous(),  # [b, s]
        "logits_to_keep": torch.zeros(1, dtype=torch.int64),  # [1]: 0 = every position's logits
    }
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{i}.{kind}"] = torch.randn(batch, cfg.num_kv_heads, past, cfg.head_dim,
                                                               generator=g).to(dtype)  # [b, kv, p, hd]
    for i in range(cfg.num_layers):
        for m in cfg.lora_targets:
            d_in, d_out = cfg.lora_dims(m)
            feeds[f"lora.{i}.{m}.A"] = (torch.randn(batch, d_in, rank, generator=g) * 0.1).to(dtype)  # [b, d_in, r]
            feeds[f"lora.{i}.{m}.B"] = (torch.randn(batch, rank, d_out, generator=g) * 0.1).to(dtype)  # [b, r, d_out]
    return feeds


@contextmanager
def _no_reparse() -> Iterator[None]:
    """torch's TorchScript exporter parses the model it has just serialized, to add onnxscript functions
    (`_add_onnxscript_fn`); with no custom opsets there are none, and the parse held a second copy of every
    weight at the export's peak (2 GB more for a 0.5 B model). Skipped then; the bytes are the same. The
    fused attention's com.microsoft nodes are a custom opset with no functions: skipped too."""
    from torch.onnx._internal.torchscript_exporter import onnx_proto_utils as utils

    add = getattr(utils, "_add_onnxscript_fn", None)
    if add is None:  # another torch: nothing to skip
        yield
        return

    def add_if_custom(model_bytes: bytes, custom_opsets: Any) -> bytes:
        return add(model_bytes, custom_opsets) if set(custom_opsets or ()) - {MS} else model_bytes

    utils._add_onnxscript_fn = add_if_custom
    try:
        yield
    finally:
        utils._add_onnxscript_fn = add


def export_lm(lm: LlamaLM, path: str | os.PathLike, ecfg: LMExportConfig | None = None,
              external_threshold: int = EXTERNAL_DATA_BYTES) -> Path:
    """Write lm.onnx, and `lm.onnx.data` beside it when the weights pass `external_threshold` bytes
    (onnx_weights.save_graph's layout), each under a temporary name, then renamed. Returns the path. The
    exporter's output (one file, or one file per tensor past protobuf's 2 GB) is copied into that layout
    weight by weight (onnx_structure.write_graph), the tied head's folded copy left out, so the weights
    are never loaded again."""
    ecfg = ecfg or LMExportConfig()
    if ecfg.attention not in ATTENTIONS:
        raise ValueError(f"attention {ecfg.attention!r}: one of {', '.join(ATTENTIONS)}")
    fused = ecfg.attention == "fused"
    path = Path(path)
    flat = FlatLM(lm, ecfg.lora_inputs, ecfg.attention).eval()
    names = flat.names
    feeds = example_feeds(lm.cfg, ecfg.trace_batch, ecfg.trace_seq, ecfg.trace_past, ecfg.trace_rank, ecfg.dtype)
    feeds = graph_feeds(lm.cfg, feeds)
    args = tuple(feeds[n] for n in names.inputs)  # drops the lora.* feeds when the graph has none
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".lm-export-") as scratch:
        raw = Path(scratch) / "raw" / path.name
        raw.parent.mkdir()
        with (torch.no_grad(), warnings.catch_warnings(), fused_projections(lm), _no_reparse(),
              fused_attention(lm) if fused else nullcontext()):
            warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter is chosen on purpose
            torch.onnx.export(flat, args, str(raw), input_names=names.inputs, output_names=names.outputs,
                              dynamic_axes=names.dynamic_axes, opset_version=ecfg.opset, dynamo=False,
                              do_constant_folding=True, custom_opsets={MS: 1} if fused else None)
        copy = tied_head_copy(raw) if lm.cfg.tie_embeddings else None
        drop, first = ({copy}, [_transpose_node(TIED_EMBED, copy)]) if copy else (set(), [])
        done = Path(scratch) / path.name
        written = write_graph(raw, done, external_threshold, drop, first)
        path.with_name(path.name + ".data").unlink(missing_ok=True)
        for f in reversed(written):  # the data file first: the graph names it
            os.replace(f, path.parent / f.name)
    return path


TIED_EMBED = "lm.model.embed_tokens.weight"


def _tied_copy(model: onnx.ModelProto, read: Any, embed: str) -> str | None:
    """The initializer that holds embedᵀ ([d, V], equal value for value), else None; `read(name)` gives an
    initializer's values."""
    inits = {t.name: t for t in model.graph.initializer}
    if embed not in inits:
        return None
    w = read(embed)  # [V, d]
    for t in model.graph.initializer:
        if list(t.dims) == [w.shape[1], w.shape[0]] and t.data_type == inits[embed].data_type:
            if np.array_equal(read(t.name), w.T):
                return t.name
    return None


def _transpose_node(embed: str, name: str) -> onnx.NodeProto:
    return helper.make_node("Transpose", [embed], [name], perm=[1, 0], name="tied_head_transpose")


def dedupe_tied_head(model: onnx.ModelProto, embed: str = TIED_EMBED) -> bool:
    """The tracer folds a tied head's Wᵀ into a second initializer, a full copy of the embedding. Store
    W once and Transpose it in the graph instead (onnxruntime folds that at load). True if one was."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    name = _tied_copy(model, lambda n: numpy_helper.to_array(inits[n]), embed)
    if name is None:
        return False
    g.initializer.remove(inits[name])
    nodes = [_transpose_node(embed, name), *g.node]
    del g.node[:]
    g.node.extend(nodes)
    return True


def tied_head_copy(path: Path, embed: str = TIED_EMBED) -> str | None:
    """dedupe_tied_head's initializer in a file (inline or external), found without loading the weights."""
    model, inline = read_structure(path)
    inits = {t.name: t for t in model.graph.initializer}

    def read(n: str) -> np.ndarray:
        t = inits[n]
        file, offset, _ = tensor_bytes(path.parent, t, inline, path)
        dtype = helper.tensor_dtype_to_np_dtype(t.data_type)
        return np.memmap(file, dtype=dtype, mode="r", offset=offset, shape=tuple(t.dims))

    return _tied_copy(model, read, embed)
