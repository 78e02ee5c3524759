"""Compiling a skill into an adapter (docs/bundle-format.md "hypernet.onnx and compiling a skill").

1. ids = the tokenizer's encoding of the SKILL.md text, no special tokens.
2. Chunks: b = token_budget, o = overlap, stride = b - o; chunk c = ids[c·stride : c·stride + b] for
   c = 0, 1, ... while c = 0 or c·stride + o < len(ids).
3. Each chunk runs through the frozen base LM alone (batch 1, positions 0..m-1, no adapter); its
   hidden states at `encoder_layer` are the hypernetwork's `states`, mask all 1.
4. k chunk adapters (A_c, B_c) combine by rank concatenation with weights 1/k:
   A = [A_1/k | ... | A_k/k], B = [B_1; ...; B_k] (rank k·r): ΔW = mean of the chunks' ΔW.

`compile_skill` is the inference path (no grad). `batch_adapters` is the training path: many
examples' chunks encoded in one padded batch, the hypernetwork run with grad, and the per-example
adapters stacked into `LoraInputs` (zero-padded to the batch's largest rank, which is exact).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from torch import Tensor

from ..model.layers import attention_mask_4d
from ..model.llama import LlamaLM
from ..model.lora import LoraInputs
from .net import Factors
from .protocol import as_hypernet

Adapter = dict[tuple[int, str], tuple[Tensor, Tensor]]  # (layer, module) -> (A [d_in, R], B [R, d_out])


def chunk_spans(n: int, token_budget: int, overlap: int) -> list[tuple[int, int]]:
    """[(start, end)] of the encoder chunks of n ids (end exclusive, end - start <= token_budget)."""
    if n <= 0:
        raise ValueError("cannot compile an empty skill (0 tokens)")
    if not 0 <= overlap < token_budget:
        raise ValueError(f"chunk overlap {overlap} must be in 0 .. token_budget-1 ({token_budget - 1})")
    stride = token_budget - overlap
    spans, c = [], 0
    while c == 0 or c * stride + overlap < n:
        spans.append((c * stride, min(c * stride + token_budget, n)))
        c += 1
    return spans


def encode_ids(tok: Tokenizer, text: str) -> list[int]:
    # Line endings as the corpus has them (build_corpus writes \n only), so CRLF files compile alike.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        raise ValueError("cannot compile an empty skill text")
    return tok.encode(text, add_special_tokens=False).ids


@torch.no_grad()
def encode_states(lm: LlamaLM, ids: Tensor, mask: Tensor | None = None) -> Tensor:
    """hidden_states [b, m, d] of `ids` [b, m] (right-padded, mask [b, m] int 1/0), positions 0..m-1.

    The same numbers as LlamaLM.forward's third output, but stops after the encoder layer."""
    cfg = lm.cfg
    k = cfg.encoder_layer_index
    b, m = ids.shape
    if mask is None:
        mask = torch.ones(b, m, dtype=torch.int64, device=ids.device)
    mask = mask.to(torch.int64)
    pos = torch.arange(m, device=ids.device).expand(b, m)  # [b, m]; right padding: real tokens sit at 0..len-1
    if k == cfg.num_layers:
        return lm(ids, mask, pos)[2]
    x = lm.model.embed_tokens(ids)  # [b, m, d]
    if k == 0:
        return x
    cos, sin = lm.model.rotary(pos, x.dtype)
    mask4 = attention_mask_4d(mask, m, x.dtype, cfg.sliding_window)  # [b, 1, m, m]
    for layer in lm.model.layers[:k]:
        x, _ = layer(x, cos, sin, mask4, None, {})
    return x


def combine(factors: list[Factors], layers: list[int]) -> Adapter:
    """Chunk adapters (each module -> A [L, d_in, r], B [L, r, d_out]) -> the skill's adapter."""
    k = len(factors)
    out: Adapter = {}
    for m in factors[0]:
        a = torch.cat([f[m][0] for f in factors], dim=-1) / k  # [L, d_in, k·r]
        b = torch.cat([f[m][1] for f in factors], dim=-2)  # [L, k·r, d_out]
        for j, layer in enumerate(layers):
            out[(layer, m)] = (a[j], b[j])
    return out


@torch.no_grad()
def compile_ids(lm: LlamaLM, hypernet: torch.nn.Module, ids: list[int], token_budget: int, overlap: int) -> Adapter:
    spans = chunk_spans(len(ids), token_budget, overlap)
    dev = lm.lm_head.weight.device
    factors = []
    for s, e in spans:
        x = torch.tensor([ids[s:e]], dtype=torch.int64, device=dev)  # [1, m]
        states = encode_states(lm, x)  # [1, m, d]
        out = hypernet(states, torch.ones(1, e - s, device=dev))
        factors.append({m: (a[0], b[0]) for m, (a, b) in out.items()})  # [L, d_in, r], [L, r, d_out]
    return combine(factors, list(range(lm.cfg.num_layers)))


def compile_skill(lm: LlamaLM, hypernet: torch.nn.Module, tokenizer: Tokenizer, text: str, token_budget: int,
                  overlap: int) -> Adapter:
    """SKILL.md text -> {(layer, module): (A [d_in, k·r], B [k·r, d_out])}, the rows `stack_rows` takes."""
    was = hypernet.training
    hypernet.eval()
    try:
        return compile_ids(lm, hypernet, encode_ids(tokenizer, text), token_budget, overlap)
    finally:
        hypernet.train(was)


def batch_adapters(lm: LlamaLM, hypernet: torch.nn.Module, sources: list[list[int]], token_budget: int,
                   overlap: int) -> LoraInputs:
    """Differentiable: per example the ids φ is computed from -> LoraInputs [b, d_in, R] / [b, R, d_out]
    with grad through the hypernetwork (the LM is frozen; its states carry no grad)."""
    chunks: list[list[int]] = []
    owner: list[int] = []
    for i, ids in enumerate(sources):
        for s, e in chunk_spans(len(ids), token_budget, overlap):
            chunks.append(ids[s:e])
            owner.append(i)
    m = max(len(c) for c in chunks)
    x = torch.zeros(len(chunks), m, dtype=torch.int64)  # [C, m], right padding
    mask = torch.zeros(len(chunks), m, dtype=torch.int64)
    for j, c in enumerate(chunks):
        x[j, :len(c)] = torch.tensor(c)
        mask[j, :len(c)] = 1
    dev = lm.lm_head.weight.device
    x, mask = x.to(dev), mask.to(dev)
    states = encode_states(lm, x, mask)  # [C, m, d]
    h = as_hypernet(getattr(hypernet, "module", hypernet))  # DDP wraps it
    out = hypernet(states, mask.float())  # module -> A [C, L, d_in, r], B [C, L, r, d_out]
    counts = torch.bincount(torch.tensor(owner), minlength=len(sources))
    max_rank = int(counts.max()) * h.rank
    lora: LoraInputs = {}
    for mod, (a, b) in out.items():
        rows_a, rows_b = [], []
        start = 0
        for i in range(len(sources)):
            k = int(counts[i])
            ai = a[start:start + k] / k  # [k, L, d_in, r]
            bi = b[start:start + k]  # [k, L, r, d_out]
            start += k
            ai = ai.permute(1, 2, 0, 3).reshape(ai.shape[1], ai.shape[2], -1)  # [L, d_in, k·r] chunk-major
            bi = bi.permute(1, 0, 2, 3).reshape(bi.shape[1], -1, bi.shape[3])  # [L, k·r, d_out]
            pad = max_rank - ai.shape[-1]
            rows_a.append(F.pad(ai, (0, pad)))
            rows_b.append(F.pad(bi, (0, 0, 0, pad)))
        big_a, big_b = torch.stack(rows_a, 1), torch.stack(rows_b, 1)  # [L, b, d_in, R], [L, b, R, d_out]
        for layer in range(lm.cfg.num_layers):
            lora[(layer, mod)] = (big_a[layer], big_b[layer])
    return lora
