"""Held-out loss and bits per byte.

    bpb = (Σ nll in nats over target tokens) / (Σ UTF-8 bytes those tokens stand for) / ln 2

A tokenizer-independent number, comparable with a compressor's output size in bits per input byte
(compress_baseline.py). <|endoftext|> separators count as targets with 0 bytes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from ..model import LlamaLM


def bits_per_byte(nats: float, n_bytes: int) -> float:
    return nats / max(1, n_bytes) / math.log(2)


@torch.no_grad()
def evaluate(model: LlamaLM, windows: Tensor, byte_table: Tensor, batch: int = 16,
             bf16: bool = False) -> dict[str, float]:
    """windows: [n, L + 1] int64; byte_table: [V] int64. Returns loss (nats/token) and bpb."""
    was_training = model.training
    model.eval()
    nats, tokens, n_bytes = 0.0, 0, 0
    for i in range(0, windows.shape[0], batch):
        w = windows[i:i + batch]
        x, y = w[:, :-1], w[:, 1:]  # [b, L] each
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(x)[0]  # [b, L, V]
        nll = F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), reduction="sum")
        nats += nll.item()
        tokens += y.numel()
        n_bytes += int(byte_table[y].sum())
    model.train(was_training)
    return {"loss": nats / max(1, tokens), "bpb": bits_per_byte(nats, n_bytes), "tokens": tokens, "bytes": n_bytes}
