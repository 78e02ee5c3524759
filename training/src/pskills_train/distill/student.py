"""The student: the base plus one LoRA (every target of the bundle's layers), no skill in context,
moved toward the teacher's top-k by K Adam steps (`model.distill_objective`, the same update as
train_step.onnx); the recipe is distill_recipe.py's.

Init: the instant adapter (the hypernetwork's output, its own rank) or zero (A uniform ±1/√d_in, B 0,
drawn from the seed). Batches are drawn in a seeded permutation per pass over the teacher rows, so a
run is a function of (seed, rows, recipe). The permutation and the zero init's draws are integer
generators that the studio's engine implements bit for bit (main/engine/distill-order.ts, `seededRng`),
so the same seed gives the same batches and init in both (docs/distill.md "Batch order and init").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from ..distill_recipe import Recipe
from ..model.distill_objective import adam_update, distill_loss
from ..model.llama import LlamaLM
from ..model.lora import Row
from .teacher import TeacherRow


class NonFinite(RuntimeError):
    """The loss went non-finite: the step is named and nothing is kept."""


@dataclass
class Result:
    adapter: Row
    losses: list[float]
    seconds: float
    snapshots: dict[int, Row] = field(default_factory=dict)


_M32 = 0xFFFFFFFF


def uniform01(seed: int, n: int, start: int = 0) -> np.ndarray:
    """Draws start … start+n−1 of mulberry32 seeded with `seed`, in [0, 1) (float64): the engine's
    `seededRng` (main/engine/sampler.ts). Its state only counts, so any slice is computed at once."""
    s = ((seed & _M32) + np.arange(start + 1, start + n + 1, dtype=np.uint64) * 0x6D2B79F5) & _M32
    t = s.astype(np.uint32)
    t = (t ^ (t >> np.uint32(15))) * (t | np.uint32(1))
    t = t ^ (t + (t ^ (t >> np.uint32(7))) * (t | np.uint32(61)))
    return (t ^ (t >> np.uint32(14))).astype(np.float64) / 4294967296.0


def batch_order(rows: int, batch: int, steps: int, seed: int) -> list[list[int]]:
    """Row indices of each step's batch: a Fisher–Yates shuffle per pass driven by a 32-bit LCG
    (s ← 1664525·s + 1013904223 mod 2³², from s = seed + 1; j = ⌊s·(i+1) / 2³²⌋), rows taken from the
    end of the permutation. main/engine/distill-order.ts `batchOrder` is the same function."""
    s = (seed + 1) & _M32
    out: list[list[int]] = []
    perm: list[int] = []
    for _ in range(steps):
        picked: list[int] = []
        while len(picked) < min(batch, rows):
            if not perm:
                perm = list(range(rows))
                for i in range(rows - 1, 0, -1):
                    s = (s * 1664525 + 1013904223) & _M32
                    j = (s * (i + 1)) >> 32
                    perm[i], perm[j] = perm[j], perm[i]
            picked.append(perm.pop())
        out.append(picked)
    return out


def zero_init(lm: LlamaLM, layers: list[int], rank: int, seed: int) -> Row:
    """A uniform ±1/√d_in and B 0 per target (layers outer, the bundle's target order inner, A
    row-major), from one mulberry32 stream: the engine's `initState` with no init adapter."""
    out: Row = {}
    drawn = 0
    for i in layers:
        for m in lm.cfg.lora_targets:
            d_in, d_out = lm.cfg.lora_dims(m)
            u = uniform01(seed, d_in * rank, drawn)
            drawn += d_in * rank
            a = ((2.0 * u - 1.0) * (1.0 / math.sqrt(d_in))).astype(np.float32).reshape(d_in, rank)
            out[(i, m)] = (torch.from_numpy(a), torch.zeros(rank, d_out))
    return out


def _batch(rows: list[TeacherRow], k: int) -> tuple[Tensor, ...]:
    """Right-padded student rows (causal: real tokens never see the pads) with the teacher's top-k
    aligned to the positions that predict each answer token."""
    b, width = len(rows), max(len(r.student) for r in rows)
    ids = torch.zeros(b, width, dtype=torch.int64)
    mask = torch.zeros(b, width, dtype=torch.int64)
    ans = torch.zeros(b, width)
    top_ids = torch.zeros(b, width, k, dtype=torch.int64)
    top_logp = torch.full((b, width, k), math.log(1.0 / k))
    for r, row in enumerate(rows):
        n, a0 = len(row.student), row.answer_from
        ids[r, :n] = torch.tensor(row.student)
        mask[r, :n] = 1
        ans[r, a0 - 1:n - 1] = 1.0
        top_ids[r, a0 - 1:n - 1] = row.top_ids[:, :k]
        top_logp[r, a0 - 1:n - 1] = row.top_logp[:, :k]
    pos = torch.arange(width)[None].expand(b, -1)
    return ids, mask, pos, ans, top_ids, top_logp


def distill(lm: LlamaLM, rows: list[TeacherRow], init: Row, recipe: Recipe, seed: int = 0) -> Result:
    if not rows:
        raise ValueError("no teacher rows to distill from")
    keys = sorted(init)
    params = [t.detach().clone().float() for k in keys for t in init[k]]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for p in lm.parameters():
        p.requires_grad_(False)
    order = batch_order(len(rows), recipe.batch, recipe.steps, seed)
    losses: list[float] = []
    snaps: dict[int, Row] = {}
    t0 = time.perf_counter()

    def as_row(ps: list[Tensor]) -> Row:
        return {k: (ps[2 * j].detach().clone(), ps[2 * j + 1].detach().clone()) for j, k in enumerate(keys)}

    for step in range(1, recipe.steps + 1):
        picked = [rows[j] for j in order[step - 1]]
        ids, mask, pos, ans, top_ids, top_logp = _batch(picked, recipe.top_k)
        b = ids.shape[0]
        leaf = [p.requires_grad_(True) for p in params]
        lora = {k: (leaf[2 * j].expand(b, -1, -1), leaf[2 * j + 1].expand(b, -1, -1)) for j, k in enumerate(keys)}
        logits, _, _ = lm(ids, mask, pos, None, lora)
        loss = distill_loss(logits, top_ids, top_logp, ans, recipe.ce_weight)
        if not torch.isfinite(loss):
            raise NonFinite(f"distillation stopped at step {step}: the loss is {float(loss.detach())}; "
                            "nothing was kept (try a lower learning rate)")
        grads = list(torch.autograd.grad(loss, leaf))
        with torch.no_grad():
            params, m, v = adam_update([p.detach() for p in leaf], grads, m, v, torch.tensor(float(step)),
                                       torch.tensor(recipe.lr), recipe.max_norm)
        losses.append(float(loss.detach()))
        if step in recipe.snapshots:
            snaps[step] = as_row(params)
    return Result(as_row(params), losses, time.perf_counter() - t0, snaps)
