"""The distillation objective and its optimizer as pure tensor functions.

Both the Python distiller (`distill.student`) and the exported training-step graph (`export.train_step`,
`export.train_layers`) call exactly these, so the studio's ONNX step and the training package compute
the same update. It sits with the model, below both.

Shapes: student logits [b, s, V]; the teacher's top-k per position, aligned to the student's positions
(position t predicts token t + 1): ids [b, s, k] int64, log-probabilities [b, s, k] (log-softmax of the
teacher's full distribution); mask [b, s] float, 1 where position t predicts an answer token.

    p      = softmax over the k teacher log-probabilities (the top-k renormalised)
    kl_t   = Σ_k p_k (log p_k − log q(id_k))             q = the student's full softmax
    ce_t   = −log q(id_1)                                 id_1 = the teacher's greedy token
    loss   = Σ_t mask_t (kl_t + ce_weight · ce_t) / max(1, Σ_t mask_t)
"""

from __future__ import annotations

import torch
from torch import Tensor

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


def distill_loss(logits: Tensor, top_ids: Tensor, top_logp: Tensor, mask: Tensor, ce_weight: float = 0.0) -> Tensor:
    logq = torch.log_softmax(logits.float(), dim=-1)  # [b, s, V]
    lq = torch.gather(logq, -1, top_ids)  # [b, s, k]
    logp = torch.log_softmax(top_logp.float(), dim=-1)  # [b, s, k] renormalised over the top-k
    kl = (logp.exp() * (logp - lq)).sum(-1)  # [b, s]
    per_tok = kl - ce_weight * lq[..., 0] if ce_weight else kl
    return (per_tok * mask).sum() / mask.sum().clamp(min=1.0)


def clip_scale(grads: list[Tensor], max_norm: float) -> Tensor:
    """The factor that brings the global gradient norm down to max_norm (1 when it is below)."""
    total = torch.sqrt(sum((g * g).sum() for g in grads))  # type: ignore[arg-type]
    return torch.clamp(max_norm / (total + 1e-6), max=1.0)


def adam_update(params: list[Tensor], grads: list[Tensor], m: list[Tensor], v: list[Tensor], step: Tensor,
                lr: Tensor, max_norm: float = 1.0) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
    """One Adam step (bias-corrected, no weight decay) after global-norm clipping. `step` is the
    1-based step number as a float tensor; returns new params, first and second moments."""
    scale = clip_scale(grads, max_norm)
    c1 = 1.0 - torch.pow(torch.tensor(BETA1), step)
    c2 = 1.0 - torch.pow(torch.tensor(BETA2), step)
    out_p, out_m, out_v = [], [], []
    for p, g, mi, vi in zip(params, grads, m, v, strict=True):
        g = g * scale
        mi = BETA1 * mi + (1.0 - BETA1) * g
        vi = BETA2 * vi + (1.0 - BETA2) * g * g
        p = p - lr * (mi / c1) / (torch.sqrt(vi / c2) + EPS)
        out_p.append(p)
        out_m.append(mi)
        out_v.append(vi)
    return out_p, out_m, out_v
