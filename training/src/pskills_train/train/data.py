"""Training windows from a uint16 token file, in a deterministic order that resumes exactly.

The file is cut into non-overlapping windows of seq_len + 1 tokens (inputs and shifted targets).
Epoch e visits them in the permutation drawn from seed + e. The position in that stream (windows
consumed, all ranks together) is the only data state a checkpoint needs. Within one optimizer
step of B windows, window j goes to micro-step j // (world · mb) and rank (j // mb) % world, so
any number of ranks sees the same global batch.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


class WindowStream:
    def __init__(self, tokens: np.ndarray, seq_len: int, seed: int):
        self.tokens, self.seq_len, self.seed = tokens, seq_len, seed
        self.count = (len(tokens) - 1) // seq_len
        if self.count < 1:
            raise ValueError(f"{len(tokens)} tokens are fewer than one window of {seq_len + 1}")
        self._epoch, self._order = -1, np.empty(0, dtype=np.int64)

    def _index(self, position: int) -> int:
        epoch, offset = divmod(position, self.count)
        if epoch != self._epoch:
            self._order = np.random.default_rng(self.seed + epoch).permutation(self.count)
            self._epoch = epoch
        return int(self._order[offset])

    def window(self, index: int) -> np.ndarray:
        start = index * self.seq_len
        return np.asarray(self.tokens[start:start + self.seq_len + 1], dtype=np.int64)  # [L + 1]

    def micro_batch(self, position: int, step_batch: int, micro: int, rank: int, world: int,
                    mb: int) -> tuple[Tensor, Tensor]:
        """Inputs and targets [mb, L] of one rank's micro-step within the step starting at `position`."""
        assert step_batch % (world * mb) == 0
        first = position + micro * world * mb + rank * mb
        rows = np.stack([self.window(self._index(first + k)) for k in range(mb)])  # [mb, L + 1]
        x = torch.from_numpy(rows[:, :-1])  # [mb, L]
        y = torch.from_numpy(rows[:, 1:])  # [mb, L]
        return x, y


def eval_windows(tokens: np.ndarray, seq_len: int, n: int) -> Tensor:
    """The first n windows [n, L + 1] (fewer if the split is short); the same text every time."""
    n = min(n, (len(tokens) - 1) // seq_len)
    idx = np.arange(n)[:, None] * seq_len + np.arange(seq_len + 1)[None, :]  # [n, L + 1]
    return torch.from_numpy(np.asarray(tokens[idx], dtype=np.int64))
