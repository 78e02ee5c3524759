"""Process-group plumbing for torchrun: gloo, as pretraining runs on CPU ranks; no-ops alone."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Dist:
    rank: int = 0
    world: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def mean(self, value: float) -> float:
        """The mean of a scalar over ranks."""
        if self.world == 1:
            return value
        t = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(t)
        return float(t.item()) / self.world

    def barrier(self) -> None:
        if self.world > 1:
            dist.barrier()


def init_distributed() -> Dist:
    """Join the process group torchrun describes in the environment (WORLD_SIZE > 1)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Dist()
    dist.init_process_group("gloo")
    return Dist(dist.get_rank(), dist.get_world_size())


def shutdown(d: Dist) -> None:
    if d.world > 1:
        # All ranks reach the end before any tears down: rank 0 may still be writing the model while
        # a rank that destroyed its group early aborts in gloo's threads ("terminate called ...").
        dist.barrier()
        dist.destroy_process_group()
