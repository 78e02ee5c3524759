"""The training loss: target-token cross-entropy per example, and its sums over ranks."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch
import torch.nn.functional as F

from ..model import LlamaLM
from .examples import Example


def token_losses(lm: LlamaLM, lora, examples: list[Example], exact: bool = False) -> tuple[torch.Tensor, ...]:
    """Per-example (sum of target-token CE, number of target tokens) [b] each, teacher forced; with `exact`,
    also whether every target token is the argmax [b] (greedy decoding would produce the target exactly)."""
    seqs = [e.prompt + e.target for e in examples]
    s = max(len(x) for x in seqs) - 1
    b = len(examples)
    ids = torch.zeros(b, s, dtype=torch.int64)  # [b, s] inputs, right-padded
    labels = torch.full((b, s), -100, dtype=torch.int64)  # [b, s] next token or -100
    mask = torch.zeros(b, s, dtype=torch.int64)
    for i, (e, seq) in enumerate(zip(examples, seqs, strict=True)):
        n = len(seq) - 1
        ids[i, :n] = torch.tensor(seq[:-1])
        mask[i, :n] = 1
        nxt = torch.tensor(seq[1:])
        keep = torch.zeros(n, dtype=torch.bool)
        keep[len(e.prompt) - 1:] = True  # positions that predict target tokens
        if e.labels_mask is not None:
            keep &= torch.tensor(e.labels_mask[1:], dtype=torch.bool)
        labels[i, :n] = torch.where(keep, nxt, torch.full_like(nxt, -100))
    dev = lm.lm_head.weight.device
    ids, labels, mask = ids.to(dev), labels.to(dev), mask.to(dev)
    pos = torch.arange(s, device=dev).expand(b, s)
    logits = lm(ids, mask, pos, None, lora)[0].float()  # [b, s, V]; float: bf16 autocast gives bf16
    ce = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100, reduction="none").view(b, s)
    count = (labels != -100).sum(1)  # [b]
    if exact:
        return ce.sum(1), count, ((logits.argmax(-1) == labels) | (labels == -100)).all(1)
    return ce.sum(1), count


def merge_ranks(parts: list[Any]) -> tuple[defaultdict[str, float], defaultdict[str, int], defaultdict[str, float]]:
    """Sum each rank's (loss sums, token counts, extra terms) of one step: every rank gets the global ones."""
    sums: defaultdict[str, float] = defaultdict(float)
    counts: defaultdict[str, int] = defaultdict(int)
    extra: defaultdict[str, float] = defaultdict(float)
    for part_sums, part_counts, part_extra in parts:
        for into, part in ((sums, part_sums), (counts, part_counts), (extra, part_extra)):
            for k, v in part.items():
                into[k] += v
    return sums, counts, extra
