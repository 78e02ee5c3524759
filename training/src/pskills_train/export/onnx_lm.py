"""Export the base LM to lm.onnx with the I/O names of DESIGN §3 (docs/bundle-format.md).

Inputs   input_ids [batch, sequence_length] int64
         attention_mask [batch, total_sequence_length] int64
         position_ids [batch, sequence_length] int64
         past_key_values.{i}.key|value [batch, kv_heads, past_sequence_length, head_dim]
         lora.{i}.{module}.A [batch, d_in, lora_rank]   lora.{i}.{module}.B [batch, lora_rank, d_out]
Outputs  logits [batch, sequence_length, vocab]
         present.{i}.key|value [batch, kv_heads, total_sequence_length, head_dim]
         hidden_states [batch, sequence_length, hidden]   (the encoder layer, ModelConfig.encoder_layer)

The LoRA scale is folded into A/B by the feeder (see model/lora.py); lora_rank may be 0 and
past_sequence_length may be 0 (prefill). `LMExportConfig.lora_inputs=False` drops the lora.* inputs
(same weights, plain graph): the baseline the engine benchmark compares LoRA decoding against. Uses the
TorchScript exporter (dynamo=False): it needs no onnxscript and keeps every dimension above symbolic when
traced with nonzero sizes.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
from torch import Tensor

from ..model.config import ModelConfig
from ..model.llama import LlamaLM


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


@dataclass(frozen=True)
class LMGraphNames:
    inputs: list[str]
    outputs: list[str]
    dynamic_axes: dict[str, dict[int, str]]
    lora_keys: list[tuple[int, str]]  # order of the lora.* inputs, A then B per key


def graph_names(cfg: ModelConfig, lora_inputs: bool = True) -> LMGraphNames:
    batch, seq, rank = "batch", "sequence_length", "lora_rank"
    past, total = "past_sequence_length", "total_sequence_length"
    inputs = ["input_ids", "attention_mask", "position_ids"]
    axes: dict[str, dict[int, str]] = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: total},
        "position_ids": {0: batch, 1: seq},
    }
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            inputs.append(f"past_key_values.{i}.{kind}")
            axes[inputs[-1]] = {0: batch, 2: past}
    lora_keys = [(i, m) for i in range(cfg.num_layers) for m in cfg.lora_targets] if lora_inputs else []
    for i, m in lora_keys:
        inputs += [f"lora.{i}.{m}.A", f"lora.{i}.{m}.B"]
        axes[f"lora.{i}.{m}.A"] = {0: batch, 2: rank}
        axes[f"lora.{i}.{m}.B"] = {0: batch, 1: rank}
    outputs = ["logits"]
    axes["logits"] = {0: batch, 1: seq}
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            outputs.append(f"present.{i}.{kind}")
            axes[outputs[-1]] = {0: batch, 2: total}
    outputs.append("hidden_states")
    axes["hidden_states"] = {0: batch, 1: seq}
    return LMGraphNames(inputs, outputs, axes, lora_keys)


class FlatLM(nn.Module):
    """LlamaLM with positional tensor I/O in `graph_names` order, as the exporter needs."""

    def __init__(self, lm: LlamaLM, lora_inputs: bool = True):
        super().__init__()
        self.lm = lm
        self.names = graph_names(lm.cfg, lora_inputs)

    def forward(self, input_ids: Tensor, attention_mask: Tensor, position_ids: Tensor, *rest: Tensor):
        n_layers = self.lm.cfg.num_layers
        past = [(rest[2 * i], rest[2 * i + 1]) for i in range(n_layers)]
        flat_lora = rest[2 * n_layers:]
        lora = {key: (flat_lora[2 * j], flat_lora[2 * j + 1]) for j, key in enumerate(self.names.lora_keys)}
        logits, present, hidden = self.lm(input_ids, attention_mask, position_ids, past, lora)
        return (logits, *[t for kv in present for t in kv], hidden)


def example_feeds(cfg: ModelConfig, batch: int, seq: int, past: int, rank: int,
                  dtype: torch.dtype = torch.float32, seed: int = 0) -> dict[str, Tensor]:
    """Random feeds named as the graph's inputs; no padding, positions continue after `past`."""
    g = torch.Generator().manual_seed(seed)
    feeds: dict[str, Tensor] = {
        "input_ids": torch.randint(0, cfg.vocab_size, (batch, seq), generator=g),  # [b, s]
        "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),  # [b, t]
        "position_ids": torch.arange(past, past + seq).expand(batch, seq).contiguous(),  # [b, s]
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


def export_lm(lm: LlamaLM, path: str | os.PathLike, ecfg: LMExportConfig | None = None) -> Path:
    """Write lm.onnx (to a temp name, then rename). Returns the path."""
    ecfg = ecfg or LMExportConfig()
    path = Path(path)
    flat = FlatLM(lm, ecfg.lora_inputs).eval()
    names = flat.names
    feeds = example_feeds(lm.cfg, ecfg.trace_batch, ecfg.trace_seq, ecfg.trace_past, ecfg.trace_rank, ecfg.dtype)
    args = tuple(feeds[n] for n in names.inputs)  # drops the lora.* feeds when the graph has none
    tmp = path.with_name(path.name + ".tmp")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter is chosen on purpose
        torch.onnx.export(flat, args, str(tmp), input_names=names.inputs, output_names=names.outputs,
                          dynamic_axes=names.dynamic_axes, opset_version=ecfg.opset, dynamo=False,
                          do_constant_folding=True)
    os.replace(tmp, path)
    return path
