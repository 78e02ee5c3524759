"""Batched scoring of (prompt, answer, adapter) rows: teacher-forced answer NLL and greedy decoding.

One prefill of the left-padded prompts gives the KV cache; the answers are then fed right-padded on
top of it (NLL), and greedy decoding continues from the same cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..model.lora import Row, stack_rows


@dataclass
class Item:
    prompt: list[int]
    target: list[int]  # answer ids scored by NLL
    gen_len: int  # greedy tokens to produce (at most)
    adapter: Row | None


@dataclass
class Scored:
    nll_sum: float  # nats over the target tokens
    n_tokens: int
    generated: list[int]


def score_batch(backend, items: list[Item], stop_ids: set[int], shared: int = 0) -> list[Scored]:
    """`shared` > 0: every item's prompt starts with the same `shared` ids and they all carry the same
    adapter; that prefix is run once and its cache repeated over the rows (pads then sit mid-sequence,
    masked out, with positions counting real tokens only)."""
    cfg = backend.cfg
    b = len(items)
    lora = stack_rows(cfg, [it.adapter for it in items]) if any(it.adapter for it in items) else None
    past = None
    if shared:
        pre = torch.tensor([items[0].prompt[:shared]])  # [1, S]
        lora1 = None if lora is None else {k: (a[:1], bb[:1]) for k, (a, bb) in lora.items()}
        _, past1, _ = backend.forward(pre, torch.ones_like(pre), torch.arange(shared)[None], None, lora1)
        past = [(k.expand(b, -1, -1, -1).contiguous(), v.expand(b, -1, -1, -1).contiguous()) for k, v in past1]
    prompts = [it.prompt[shared:] for it in items]
    P = max(len(p) for p in prompts)
    T = max(len(it.target) for it in items)
    ids = torch.zeros(b, P, dtype=torch.int64)
    mask = torch.zeros(b, P, dtype=torch.int64)
    for r, p in enumerate(prompts):
        ids[r, P - len(p):] = torch.tensor(p)
        mask[r, P - len(p):] = 1
    pos = shared + (mask.cumsum(-1) - 1).clamp(min=0)
    mask = torch.cat([torch.ones(b, shared, dtype=torch.int64), mask], 1)  # [b, S + P]
    plen = mask.sum(-1, keepdim=True)  # [b, 1]
    logits, past, _ = backend.forward(ids, mask, pos, past, lora)
    last = logits[:, -1].float()  # [b, V]

    tgt = torch.zeros(b, T, dtype=torch.int64)
    tmask = torch.zeros(b, T, dtype=torch.int64)
    for r, it in enumerate(items):
        tgt[r, :len(it.target)] = torch.tensor(it.target)
        tmask[r, :len(it.target)] = 1
    tl, _, _ = backend.forward(tgt, torch.cat([mask, tmask], 1), plen + torch.arange(T), past, lora)
    pred = torch.cat([last[:, None], tl[:, :-1].float()], 1)  # [b, T, V]: the logits that predict tgt
    nll = -F.log_softmax(pred, -1).gather(-1, tgt[..., None])[..., 0] * tmask  # [b, T]

    gen: list[list[int]] = [[] for _ in range(b)]
    done = [it.gen_len <= 0 for it in items]
    rows = list(range(b))  # batch position -> item, shrinking as rows finish
    cur, gmask, step = last.argmax(-1), mask, 0
    while True:
        for k, r in enumerate(rows):
            if not done[r]:
                t = int(cur[k])
                if t in stop_ids:
                    done[r] = True
                else:
                    gen[r].append(t)
                    done[r] = len(gen[r]) >= items[r].gen_len
        keep = [k for k, r in enumerate(rows) if not done[r]]
        if not keep:
            break
        if len(keep) <= 3 * len(rows) // 4:  # drop finished rows from the batch (one copy of their cache)
            idx = torch.tensor(keep)
            rows, cur, gmask, plen = [rows[k] for k in keep], cur[idx], gmask[idx], plen[idx]
            past = [(k_.index_select(0, idx), v.index_select(0, idx)) for k_, v in past]
            lora = None if lora is None else {key: (a[idx], bb[idx]) for key, (a, bb) in lora.items()}
        gmask = torch.cat([gmask, torch.ones(len(rows), 1, dtype=torch.int64)], 1)
        lg, past, _ = backend.forward(cur[:, None], gmask, plen + step, past, lora)
        cur, step = lg[:, -1].argmax(-1), step + 1
    return [Scored(float(nll[r].sum()), len(it.target), gen[r]) for r, it in enumerate(items)]


def _common_prefix(prompts: list[list[int]]) -> int:
    n = min(len(p) for p in prompts) - 1  # every row keeps at least one prompt token of its own
    first = prompts[0]
    for k in range(max(0, n)):
        if any(p[k] != first[k] for p in prompts[1:]):
            return k
    return max(0, n)


def score_all(backend, items: list[Item], stop_ids: set[int], max_batch_tokens: int = 16384,
              max_rows: int = 32, min_shared: int = 128) -> list[Scored]:
    """Rows grouped by prompt length (so long in-context prompts pad only each other). Long prompts with the
    same adapter that share a prefix (the skill in context) run that prefix once."""
    out: list[Scored | None] = [None] * len(items)
    rest = list(range(len(items)))
    groups: dict[tuple, list[int]] = {}
    for i in rest:
        if len(items[i].prompt) > min_shared:
            groups.setdefault((id(items[i].adapter), tuple(items[i].prompt[:min_shared])), []).append(i)
    for group in groups.values():
        if len(group) < 2:
            continue
        shared = _common_prefix([items[i].prompt for i in group])
        if shared < min_shared:
            continue
        for k in range(0, len(group), max_rows):
            part = group[k:k + max_rows]
            for i, s in zip(part, score_batch(backend, [items[i] for i in part], stop_ids, shared), strict=True):
                out[i] = s
    rest = [i for i in rest if out[i] is None]
    order = sorted(rest, key=lambda i: len(items[i].prompt) + len(items[i].target))
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order) and j - i < max_rows:
            width = len(items[order[j]].prompt) + max(len(items[order[j]].target), items[order[j]].gen_len)
            if (j - i + 1) * width > max_batch_tokens:
                break
            j += 1
        group = [order[k] for k in range(i, j)]
        for k, s in zip(group, score_batch(backend, [items[k] for k in group], stop_ids), strict=True):
            out[k] = s
        i = j
    return out  # type: ignore[return-value]
