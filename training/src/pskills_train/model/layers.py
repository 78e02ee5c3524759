"""Building blocks of a Llama-family decoder: RMSNorm, RoPE, GQA attention with a KV cache, SwiGLU.

Numerics follow Hugging Face's Llama/Qwen2/Mistral code (norm in fp32, rotate-half RoPE, softmax
over an additive mask) so that their checkpoints load by key name and logits match to ~1e-6.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from .config import ModelConfig
from .lora import LoRALinear, LoraPair

KV = tuple[Tensor, Tensor]  # (key, value), each [b, kv_heads, t, head_dim]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:  # x: [..., d]
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)  # [..., d] fp32
        return self.weight * h.to(x.dtype)


def rope_inv_freq(cfg: ModelConfig) -> Tensor:
    """Inverse frequencies [head_dim/2], with HF's `linear` and `llama3` scalings."""
    hd = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.int64, device="cpu").float() / hd))  # [hd/2]
    sc = cfg.rope_scaling or {}
    kind = sc.get("rope_type", "default")
    if kind == "linear":
        return inv / sc["factor"]
    if kind == "llama3":  # transformers `_compute_llama3_parameters`
        factor, lo, hi = sc["factor"], sc["low_freq_factor"], sc["high_freq_factor"]
        old_ctx = sc["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv  # [hd/2]
        scaled = torch.where(wavelen > old_ctx / lo, inv / factor, inv)
        smooth = (old_ctx / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= old_ctx / hi) & (wavelen <= old_ctx / lo)
        return torch.where(medium, smoothed, scaled)
    return inv


class Rotary(nn.Module):
    """cos/sin tables computed from explicit position_ids (so left padding just shifts positions)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        # A plain attribute, not a buffer: `model.to(bfloat16)` must not round the frequencies.
        self.inv_freq = rope_inv_freq(cfg)  # [hd/2] fp32

    def forward(self, position_ids: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        inv_freq = self.inv_freq.to(position_ids.device)
        freqs = position_ids[..., None].float() * inv_freq  # [b, s, hd/2]
        emb = torch.cat((freqs, freqs), dim=-1)  # [b, s, hd]
        return emb.cos().to(dtype)[:, None], emb.sin().to(dtype)[:, None]  # [b, 1, s, hd] each


def rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:  # x: [b, h, s, hd]
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    """Grouped-query attention. `mask` is additive [b, 1, s, t]; the cache grows along dim 2."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.h, self.kv, self.hd = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        d = cfg.hidden_size
        self.q_proj = LoRALinear(d, self.h * self.hd, bias=cfg.qkv_bias)
        self.k_proj = LoRALinear(d, self.kv * self.hd, bias=cfg.qkv_bias)
        self.v_proj = LoRALinear(d, self.kv * self.hd, bias=cfg.qkv_bias)
        self.o_proj = LoRALinear(self.h * self.hd, d, bias=cfg.o_bias)
        self.fuse_qkv = False  # set by the exporters (export/onnx_lm.py `fused_projections`)
        self.fused: Callable[..., tuple[Tensor, KV]] | None = None  # export/onnx_attention.py `fused_attention`

    def forward(
        self,
        x: Tensor,  # [b, s, d]
        cos: Tensor,
        sin: Tensor,  # [b, 1, s, hd]
        mask: Tensor,  # [b, 1, s, t] additive, t = p + s
        past: KV | None,  # ([b, kv, p, hd], [b, kv, p, hd])
        lora: dict[str, LoraPair],
        position_ids: Tensor | None = None,  # [b, s]: read only by the fused export
    ) -> tuple[Tensor, KV]:
        if self.fused is not None:
            return self.fused(self, x, mask, past, lora, position_ids)
        b, s, _ = x.shape
        if self.fuse_qkv:
            q, k, v = self._fused_qkv(x, lora.get("qkv"))
        else:
            q, k, v = self.q_proj(x, lora.get("q")), self.k_proj(x, lora.get("k")), self.v_proj(x, lora.get("v"))
        q = q.view(b, s, self.h, self.hd).transpose(1, 2)  # [b, h, s, hd]
        k = k.view(b, s, self.kv, self.hd).transpose(1, 2)  # [b, kv, s, hd]
        v = v.view(b, s, self.kv, self.hd).transpose(1, 2)  # [b, kv, s, hd]
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if past is not None:
            k = torch.cat((past[0], k), dim=2)  # [b, kv, t, hd]
            v = torch.cat((past[1], v), dim=2)  # [b, kv, t, hd]
        present = (k, v)
        # The rep = h / kv query heads of one kv head attend as one group, so K and V are read in place:
        # repeating them per query head copied the whole cache in every layer at every decode step.
        rep, t = self.h // self.kv, k.shape[2]
        qg = q.reshape(b, self.kv, rep * s, self.hd)  # query head j reads kv head j // rep
        att = torch.matmul(qg, k.transpose(2, 3)) * (1.0 / math.sqrt(self.hd))  # [b, kv, rep*s, t]
        att = att.view(b, self.kv, rep, s, t) + mask[:, :, None]  # mask [b, 1, 1, s, t]
        att = F.softmax(att.float(), dim=-1).to(q.dtype)
        y = torch.matmul(att.view(b, self.kv, rep * s, t), v)  # [b, kv, rep*s, hd]
        y = y.view(b, self.h, s, self.hd).transpose(1, 2).reshape(b, s, self.h * self.hd)  # [b, s, h*hd]
        return self.o_proj(y, lora.get("o")), present


    def _fused_qkv(self, x: Tensor, group: LoraPair | None) -> tuple[Tensor, Tensor, Tensor]:
        """One product for q|k|v and one LoRA pair for all three (export: a node per projection and two
        inputs per target cost more than the arithmetic at decode; the cat folds into one initializer)."""
        projs = (self.q_proj, self.k_proj, self.v_proj)
        w = torch.cat([p.weight for p in projs])  # [q + 2kv, d]
        bias = torch.cat([p.bias for p in projs]) if self.q_proj.bias is not None else None
        y = F.linear(x, w, bias)  # [b, s, q + 2kv]
        if group is not None:
            y = y + torch.matmul(torch.matmul(x, group[0]), group[1])  # A [b, d, R], B [b, R, q + 2kv]
        q, k, v = y.split([self.h * self.hd, self.kv * self.hd, self.kv * self.hd], dim=-1)
        return q, k, v


class SwiGLU(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d, f = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = LoRALinear(d, f, bias=False)
        self.up_proj = LoRALinear(d, f, bias=False)
        self.down_proj = LoRALinear(f, d, bias=False)

    def forward(self, x: Tensor, lora: dict[str, LoraPair]) -> Tensor:  # x: [b, s, d]
        g = F.silu(self.gate_proj(x, lora.get("gate"))) * self.up_proj(x, lora.get("up"))  # [b, s, f]
        return self.down_proj(g, lora.get("down"))  # [b, s, d]


def attention_mask_4d(attention_mask: Tensor, s: int, dtype: torch.dtype, window: int | None = None) -> Tensor:
    """[b, t] 1/0 padding mask -> additive [b, 1, s, t] causal mask for the last s of t slots.

    Query i sits at slot t - s + i. A fully masked row (a pad query) gets a finite minimum, not
    -inf, so softmax stays finite; its output is never used.
    """
    t = attention_mask.shape[1]
    q_slot = torch.arange(s, device=attention_mask.device)[:, None] + (t - s)  # [s, 1]
    k_slot = torch.arange(t, device=attention_mask.device)[None, :]  # [1, t]
    allowed = k_slot <= q_slot  # [s, t]
    if window is not None:
        allowed = allowed & (q_slot - k_slot < window)
    allowed = allowed[None, None] & (attention_mask[:, None, None, :] > 0)  # [b, 1, s, t]
    zero = torch.zeros((), dtype=dtype, device=attention_mask.device)
    return torch.where(allowed, zero, torch.finfo(dtype).min)  # [b, 1, s, t]
