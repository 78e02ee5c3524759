"""lm.onnx with fused attention (`LMExportConfig.attention = "fused"`, docs/bundle-format.md "Attention"):
each layer's rotary embedding and attention become onnxruntime's `com.microsoft` RotaryEmbedding (q and
k) and GroupQueryAttention nodes, in place of ~50 elementwise, shape and Concat nodes per layer.

The profile of a SmolLM2-135M decode step (docs/results.md "The engine against llama.cpp") spent half a
step outside the kernels, on per-node overhead, and copied the cache through Concat. The graph's inputs
stay those of docs/bundle-format.md; its cache outputs are `step.{i}.key|value` [b, s, kv·hd], this step's
rotated keys and values, in place of `present.*`: onnxruntime-node copies every output it returns into a
new buffer, so returning the whole cache each step cost more than the attention (1–3 ms a SmolLM2-135M
step at 100 tokens). The engine appends them to a cache of its own, which it feeds back with room to
spare (past_key_values.* [b, kv, capacity, hd]; GroupQueryAttention reads the first t − s positions).
  - left padding: GroupQueryAttention's own causal mask sees every row as t = past + s slots long
    (seqlens_k = t − 1 for all rows) and the additive [b, 1, s, t] mask of `attention_mask_4d` goes in as
    its attention_bias, masking the pad slots (and the causal ones again, and a sliding window);
  - rotary positions come from position_ids (RotaryEmbedding's cos/sin tables are constants of
    max_positions rows), so a left-padded row's positions are its own.
The nodes need onnxruntime (CPU and WebGPU have both kernels); PyTorch computes the same numbers with
`layers.Attention` (each Function's forward), which is what the export's check compares against.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..model.config import ModelConfig
from ..model.layers import KV, Attention, apply_rope
from ..model.lora import LoraPair

ATTENTIONS = ("ops", "fused")
MS = "com.microsoft"


def rope_tables(cfg: ModelConfig, inv_freq: Tensor) -> tuple[Tensor, Tensor]:
    """cos, sin [max_positions, head_dim/2]: what Rotary computes for each position (same float32 steps)."""
    freqs = torch.arange(cfg.max_positions, dtype=torch.int64)[:, None].float() * inv_freq  # [P, hd/2]
    return freqs.cos(), freqs.sin()


def _rotate(x: Tensor, pos: Tensor, cos: Tensor, sin: Tensor, heads: int) -> Tensor:
    b, s, _ = x.shape
    c = torch.cat((cos[pos], cos[pos]), dim=-1)[:, None]  # [b, 1, s, hd]
    n = torch.cat((sin[pos], sin[pos]), dim=-1)[:, None]
    xh = x.view(b, s, heads, -1).transpose(1, 2)  # [b, heads, s, hd]
    return apply_rope(xh, c, n).transpose(1, 2).reshape(b, s, -1)


class _Rotary(torch.autograd.Function):
    """x [b, s, heads·hd] rotated at position_ids [b, s] (rotate-half layout); one RotaryEmbedding node."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pos: Tensor, cos: Tensor, sin: Tensor, heads: int) -> Tensor:
        return _rotate(x, pos, cos, sin, heads)

    @staticmethod
    def symbolic(g: Any, x: Any, pos: Any, cos: Any, sin: Any, heads: int) -> Any:
        y = g.op(f"{MS}::RotaryEmbedding", x, pos, cos, sin, interleaved_i=0, num_heads_i=heads)
        y.setType(x.type())  # the exporter has no shape inference for com.microsoft nodes
        return y


def _attend(q: Tensor, k: Tensor, v: Tensor, pk: Tensor, pv: Tensor, mask: Tensor, h: int, kv: int,
            hd: int) -> tuple:
    """layers.Attention's arithmetic on [b, s, ·] projections and a [b, kv, p, hd] past."""
    b, s, _ = q.shape
    qh = q.view(b, s, h, hd).transpose(1, 2)  # [b, h, s, hd]
    kt = torch.cat((pk, k.view(b, s, kv, hd).transpose(1, 2)), dim=2)  # [b, kv, t, hd]
    vt = torch.cat((pv, v.view(b, s, kv, hd).transpose(1, 2)), dim=2)
    rep, t = h // kv, kt.shape[2]
    att = torch.matmul(qh.reshape(b, kv, rep * s, hd), kt.transpose(2, 3)) * (1.0 / math.sqrt(hd))
    att = F.softmax((att.view(b, kv, rep, s, t) + mask[:, :, None]).float(), dim=-1).to(q.dtype)
    y = torch.matmul(att.view(b, kv, rep * s, t), vt).view(b, h, s, hd).transpose(1, 2).reshape(b, s, h * hd)
    return y, kt, vt


class _GroupQueryAttention(torch.autograd.Function):
    """(y [b, s, h·hd], present key, present value) of rotated q, k, v [b, s, ·], the past [b, kv, p, hd] and
    the additive mask [b, 1, s, t]; one GroupQueryAttention node (seqlens_k and the total from the mask)."""

    @staticmethod
    def forward(ctx: Any, q: Tensor, k: Tensor, v: Tensor, pk: Tensor, pv: Tensor, mask: Tensor, h: int,
                kv: int, hd: int) -> tuple:
        return _attend(q, k, v, pk, pv, mask, h, kv, hd)

    @staticmethod
    def symbolic(g: Any, q: Any, k: Any, v: Any, pk: Any, pv: Any, mask: Any, h: int, kv: int, hd: int) -> Any:
        from torch.onnx._internal.torchscript_exporter.symbolic_helper import _optional_input_placeholder_tensor

        def const(x: list[int]) -> Any:
            return g.op("Constant", value_t=torch.tensor(x, dtype=torch.int64))

        dims = g.op("Shape", mask)  # [b, 1, s, t]
        total64 = g.op("Gather", dims, const([3]), axis_i=0)  # [1]
        total = g.op("Cast", g.op("Squeeze", total64, const([0])), to_i=6)  # int32 scalar
        seqlens = g.op("Cast", g.op("Expand", g.op("Sub", total64, const([1])),
                                    g.op("Gather", dims, const([0]), axis_i=0)), to_i=6)  # int32 [b]: t − 1
        none = _optional_input_placeholder_tensor(g)
        y, k_out, v_out = g.op(f"{MS}::GroupQueryAttention", q, k, v, pk, pv, seqlens, total, none, none, none,
                               mask, num_heads_i=h, kv_num_heads_i=kv, outputs=3)
        y.setType(q.type())  # [b, s, h·hd]: q's own shape (no shape inference for com.microsoft nodes)
        k_out.setType(pk.type().with_sizes([None, kv, None, hd]))  # [b, kv, t, hd]
        v_out.setType(pv.type().with_sizes([None, kv, None, hd]))
        return y, k_out, v_out


def fused_forward(attn: Attention, x: Tensor, mask: Tensor, past: KV | None, lora: dict[str, LoraPair],
                  position_ids: Tensor, tables: tuple[Tensor, Tensor]) -> tuple[Tensor, KV]:
    """Attention.forward as the fused nodes (projections as `_fused_qkv`, so the LoRA groups are unchanged);
    returns the step's keys and values, not the whole cache."""
    b, s, _ = x.shape
    q, k, v = attn._fused_qkv(x, lora.get("qkv"))  # [b, s, ·]
    cos, sin = tables
    q = _Rotary.apply(q, position_ids, cos, sin, attn.h)
    k = _Rotary.apply(k, position_ids, cos, sin, attn.kv)
    if past is None:
        empty = x.new_zeros(b, attn.kv, 0, attn.hd)
        past = (empty, empty)
    y, _, _ = _GroupQueryAttention.apply(q, k, v, past[0], past[1], mask, attn.h, attn.kv, attn.hd)
    return attn.o_proj(y, lora.get("o")), (k, v)  # the step's keys and values, [b, s, kv·hd]


@contextmanager
def fused_attention(lm: Any) -> Iterator[Any]:
    """`lm` (a LlamaLM under export_lm's `fused_projections`) with every Attention computing through the
    fused nodes while it is traced."""
    tables = rope_tables(lm.cfg, lm.model.rotary.inv_freq)
    attns = [m for m in lm.modules() if isinstance(m, Attention)]
    for a in attns:
        a.fused = lambda a_, x, mask, past, lora, pos: fused_forward(a_, x, mask, past, lora, pos, tables)
    try:
        yield lm
    finally:
        for a in attns:
            a.fused = None
