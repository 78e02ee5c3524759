"""Adapter providers for the eval conditions: text -> {(layer, module): (A [d_in, R], B [R, d_out])}.

A provider compiles with one hypernetwork as docs/bundle-format.md defines it (chunks of the token
budget with overlap, each through the base LM alone for its encoder states, chunk adapters
rank-concatenated with weight 1/k; chunking and text -> ids are hyper.compile's). The hypernetwork is
either a bundle's hypernet.onnx or a PyTorch checkpoint of pskills_train.hyper.
"""

from __future__ import annotations

import hashlib
import random
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from tokenizers import Tokenizer
from torch import Tensor

from ..hyper.compile import chunk_spans, encode_ids  # the compile contract's chunking and text -> ids
from ..hyper.export import load_hypernet
from ..model.lora import Row

Provider = Callable[[str], Row]
ChunkFn = Callable[[Tensor], dict[str, tuple[Tensor, Tensor]]]  # states [1, m, d] -> m -> (A [L,d_in,r], B [L,r,d_out])


_STATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # backend -> chunk ids -> states [m, d]
_MAX_STATES = 512


class HypernetProvider:
    def __init__(self, backend: Any, tok: Tokenizer, fn: ChunkFn, layers: list[int], budget: int, overlap: int,
                 label: str, max_rows: int = 8, max_chunks: int = 256):
        self.backend, self.tok, self.fn, self.layers = backend, tok, fn, layers
        self.budget, self.overlap, self.label = budget, overlap, label
        # Bounded: an adapter of a long skill is tens of MB (rank = chunks x r).
        self.cache: OrderedDict[str, Row] = OrderedDict()
        self.chunks: dict[tuple[int, ...], dict[str, tuple[Tensor, Tensor]]] = {}  # chunk ids -> its factors
        self.max_rows, self.max_chunks = max_rows, max_chunks
        self.chunk_batch = 8  # the graph also returns logits for every position: keep that buffer small
        self.seconds = 0.0

    def __call__(self, text: str) -> Row:
        key = hashlib.sha256(text.encode()).hexdigest()
        if key in self.cache:
            self.cache.move_to_end(key)
            return self.cache[key]
        t0 = time.perf_counter()
        if len(self.chunks) > self.max_chunks:
            self.chunks.clear()
        row = self.cache[key] = self.compile(text)
        if len(self.cache) > self.max_rows:
            self.cache.popitem(last=False)
        self.seconds += time.perf_counter() - t0
        return row

    def states(self, chunks: list[tuple[int, ...]]) -> list[Tensor]:
        """Encoder states [m, d] of each chunk, shared by every provider on the same backend (the
        hypernetworks read the same base LM layer)."""
        cache = _STATES.setdefault(self.backend, OrderedDict())
        todo = [c for c in dict.fromkeys(chunks) if c not in cache]
        for i in range(0, len(todo), self.chunk_batch):
            # New chunks in right-padded batches: causal attention keeps each chunk's real states exact.
            part = todo[i:i + self.chunk_batch]
            m = max(len(c) for c in part)
            x = torch.zeros(len(part), m, dtype=torch.int64)  # [k, m]
            mask = torch.zeros_like(x)
            for j, c in enumerate(part):
                x[j, :len(c)], mask[j, :len(c)] = torch.tensor(c), 1
            states = self.backend.forward(x, mask, torch.arange(m).expand_as(x), None, None)[2]  # [k, m, d]
            for j, c in enumerate(part):
                cache[c] = states[j, :len(c)].clone()
        out = []
        for c in chunks:
            cache.move_to_end(c)
            out.append(cache[c])
        while len(cache) > _MAX_STATES:
            cache.popitem(last=False)
        return out

    @torch.no_grad()
    def compile(self, text: str) -> Row:
        ids = encode_ids(self.tok, text)
        spans = chunk_spans(len(ids), self.budget, self.overlap)
        keys = [tuple(ids[s:e]) for s, e in spans]
        todo = [c for c in dict.fromkeys(keys) if c not in self.chunks]  # s without a section shares chunks with s
        for c, st in zip(todo, self.states(todo), strict=True):
            self.chunks[c] = self.fn(st[None])
        factors = [self.chunks[c] for c in keys]
        k = len(factors)
        row: Row = {}
        for mod in factors[0]:
            a = torch.cat([f[mod][0] for f in factors], -1) / k  # [L, d_in, k·r]
            b = torch.cat([f[mod][1] for f in factors], -2)  # [L, k·r, d_out]
            for j, layer in enumerate(self.layers):
                row[(layer, mod)] = (a[j].contiguous(), b[j].contiguous())
        return row


def onnx_provider(backend: Any, tok: Tokenizer, path: str | Path, manifest: dict[str, Any], label: str,
                  threads: int = 1) -> HypernetProvider:
    """hypernet.onnx (inputs states, mask; outputs A.{module}, B.{module}) with the bundle's encoder settings."""

    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-wait on shared cores
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]

    def fn(states: Tensor) -> dict[str, tuple[Tensor, Tensor]]:
        s = states.float().numpy()
        out = dict(zip(names, sess.run(names, {"states": s, "mask": np.ones(s.shape[:2], np.float32)}), strict=True))
        mods = [n[2:] for n in names if n.startswith("A.")]
        return {m: (torch.from_numpy(out[f"A.{m}"]), torch.from_numpy(out[f"B.{m}"])) for m in mods}

    enc = manifest["encoder"]
    return HypernetProvider(backend, tok, fn, list(manifest["lora"]["layers"]), enc["token_budget"],
                            enc["chunk_overlap"], label)


def checkpoint_provider(backend: Any, tok: Tokenizer, path: str | Path, manifest: dict[str, Any] | None,
                        label: str) -> HypernetProvider:
    """A pskills_train.hyper training checkpoint (ckpt.pt, or its run folder)."""

    path = Path(path)
    ckpt = torch.load(path / "ckpt.pt" if path.is_dir() else path, map_location="cpu", weights_only=False)
    net, lm_cfg, cfg = load_hypernet(ckpt)
    enc = {**((manifest or {}).get("encoder") or {}), **(cfg.get("encoder") or {})}

    def fn(states: Tensor) -> dict[str, tuple[Tensor, Tensor]]:
        out = net(states, torch.ones(states.shape[:2]))
        return {m: (a[0], b[0]) for m, (a, b) in out.items()}

    return HypernetProvider(backend, tok, fn, list(range(lm_cfg.num_layers)), enc["token_budget"],
                            enc["chunk_overlap"], label)


_PRINTABLE: dict[int, list[int]] = {}


def random_text(tok: Tokenizer, n_tokens: int, seed: int | str) -> str:
    """Random vocabulary pieces (printable ASCII ones, so the text round-trips), about n_tokens long."""
    rng = random.Random(seed)
    key = id(tok)
    if key not in _PRINTABLE:
        pieces = [tok.decode([i]) for i in range(tok.get_vocab_size())]
        _PRINTABLE[key] = [i for i, p in enumerate(pieces)
                           if p and p.isascii() and p.isprintable() and not (tok.id_to_token(i) or "").startswith("<|")]
    ok = _PRINTABLE[key]
    ids = [rng.choice(ok) for _ in range(max(1, n_tokens))]
    text = tok.decode(ids)
    return text if text.strip() else "x" * max(1, n_tokens)
