"""Hypernetworks h_θ: encoder states of one chunk -> a rank-r adapter for every (layer, module).

Both kinds share one interface (and one ONNX I/O contract, docs/bundle-format.md):

    forward(states [b, n, d_enc], mask [b, n] float 1/0) -> {module: (A [b, L, d_in, r], B [b, L, r, d_out])}

and produce *folded* factors (the LM computes y += (x·A)·B, no α/r).

- `PerceiverHypernet` (the default, docs/design.md): one learned query per (layer, module, rank slot);
  `blocks` cross-attention blocks let the queries read the masked states; per-module heads turn each
  slot's query into one row of A (d_in) and one column of B (d_out).
- `T2LHypernet` (the ablation): masked mean of the states -> MLP over layer + module + slot
  embeddings (Text-to-LoRA style) -> the same per-module heads.

The B heads start at zero (`b_init` = 0), so a fresh hypernetwork gives ΔW = 0 and leaves the base LM
unchanged; A starts at std 1/sqrt(d_in) per entry so x·A is O(1) from the first step. Both heads'
outputs are scaled by `out_scale` (NetConfig) so the factors move at about the learning rate per
step, as LoRA weights trained directly do, instead of ~width times faster.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn as nn
from torch import Tensor

from ..model.config import ModelConfig
from .config import NetConfig

Factors = dict[str, tuple[Tensor, Tensor]]  # module -> (A [b, L, d_in, r], B [b, L, r, d_out])


class SlotBatchNorm(nn.Module):
    """Each (slot, feature) centred and scaled over the batch while training, by running statistics
    when compiling (one skill at a time): batch norm without affine terms, written out so the ONNX
    graph is plain arithmetic."""

    running_mean: Tensor
    running_var: Tensor

    def __init__(self, slots: int, w: int, momentum: float = 0.05, eps: float = 1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(slots, w))
        self.register_buffer("running_var", torch.ones(slots, w))

    def forward(self, z: Tensor) -> Tensor:  # z [b, Q, w]
        if self.training:  # statistics in fp32: under bf16 autocast z is bf16 and the buffers fp32
            mean, var = z.float().mean(0), z.float().var(0, unbiased=False)
            with torch.no_grad():
                n = z.shape[0]
                self.running_mean.lerp_(mean.detach(), self.momentum)
                self.running_var.lerp_(var.detach() * n / max(1, n - 1), self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        return (z - mean) * torch.rsqrt(var + self.eps)


class _Base(nn.Module):
    def __init__(self, lm_cfg: ModelConfig, cfg: NetConfig):
        super().__init__()
        unknown = [m for m in cfg.targets if m not in lm_cfg.lora_targets]
        if unknown:
            raise ValueError(f"net.targets {unknown} are not LoRA targets of the base model {lm_cfg.lora_targets}")
        self.cfg = cfg
        self.modules_ = list(cfg.targets)
        self.num_layers = lm_cfg.num_layers
        self.d_enc = lm_cfg.hidden_size
        self.spec_rank = cfg.rank  # slots read from the skill
        self.rank = cfg.rank + cfg.shared_rank  # output rank per chunk (bundle.json hypernet.rank)
        self.dims = {m: lm_cfg.lora_dims(m) for m in self.modules_}
        w = cfg.width
        self.out_norm = nn.LayerNorm(w) if cfg.norm == "layer" else SlotBatchNorm(self.num_slots, w)
        self.head_a = nn.ModuleDict({m: nn.Linear(w, d_in) for m, (d_in, _) in self.dims.items()})
        self.head_b = nn.ModuleDict({m: nn.Linear(w, d_out) for m, (_, d_out) in self.dims.items()})
        # The generic part, made explicit: one learned adapter every skill gets (rank-concatenated, so
        # chunk averaging keeps it exact), leaving the skill-read slots to explain what differs.
        r0, L = cfg.shared_rank, lm_cfg.num_layers
        self.shared_a = nn.ParameterDict({m: nn.Parameter(torch.randn(L, d_in, r0) / math.sqrt(d_in))
                                          for m, (d_in, _) in self.dims.items()} if r0 else {})
        self.shared_b = nn.ParameterDict({m: nn.Parameter(torch.zeros(L, r0, d_out))
                                          for m, (_, d_out) in self.dims.items()} if r0 else {})

    @torch.no_grad()
    def _init_heads(self, g: torch.Generator) -> None:
        w = self.cfg.width
        for m, (d_in, _) in self.dims.items():
            ha, hb = cast(nn.Linear, self.head_a[m]), cast(nn.Linear, self.head_b[m])
            ha.weight.normal_(0.0, 1.0 / (math.sqrt(w * d_in) * self.cfg.out_scale), generator=g)
            ha.bias.zero_()
            hb.weight.normal_(0.0, 1.0, generator=g).mul_(self.cfg.b_init)
            hb.bias.zero_()

    @property
    def num_slots(self) -> int:
        return self.num_layers * len(self.modules_) * self.spec_rank

    def _slots(self, z: Tensor) -> Tensor:
        """Normalise (and cap) slots [b, L*M*r, w] -> [b, L, M, r, w]."""
        z = self.out_norm(z)
        if self.cfg.slot_clip > 0:  # cap each slot's norm (out-of-distribution chunks)
            cap = self.cfg.slot_clip * math.sqrt(z.shape[-1])
            z = z * torch.clamp(cap / z.norm(dim=-1, keepdim=True).clamp(min=1e-6), max=1.0)
        return z.view(z.shape[0], self.num_layers, len(self.modules_), self.spec_rank, -1)

    def heads(self, z: Tensor) -> Factors:
        """z [b, L*M*r, w] (slot order layer, module, rank) -> per-module folded factors."""
        b = z.shape[0]
        zs = self._slots(z)
        out: Factors = {}
        for j, m in enumerate(self.modules_):
            s = self.cfg.out_scale
            a = self.head_a[m](zs[:, :, j]).transpose(-1, -2) * s  # [b, L, d_in, r]
            bb = self.head_b[m](zs[:, :, j]) * s  # [b, L, r, d_out]
            if self.cfg.shared_rank:
                a = torch.cat([a, self.shared_a[m].expand(b, -1, -1, -1)], dim=-1)  # [b, L, d_in, r + r0]
                bb = torch.cat([bb, self.shared_b[m].expand(b, -1, -1, -1)], dim=-2)  # [b, L, r + r0, d_out]
            out[m] = (a, bb)
        return out

    @torch.no_grad()
    def shared_share(self) -> float:
        """‖ΔW₀‖ of the shared adapter (summed over layers and modules, Frobenius) — 0 without one."""
        if not self.cfg.shared_rank:
            return 0.0
        return float(sum((self.shared_a[m] @ self.shared_b[m]).pow(2).sum() for m in self.modules_).sqrt())

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


class CrossAttentionBlock(nn.Module):
    """Pre-norm cross-attention (queries <- states) and an MLP, both residual."""

    def __init__(self, w: int, d_enc: int, heads: int, mlp_ratio: int):
        super().__init__()
        if w % heads:
            raise ValueError(f"width {w} not a multiple of heads {heads}")
        self.heads = heads
        self.scale = 1.0 / math.sqrt(w // heads)
        self.norm_q = nn.LayerNorm(w)
        self.q = nn.Linear(w, w, bias=False)
        self.kv = nn.Linear(d_enc, 2 * w, bias=False)
        self.o = nn.Linear(w, w)
        self.norm_mlp = nn.LayerNorm(w)
        self.mlp = nn.Sequential(nn.Linear(w, mlp_ratio * w), nn.GELU(), nn.Linear(mlp_ratio * w, w))

    def forward(self, z: Tensor, kv_in: Tensor, bias: Tensor) -> Tensor:
        # z: [b, Q, w]; kv_in: [b, n, d_enc] (normed); bias: [b, 1, 1, n] additive mask
        b, nq, w = z.shape
        n, h = kv_in.shape[1], self.heads
        q = self.q(self.norm_q(z)).view(b, nq, h, w // h).transpose(1, 2)  # [b, h, Q, dh]
        kv = self.kv(kv_in).view(b, n, 2, h, w // h).permute(2, 0, 3, 1, 4)  # [2, b, h, n, dh]
        att = torch.matmul(q, kv[0].transpose(-1, -2)) * self.scale + bias  # [b, h, Q, n]
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, kv[1]).transpose(1, 2).reshape(b, nq, w)  # [b, Q, w]
        z = z + self.o(y)
        return z + self.mlp(self.norm_mlp(z))


class ContentReadout(nn.Module):
    """Attention read with no residual: slot = o(softmax(q·k) · v(states))."""

    def __init__(self, w: int, d_enc: int, heads: int):
        super().__init__()
        self.heads, self.scale = heads, 1.0 / math.sqrt(w // heads)
        self.norm_q = nn.LayerNorm(w)
        self.q = nn.Linear(w, w, bias=False)
        self.k = nn.Linear(d_enc, w, bias=False)
        self.v = nn.Linear(d_enc, w, bias=False)
        self.o = nn.Linear(w, w)

    def forward(self, z: Tensor, kv_in: Tensor, bias: Tensor) -> Tensor:
        b, nq, w = z.shape
        n, h = kv_in.shape[1], self.heads
        q = self.q(self.norm_q(z)).view(b, nq, h, w // h).transpose(1, 2)  # [b, h, Q, dh]
        k = self.k(kv_in).view(b, n, h, w // h).transpose(1, 2)  # [b, h, n, dh]
        v = self.v(kv_in).view(b, n, h, w // h).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * self.scale + bias, dim=-1)  # [b, h, Q, n]
        return self.o(torch.matmul(att, v).transpose(1, 2).reshape(b, nq, w))  # [b, Q, w]


class PerceiverHypernet(_Base):
    kind = "perceiver"

    def __init__(self, lm_cfg: ModelConfig, cfg: NetConfig):
        super().__init__(lm_cfg, cfg)
        w = cfg.width
        self.norm_in = nn.LayerNorm(self.d_enc)
        self.queries = nn.Parameter(torch.zeros(self.num_slots, w))  # [L*M*r, w]
        self.blocks = nn.ModuleList(CrossAttentionBlock(w, self.d_enc, cfg.heads, cfg.mlp_ratio)
                                    for _ in range(cfg.blocks))
        self.readout = ContentReadout(w, self.d_enc, cfg.heads) if cfg.readout == "content" else None
        g = torch.Generator().manual_seed(cfg.seed)
        with torch.no_grad():
            self.queries.normal_(0.0, 1.0, generator=g)
            ro = [x for x in self.readout.children() if isinstance(x, nn.Linear)] if self.readout else []
            blocks = cast(list[CrossAttentionBlock], list(self.blocks))
            lins = ro + [cast(nn.Linear, x) for blk in blocks for x in (blk.q, blk.kv, blk.o, blk.mlp[0], blk.mlp[2])]
            for lin in lins:
                lin.weight.normal_(0.0, 0.02, generator=g)
                if lin.bias is not None:
                    lin.bias.zero_()
        self._init_heads(g)

    def forward(self, states: Tensor, mask: Tensor) -> Factors:
        # states [b, n, d_enc], mask [b, n] (float 1 = real)
        b = states.shape[0]
        kv_in = self.norm_in(states)  # [b, n, d_enc]
        bias = ((mask - 1.0) * 1e9).view(b, 1, 1, -1)  # [b, 1, 1, n]: 0 real, -1e9 padding
        z = self.queries.unsqueeze(0).expand(b, -1, -1)  # [b, Q, w]
        for blk in self.blocks:
            z = blk(z, kv_in, bias)
        if self.readout is not None:
            z = self.readout(z, kv_in, bias)
        return self.heads(z)


class T2LHypernet(_Base):
    kind = "t2l"

    def __init__(self, lm_cfg: ModelConfig, cfg: NetConfig):
        super().__init__(lm_cfg, cfg)
        w = cfg.width
        self.norm_in = nn.LayerNorm(self.d_enc)
        self.pool_proj = nn.Linear(self.d_enc, w)
        self.layer_emb = nn.Parameter(torch.zeros(self.num_layers, w))
        self.module_emb = nn.Parameter(torch.zeros(len(self.modules_), w))
        self.slot_emb = nn.Parameter(torch.zeros(self.spec_rank, w))
        self.mlps = nn.ModuleList(nn.Sequential(nn.LayerNorm(w), nn.Linear(w, cfg.mlp_ratio * w), nn.GELU(),
                                                nn.Linear(cfg.mlp_ratio * w, w)) for _ in range(cfg.blocks))
        g = torch.Generator().manual_seed(cfg.seed)
        with torch.no_grad():
            for e in (self.layer_emb, self.module_emb, self.slot_emb):
                e.normal_(0.0, 1.0, generator=g)
            mlps = [cast(nn.Sequential, m) for m in self.mlps]
            for lin in [self.pool_proj] + [cast(nn.Linear, m[i]) for m in mlps for i in (1, 3)]:
                lin.weight.normal_(0.0, 0.02, generator=g)
                lin.bias.zero_()
        self._init_heads(g)

    def forward(self, states: Tensor, mask: Tensor) -> Factors:
        m = mask.unsqueeze(-1)  # [b, n, 1]
        pooled = (self.norm_in(states) * m).sum(1) / m.sum(1).clamp(min=1.0)  # [b, d_enc]
        emb = (self.layer_emb[:, None, None, :] + self.module_emb[None, :, None, :]
               + self.slot_emb[None, None, :, :]).reshape(1, self.num_slots, -1)  # [1, Q, w]
        z = self.pool_proj(pooled).unsqueeze(1) + emb  # [b, Q, w]
        for mlp in self.mlps:
            z = z + mlp(z)
        return self.heads(z)


def build_hypernet(lm_cfg: ModelConfig, cfg: NetConfig) -> _Base:
    return {"perceiver": PerceiverHypernet, "t2l": T2LHypernet}[cfg.kind](lm_cfg, cfg)


def perturb(net: _Base, seed: int, std: float = 0.5) -> None:
    """Random-but-nonzero outputs for fixtures: every B head gets weights (B entries ~std), every
    other matrix noise."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.startswith("head_b") and name.endswith("weight"):
                p.copy_(torch.randn(p.shape, generator=g) * std / (math.sqrt(p.shape[1]) * net.cfg.out_scale))
            elif not name.startswith("head_a") and p.dim() >= 2 and "emb" not in name and "queries" not in name:
                p.add_(torch.randn(p.shape, generator=g) * std / math.sqrt(p.shape[1]))
