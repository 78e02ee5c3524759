"""Sampled generation, token for token the studio engine's rules (main/engine/logits-processors.ts and
sampler.ts): per row the repetition penalty over the prompt and the output, the temperature and top-p
(Hugging Face's order and rules), then a draw from the softmax with a mulberry32 generator seeded per
row. With the same logits and seed both pick the same tokens; the logits of two runtimes differ in the
last bits, so a draw near a boundary can part them (docs/distill.md "Practice").

The arithmetic follows the engine's: processed logits are float32 (each step computed in float64 and
rounded, as a Float32Array stores it), weights and sums float64, summed in vocabulary order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

_M = 0xFFFFFFFF
_BUCKETS, _STEP = 128, 0.25  # top-p's buckets of logit - max (logits-processors.ts)


def mulberry32(seed: int) -> Callable[[], float]:
    """sampler.ts `seededRng`: uniform in [0, 1), the same sequence for the same seed."""
    s = seed & _M

    def rng() -> float:
        nonlocal s
        s = (s + 0x6D2B79F5) & _M
        t = ((s ^ (s >> 15)) * (s | 1)) & _M
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & _M)) & _M
        return ((t ^ (t >> 14)) & _M) / 4294967296

    return rng


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0  # 0: greedy
    top_p: float = 1.0
    repetition_penalty: float = 1.0


def process(logits: np.ndarray, context: list[int], s: Sampling) -> np.ndarray:
    """The engine's processors on one row's float32 logits (a new array): penalty, temperature, top-p."""
    out = logits.astype(np.float32, copy=True)
    if s.repetition_penalty != 1 and context:
        ids = np.unique(np.asarray(context, dtype=np.int64))
        v = out[ids].astype(np.float64)
        out[ids] = np.where(v > 0, v / s.repetition_penalty, v * s.repetition_penalty).astype(np.float32)
    if not s.temperature:
        return out
    if s.temperature != 1:
        out = (out.astype(np.float64) / s.temperature).astype(np.float32)
    if s.top_p < 1:
        _top_p(out, s.top_p)
    return out


def _top_p(logits: np.ndarray, p: float) -> None:
    """logits-processors.ts `topP`, in place: the buckets whose mass and every lower one's stay within
    1 - p are masked unsorted; the rest, by logit (then index), until the kept mass reaches p."""
    x = logits.astype(np.float64)
    top = x.max()
    if top == -math.inf:
        return
    d = x - top
    w = np.exp(d)
    bucket = np.minimum(_BUCKETS - 1, np.floor(-d / _STEP)).astype(np.int64)  # a masked token (-inf): the last
    mass = np.bincount(bucket, weights=w, minlength=_BUCKETS)  # summed in vocabulary order
    total = float(np.cumsum(w)[-1])
    cut, below = _BUCKETS, 0.0
    while cut > 1 and below + mass[cut - 1] <= (1 - p) * total * (1 - 1e-9):
        cut -= 1
        below += mass[cut]
    logits[bucket >= cut] = -np.inf
    idx = np.nonzero((bucket < cut) & (w > 0))[0]
    order = idx[np.lexsort((idx, -logits[idx].astype(np.float64)))]
    ws = w[order]
    before = np.concatenate(([0.0], np.cumsum(ws)[:-1]))
    logits[order[before >= p * total]] = -np.inf


def draw(logits: np.ndarray, rng: Callable[[], float] | None) -> int:
    """sampler.ts: the argmax (lowest index on a tie) when greedy, else a multinomial draw."""
    best = int(np.argmax(logits))
    if rng is None:
        return best
    w = np.exp(logits.astype(np.float64) - float(logits[best]))
    cum = np.cumsum(w)
    u = rng() * float(cum[-1])
    i = int(np.searchsorted(cum, u, side="right"))
    return i if i < len(w) else best  # rounding left u past the end: the engine's fallback


@torch.no_grad()
def sample_batch(
    backend, prompts: list[list[int]], stop_ids: set[int], max_new: int, s: Sampling, seeds: list[int]
) -> list[list[int]]:
    """Each prompt's generated ids (a stop token ends a row and is not kept), left-padded in one batch."""
    b = len(prompts)
    width = max(len(p) for p in prompts)
    ids = torch.zeros(b, width, dtype=torch.int64)
    mask = torch.zeros(b, width, dtype=torch.int64)
    for r, p in enumerate(prompts):
        ids[r, width - len(p) :] = torch.tensor(p)
        mask[r, width - len(p) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    plen = mask.sum(-1, keepdim=True)
    logits, past, _ = backend.forward(ids, mask, pos, None, None)
    last = logits[:, -1].float()
    rngs = [mulberry32(seed) if s.temperature else None for seed in seeds]
    gen: list[list[int]] = [[] for _ in range(b)]
    done = [max_new <= 0] * b
    rows, gmask, step = list(range(b)), mask, 0
    while True:
        cur = []
        for k, r in enumerate(rows):
            t = 0
            if not done[r]:
                t = draw(process(last[k].numpy(), prompts[r] + gen[r], s), rngs[r])
                if t in stop_ids:
                    done[r] = True
                else:
                    gen[r].append(t)
                    done[r] = len(gen[r]) >= max_new
            cur.append(t)
        keep = [k for k, r in enumerate(rows) if not done[r]]
        if not keep:
            break
        nxt = torch.tensor([cur[k] for k in keep])
        if len(keep) < len(rows):  # finished rows leave the batch
            idx = torch.tensor(keep)
            rows, gmask, plen = [rows[k] for k in keep], gmask[idx], plen[idx]
            past = [(k_.index_select(0, idx), v.index_select(0, idx)) for k_, v in past]
        gmask = torch.cat([gmask, torch.ones(len(rows), 1, dtype=torch.int64)], 1)
        lg, past, _ = backend.forward(nxt[:, None], gmask, plen + step, past, None)
        last, step = lg[:, -1].float(), step + 1
    return gen
