"""Episodes for the base LM: a skill in the system turn, a question that needs it, the answer.

A base that never saw such sequences reads a skill in context worse than no skill (docs/results.md).
`data.episodes` names a JSON-lines file of rows {"messages": [{role, content}, …]} (written by
`pskills_train.train.build_episodes`); they are rendered with the bundle's chat template, tokenized,
and packed whole into windows of seq_len + 1 tokens (never split, so the answer always sees its
skill), padded with targets of -100. Episodes longer than a window are dropped and counted.
The trainer puts `episode_share` of each micro-batch's rows here; the rest stay document windows.

`rows` also returns the answer targets: the final assistant turn (its text and <|im_end|>) only, so the
trainer can weigh using what was read apart from predicting the skill and question (data.episode_loss).
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


def encode_episode(messages: list[dict], template: str, tok: Tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Token ids [n] and a mask [n] of the tokens of the final assistant turn (its text and <|im_end|>).

    The mask is all False when the last message is not the assistant's."""
    text = render(messages, template)
    enc = tok.encode(text, add_special_tokens=False)
    ids = np.asarray(enc.ids, np.int64)
    mask = np.zeros(len(ids), bool)
    if messages and messages[-1]["role"] == "assistant":
        start = len(text) - len(messages[-1]["content"]) - len("<|im_end|>\n")
        end = len(text) - 1  # the closing newline is not part of the answer
        mask = np.asarray([start <= a < end for a, _ in enc.offsets], bool)
    return ids, mask


def read_episodes(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        raise ValueError(f"{path}: no episodes")
    for i, r in enumerate(rows):
        if "messages" not in r:
            raise ValueError(f"{path}: line {i + 1}: no 'messages'")
    return rows


class EpisodeStream:
    def __init__(self, path: Path, tok: Tokenizer, template: str, seq_len: int, seed: int, sep: int, pad: int,
                 need_answers: bool = False):
        seqs, masks, self.dropped = [], [], 0
        for i, r in enumerate(read_episodes(path)):
            ids, mask = encode_episode(r["messages"], template, tok)
            if len(ids) > seq_len + 1:
                self.dropped += 1
                continue
            if need_answers and not mask.any():
                raise ValueError(f"{path}: line {i + 1}: the last message is not an assistant answer "
                                 "(data.episode_loss 'answer' needs one)")
            seqs.append(ids)
            masks.append(mask.astype(np.int64))
        order = np.random.default_rng(seed).permutation(len(seqs))
        self.windows = pack([seqs[i] for i in order], seq_len + 1, sep)
        # the same packing over the masks (the separator is never a target)
        self.masks = [m.astype(bool) for m in pack([masks[i] for i in order], seq_len + 1, 0)]
        self.seq_len, self.seed, self.pad, self.count = seq_len, seed, pad, len(seqs)
        self._perm: dict[int, np.ndarray] = {}

    def rows(self, first: int, n: int) -> tuple[Tensor, Tensor, Tensor]:
        """Rows first … first + n − 1 of the endless stream: inputs, targets and answer targets, [n, L] each."""
        L = self.seq_len
        x = np.full((n, L), self.pad, np.int64)
        y = np.full((n, L), IGNORE, np.int64)
        a = np.full((n, L), IGNORE, np.int64)
        for k in range(n):
            epoch, off = divmod(first + k, len(self.windows))
            if epoch not in self._perm:
                self._perm = {epoch: np.random.default_rng(self.seed + 1 + epoch).permutation(len(self.windows))}
            j = self._perm[epoch][off]
            w = self.windows[j]
            x[k, :len(w) - 1] = w[:-1]
            y[k, :len(w) - 1] = w[1:]
            a[k, :len(w) - 1] = np.where(self.masks[j][1:], w[1:], IGNORE)
        return torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(a)
