"""Where hypernetwork training runs: the device, bf16 autocast and the torchrun process group.

run.device "auto" takes cuda when present (each torchrun rank its LOCAL_RANK's GPU), else cpu.
run.bf16 "auto" turns autocast on for cuda with bf16 support only: on CPUs it depends on the chip
(AVX2-only EPYC 24× slower, AMX Xeon ~8× faster, shared/ENVIRONMENT.md), so there it is opt-in.
Under torchrun every rank holds the frozen LM and a DDP copy of the hypernetwork; the global batch
(run.batch_size) is split over ranks by micro-batch index, so N ranks compute what one process
computes on the same steps (tests/test_hyper_ddp.py checks it on two gloo ranks).
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn

from ..train.distributed import Dist


@dataclass(frozen=True)
class Placement:
    device: torch.device
    bf16: bool
    dist: Dist

    @property
    def main(self) -> bool:
        return self.dist.main

    def autocast(self) -> AbstractContextManager[object]:
        if not self.bf16:
            return nullcontext()
        return torch.autocast(self.device.type, dtype=torch.bfloat16)

    def micro_indices(self, accum: int) -> list[int]:
        """The global micro-batch indices of a step this rank computes (all of them alone)."""
        world = self.dist.world
        if accum % world:
            raise ValueError(f"run.batch_size / run.micro_batch = {accum} micro-batches per step do not split "
                             f"over {world} ranks; make it a multiple of the number of processes")
        return list(range(self.dist.rank, accum, world))

    def wrap(self, net: nn.Module) -> nn.Module:
        """DDP around the hypernetwork under torchrun (gradients averaged over ranks), else the net itself."""
        if self.dist.world == 1:
            return net
        ids = [self.device.index] if self.device.type == "cuda" else None
        return nn.parallel.DistributedDataParallel(net, device_ids=ids)

    def gather(self, obj: object) -> list[object]:
        """`obj` of every rank, in rank order, on every rank ([obj] alone)."""
        if self.dist.world == 1:
            return [obj]
        out: list[object] = [None] * self.dist.world
        dist.all_gather_object(out, obj)
        return out


def resolve(device: str = "auto", bf16: bool | str = "auto", backend: str | None = None) -> Placement:
    """Join torchrun's process group (WORLD_SIZE > 1: nccl on cuda, gloo on cpu, or `backend`), pick the
    device and whether to autocast."""
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"run.device must be auto, cpu or cuda, got {device!r}")
    if bf16 not in ("auto", True, False):
        raise ValueError(f"run.bf16 must be auto, true or false, got {bf16!r}")
    cuda = torch.cuda.is_available() if device == "auto" else device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise ValueError("run.device cuda: no CUDA device (torch.cuda.is_available() is false)")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(dev)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    d = Dist()
    if world > 1:
        dist.init_process_group(backend or ("nccl" if cuda else "gloo"))
        d = Dist(dist.get_rank(), dist.get_world_size())
    use_bf16 = (cuda and torch.cuda.is_bf16_supported()) if bf16 == "auto" else bool(bf16)
    return Placement(dev, use_bf16, d)
