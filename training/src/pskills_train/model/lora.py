"""LoRA as *inputs*: every batch row brings its own adapter, the base weights never change.

Convention (the one the LM graph and docs/design.md §4 use):

    y = x·W0ᵀ (+ bias) + (x·A)·B          A: [b, d_in, r]   B: [b, r, d_out]

The LoRA scale is **folded into the tensors by whoever produces them**: the model computes exactly
ΔW = A·B and takes no alpha. Folding lets one batch mix adapters of different rank and alpha (rows
are zero-padded to a common r) and is what the studio's `cat` merge produces (scale 1, α = r). The
helpers here fold the scale into A, as `cat` does.

PEFT semantics: PEFT stores lora_A.weight [r, d_in] and lora_B.weight [d_out, r] and computes
y = x·W0ᵀ + s·(x·lora_Aᵀ)·lora_Bᵀ with s = α/r (α/√r for rsLoRA). So
A = s·lora_A.weightᵀ and B = lora_B.weightᵀ (`from_peft`, `to_peft`).

r = 0 is valid everywhere: x·A is [b, s, 0], times B [b, 0, d_out] gives zeros.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from .config import LORA_MODULES, ModelConfig

LoraPair = tuple[Tensor, Tensor]  # (A [b, d_in, r], B [b, r, d_out])
LoraInputs = dict[tuple[int, str], LoraPair]  # (layer, module short name) -> pair
Row = dict[tuple[int, str], tuple[Tensor, Tensor]]  # one adapter: (layer, module) -> (A [d_in, r], B [r, d_out])


class LoRALinear(nn.Linear):
    """nn.Linear whose forward optionally adds a per-row low-rank update."""

    def forward(self, x: Tensor, lora: LoraPair | None = None) -> Tensor:  # x: [b, s, d_in]
        y = F.linear(x, self.weight, self.bias)  # [b, s, d_out]
        if lora is not None:
            a, b = lora
            # Cast only on a real mismatch: the tracer records even a no-op .to() as an ONNX Cast, and
            # the exported LoRA path should be exactly MatMul -> MatMul -> Add.
            a = a if a.dtype == x.dtype else a.to(x.dtype)
            b = b if b.dtype == x.dtype else b.to(x.dtype)
            y = y + torch.matmul(torch.matmul(x, a), b)  # [b,s,r] -> [b,s,d_out]
        return y


def zero_lora(cfg: ModelConfig, batch: int, rank: int = 0, dtype=torch.float32, device=None) -> LoraInputs:
    """Adapter inputs that change nothing: every target of every layer, A and B all zero."""
    out: LoraInputs = {}
    for i in range(cfg.num_layers):
        for m in cfg.lora_targets:
            d_in, d_out = cfg.lora_dims(m)
            out[(i, m)] = (
                torch.zeros(batch, d_in, rank, dtype=dtype, device=device),  # [b, d_in, r]
                torch.zeros(batch, rank, d_out, dtype=dtype, device=device),  # [b, r, d_out]
            )
    return out


def stack_rows(cfg: ModelConfig, rows: list[Row | None]) -> LoraInputs:
    """Batch per-row adapters into one LoraInputs, zero-padding every row to the largest rank.

    Each row is None (no adapter) or a dict (layer, module) -> (A [d_in, r_row], B [r_row, d_out])
    with the scale already folded. Missing (layer, module) keys mean "no update there". Padding
    with zeros is exact: the extra rank slots contribute (x·0)·0 = 0.
    """
    rank = max((a.shape[-1] for row in rows if row for a, _ in row.values()), default=0)
    ref = next((a for row in rows if row for a, _ in row.values()), None)
    dtype = ref.dtype if ref is not None else torch.float32
    out = zero_lora(cfg, len(rows), rank, dtype=dtype)
    for r_i, row in enumerate(rows):
        for key, (a, b) in (row or {}).items():
            if key not in out:
                raise KeyError(f"adapter key {key} is not a LoRA target of this model ({cfg.lora_targets})")
            big_a, big_b = out[key]
            if a.shape[0] != big_a.shape[1] or b.shape[1] != big_b.shape[2]:
                raise ValueError(f"adapter {key}: A {tuple(a.shape)} / B {tuple(b.shape)} "
                                 f"do not fit (d_in, d_out) = {cfg.lora_dims(key[1])}")
            big_a[r_i, :, : a.shape[1]] = a
            big_b[r_i, : b.shape[0], :] = b
    return out


def group_lora(cfg: ModelConfig, lora: LoraInputs) -> LoraInputs:
    """Per-module inputs (one rank R for all, as `stack_rows` makes them) -> the grouped inputs of an
    exported lm.onnx, keyed (layer, group name) (`ModelConfig.lora_groups`). Exact: member j's A fills
    rank slots j·R…, its B the same rows at its column offset, zeros elsewhere."""
    out: LoraInputs = {}
    layers = sorted({i for i, _ in lora})
    for i in layers:
        for g in cfg.lora_groups():
            pairs = [(lora.get((i, m)), off) for m, off in g.members]
            ref = next((p for p, _ in pairs if p is not None), None)
            if ref is None:
                continue
            b, rank = ref[0].shape[0], ref[0].shape[2]
            big_a = ref[0].new_zeros(b, g.d_in, rank * len(pairs))  # [b, d_in, R·n]
            big_b = ref[0].new_zeros(b, rank * len(pairs), g.d_out)  # [b, R·n, d_out]
            for j, (pair, off) in enumerate(pairs):
                if pair is None:
                    continue
                a, bb = pair  # [b, d_in, R], [b, R, d_m]
                big_a[:, :, j * rank:(j + 1) * rank] = a
                big_b[:, j * rank:(j + 1) * rank, off:off + bb.shape[2]] = bb
            out[(i, g.name)] = (big_a, big_b)
    return out


def from_peft(state: dict[str, Tensor], scale: float, num_layers: int) -> dict[tuple[int, str], LoraPair]:
    """One PEFT adapter state dict -> one row's {(layer, module): (A [d_in, r], B [r, d_out])}.

    Accepts the key spellings PEFT uses on disk (`base_model.model.model.layers.{i}.self_attn.q_proj.
    lora_A.weight`) and in memory (`...lora_A.default.weight`). `scale` is α/r (or α/√r for rsLoRA)
    and is folded into A.
    """
    out: dict[tuple[int, str], LoraPair] = {}
    for i in range(num_layers):
        for short, path in LORA_MODULES.items():
            stem = f"layers.{i}.{path}."
            a_key = next((k for k in state if stem in k and ".lora_A." in k), None)
            b_key = next((k for k in state if stem in k and ".lora_B." in k), None)
            if a_key is None and b_key is None:
                continue
            if a_key is None or b_key is None:
                raise KeyError(f"layer {i} {path}: found only one of lora_A / lora_B")
            lora_a, lora_b = state[a_key], state[b_key]  # [r, d_in], [d_out, r]
            out[(i, short)] = (scale * lora_a.t(), lora_b.t().contiguous())  # [d_in, r], [r, d_out]
    return out


def to_peft(row: dict[tuple[int, str], LoraPair], prefix: str = "base_model.model.model.") -> dict[str, Tensor]:
    """Inverse of `from_peft` with scale 1 (write the adapter with lora_alpha = r)."""
    out: dict[str, Tensor] = {}
    for (i, short), (a, b) in row.items():
        stem = f"{prefix}layers.{i}.{LORA_MODULES[short]}"
        out[f"{stem}.lora_A.weight"] = a.t().contiguous()  # [r, d_in]
        out[f"{stem}.lora_B.weight"] = b.t().contiguous()  # [d_out, r]
    return out
