"""Adapter diversity from LoRA factors (docs/design.md §5): Gram matrix of ΔW = A·B across adapters.

⟨ΔWi, ΔWj⟩ = Σ over (layer, module) of tr((AiᵀAj)(BjBiᵀ)); only [r_i, R] products are formed, never a
d_in × d_out matrix. An adapter is {(layer, module): (A [d_in, r], B [r, d_out])}; a missing key is ΔW = 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

Adapter = Mapping[Any, tuple[Any, Any]]


def _np(x) -> np.ndarray:
    return x.detach().float().numpy() if hasattr(x, "detach") else np.asarray(x, np.float32)


def cross_gram(xs: Sequence[Adapter], ys: Sequence[Adapter], symmetric: bool = False) -> np.ndarray:
    """G[i, j] = ⟨ΔW(xs[i]), ΔW(ys[j])⟩ (Frobenius, summed over layers and modules), [len(xs), len(ys)].
    float32 products, float64 sums. symmetric: xs is ys, only j ≥ i is computed and mirrored."""
    g = np.zeros((len(xs), len(ys)))
    keys = sorted({k for a in [*xs, *ys] for k in a}, key=str)
    for key in keys:
        ys_k = [(j, _np(y[key][0]), _np(y[key][1])) for j, y in enumerate(ys) if key in y and y[key][0].shape[-1]]
        if not ys_k:
            continue
        a_cat = np.concatenate([a for _, a, _ in ys_k], 1)  # [d_in, R]
        b_cat = np.concatenate([b for _, _, b in ys_k], 0)  # [R, d_out]
        starts = np.cumsum([0] + [a.shape[1] for _, a, _ in ys_k])[:-1]
        cols = np.array([j for j, _, _ in ys_k])
        pos = {j: p for p, j in enumerate(cols)}
        for i, x in enumerate(xs):
            if key not in x or not x[key][0].shape[-1]:
                continue
            first = pos[i] if symmetric else 0  # symmetric: x is ys[i], which holds this key
            s0 = starts[first]
            ai, bi = _np(x[key][0]), _np(x[key][1])
            prod = (ai.T @ a_cat[:, s0:]) * (bi @ b_cat[s0:].T)  # [r_i, R']: (AiᵀAj)[p,q]·(BiBjᵀ)[p,q]
            g[i, cols[first:]] += np.add.reduceat(prod.sum(0, dtype=np.float64), starts[first:] - s0)
    if symmetric:
        g = np.triu(g) + np.triu(g, 1).T
    return g


def diversity(adapters: Sequence[Adapter], others: Sequence[Adapter] = ()) -> dict[str, Any]:
    """cos_mean / cos_p95: pairwise cosine of ΔW over i < j;
    specific_share: mean_i ‖ΔWi − mean ΔW‖ / ‖ΔWi‖;
    cos_to_mean: mean_i cos(ΔWi, mean ΔW); others_cos_to_mean: the same for adapters outside the set
    (e.g. compiled from random text)."""
    n = len(adapters)
    if n < 2:
        return {"n": n, "cos_mean": None, "cos_p95": None, "specific_share": None, "cos_to_mean": None}
    g = cross_gram(adapters, adapters, symmetric=True)
    norm2 = np.clip(np.diag(g), 1e-30, None)
    cos = g / np.sqrt(np.outer(norm2, norm2))
    pairs = cos[np.triu_indices(n, 1)]
    to_mean = g.mean(1)  # ⟨ΔWi, M⟩
    m2 = max(g.mean(), 1e-30)  # ‖M‖²
    spec = np.sqrt(np.clip(norm2 - 2 * to_mean + m2, 0, None) / norm2)
    out = {"n": n, "cos_mean": float(pairs.mean()), "cos_p95": float(np.percentile(pairs, 95)),
           "specific_share": float(spec.mean()), "cos_to_mean": float((to_mean / np.sqrt(norm2 * m2)).mean())}
    if others:
        cg = cross_gram(others, adapters).mean(1)  # ⟨ΔWo, M⟩
        o2 = np.clip([cross_gram([o], [o], symmetric=True)[0, 0] for o in others], 1e-30, None)
        out["others_cos_to_mean"] = float((cg / np.sqrt(o2 * m2)).mean())
        out["n_others"] = len(others)
    return out
