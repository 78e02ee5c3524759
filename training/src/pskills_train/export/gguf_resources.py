"""Will a bundle fit: the memory and disk `bundle create` needs, estimated from a model's parameter count.

Standard library only: the GGUF gate (gguf_gate.py `gate_cli`) runs this on the header alone, before torch
loads, so that a sparse file whose tensors claim a huge model is refused in milliseconds; the importer
(from_gguf.py) runs it again with the train-step graphs' share, which needs its options
(docs/security.md, "GGUF files").
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .gguf_errors import GGUFGateError

# Peak memory while building (`/usr/bin/time -f %M` over the whole build, bench/results/distill-scale.json):
# Python, torch and the exporter's tracing (~2 GB whatever the model), then ~1.75 bytes per float32 weight
# byte: the model, the exporter's folded copy of its transposed weights and the protobuf it writes, held
# together while lm.onnx is exported (the graph is then copied into the bundle weight by weight,
# onnx_structure.py). Measured peaks, layered steps: SmolLM2-135M (0.54 GB of float32 weights) 2,959 MiB
# in the lm.onnx export; a Qwen2.5-0.5B shape (1.98 GB) 5,306 MiB. The estimates below: 3.24 and 5.97 GB
# (3,092 and 5,693 MiB). Layered graphs' only full-vocabulary tensors are the parity check's torch steps on
# the smallest bucket, on its answer rows (~2 float32 [b, s, vocab]); whole graphs' tracing holds ~40 of
# the largest bucket's (SmolLM2-135M: 17.8 GB). `--weights q4` loads a second float32 model to check the
# 4-bit one and was not measured again: it keeps the old 6 bytes per weight byte.
MEMORY_BASE = 2.2e9
MEMORY_PER_WEIGHT_BYTE = 1.75
MEMORY_PER_WEIGHT_BYTE_Q4 = 6.0
MEMORY_PER_LOGIT = 40 * 4
MEMORY_PER_LOGIT_LAYERED = 2 * 4
DISK_FACTOR = 2.0
GB = 1e9


def mem_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_resources(path: Path, out: Path, n_params: int, logits: int = 0, free_memory: int | None = None,
                    free_disk: int | None = None, per_logit: float = MEMORY_PER_LOGIT,
                    per_weight: float = MEMORY_PER_WEIGHT_BYTE) -> None:
    """Refuse before any work when building (MEMORY_BASE, `per_weight` bytes per float32 weight byte, and
    `logits` = b·s·vocab of the train-step bucket from_gguf.train_logits names, `per_logit` bytes each) will
    not fit in the available memory, or the bundle beside `out` on disk. With `logits` 0 the estimate is a
    lower bound of any build's: what the gate checks before the options are parsed."""
    fp32 = 4 * n_params
    parent = out.resolve().parent
    while not parent.exists():
        parent = parent.parent
    disk = shutil.disk_usage(parent).free if free_disk is None else free_disk
    mem = mem_available() if free_memory is None else free_memory
    need_mem, need_disk = int(MEMORY_BASE + per_weight * fp32 + per_logit * logits), int(DISK_FACTOR * fp32)
    head = f"{path}: {n_params / 1e6:,.1f} M parameters ({fp32 / GB:.2f} GB as float32)"
    if need_mem > mem:
        steps = " with its train-step graphs (fewer or smaller --train-step-buckets need less)" if logits else ""
        raise GGUFGateError(f"{head}: building the bundle{steps} needs about {need_mem / GB:.2f} GB of memory, "
                            f"{mem / GB:.2f} GB is available")
    if need_disk > disk:
        raise GGUFGateError(f"{head}: the bundle needs about {need_disk / GB:.2f} GB of disk in {parent}, "
                            f"{disk / GB:.2f} GB is free")
