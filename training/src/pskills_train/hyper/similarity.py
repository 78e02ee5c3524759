"""Cosine of ΔW between the rows of one LoraInputs batch, from the factors (never d_out × d_in).

⟨ΔWᵢ, ΔWⱼ⟩ = tr(Aᵢᵀ Aⱼ Bⱼ Bᵢᵀ) per (layer, module), summed; the training loop logs the mean
off-diagonal cosine so a run whose adapters stay alike can be seen, and stopped, early.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..model.lora import LoraInputs


@torch.no_grad()
def gram(lora: LoraInputs) -> Tensor:
    """[b, b] inner products of the rows' ΔW, summed over every (layer, module)."""
    g: Tensor | None = None
    for a, b in lora.values():  # a [n, d_in, R], b [n, R, d_out]
        ga = torch.einsum("idr,jds->ijrs", a.float(), a.float())  # Aᵢᵀ Aⱼ
        gb = torch.einsum("irk,jsk->ijrs", b.float(), b.float())  # Bᵢ Bⱼᵀ
        term = (ga * gb).sum((-1, -2))  # [n, n]
        g = term if g is None else g + term
    if g is None:
        raise ValueError("gram: the LoraInputs hold no (layer, module) factors")
    return g


def mean_cosine(lora: LoraInputs) -> float:
    """Mean pairwise cosine of ΔW across the rows (nan with fewer than two rows or a zero adapter)."""
    g = gram(lora)
    n = g.shape[0]
    if n < 2:
        return float("nan")
    d = g.diagonal().clamp(min=1e-30).sqrt()
    cos = g / (d[:, None] * d[None, :])
    return float(cos[~torch.eye(n, dtype=torch.bool)].mean())
