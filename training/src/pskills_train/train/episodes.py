"""Episodes for the base LM: a skill in the system turn, a question that needs it, the answer.

A base that never saw such sequences reads a skill in context worse than no skill (docs/results.md).
`data.episodes` names a JSON-lines file of rows {"messages": [{role, content}, …]} (written by
`pskills_train.train.build_episodes`); they are rendered with the bundle's chat template, tokenized,
and packed whole into windows of seq_len + 1 tokens (never split, so the answer always sees its
skill), padded with targets of -100. Episodes longer than a window are dropped and counted.
The trainer puts `episode_share` of each micro-batch's rows here; the rest stay document windows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from torch import Tensor

IGNORE = -100


def render(messages: list[dict], template: str) -> str:
    """The chat template the bundles ship (ChatML-like); a full Jinja engine is not needed for it."""
    if "<|im_start|>" not in template:
        raise ValueError("episodes: only the ChatML template of the default bundle is supported")
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)


def pack(seqs: list[np.ndarray], width: int, sep: int) -> list[np.ndarray]:
    """Greedy first-fit in the given order: windows of at most `width` tokens of whole episodes."""
    out: list[np.ndarray] = []
    cur: list[np.ndarray] = []
    for s in seqs:
        need = len(s) + (1 if cur else 0)
        if cur and sum(len(c) for c in cur) + len(cur) - 1 + need > width:
            out.append(np.concatenate([np.concatenate([c, [sep]]) for c in cur[:-1]] + [cur[-1]]))
            cur = []
        cur.append(s)
    if cur:
        out.append(np.concatenate([np.concatenate([c, [sep]]) for c in cur[:-1]] + [cur[-1]]))
    return out


class EpisodeStream:
    def __init__(self, path: Path, tok: Tokenizer, template: str, seq_len: int, seed: int, sep: int, pad: int):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if not rows:
            raise ValueError(f"{path}: no episodes")
        seqs, self.dropped = [], 0
        for i, r in enumerate(rows):
            if "messages" not in r:
                raise ValueError(f"{path}: line {i + 1}: no 'messages'")
            ids = np.asarray(tok.encode(render(r["messages"], template), add_special_tokens=False).ids, np.int64)
            if len(ids) > seq_len + 1:
                self.dropped += 1
                continue
            seqs.append(ids)
        order = np.random.default_rng(seed).permutation(len(seqs))
        self.windows = pack([seqs[i] for i in order], seq_len + 1, sep)
        self.seq_len, self.seed, self.pad, self.count = seq_len, seed, pad, len(seqs)
        self._perm: dict[int, np.ndarray] = {}

    def rows(self, first: int, n: int) -> tuple[Tensor, Tensor]:
        """Rows first … first + n − 1 of the endless stream: inputs [n, L] and targets [n, L]."""
        L = self.seq_len
        x = np.full((n, L), self.pad, np.int64)
        y = np.full((n, L), IGNORE, np.int64)
        for k in range(n):
            epoch, off = divmod(first + k, len(self.windows))
            if epoch not in self._perm:
                self._perm = {epoch: np.random.default_rng(self.seed + 1 + epoch).permutation(len(self.windows))}
            w = self.windows[self._perm[epoch][off]]
            x[k, :len(w) - 1] = w[:-1]
            y[k, :len(w) - 1] = w[1:]
        return torch.from_numpy(x), torch.from_numpy(y)
