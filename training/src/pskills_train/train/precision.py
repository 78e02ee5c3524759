"""Choose fp32 or bf16 autocast by timing both on the real model, on this machine.

CPUs differ between runs: with AMX-BF16 or AVX512-BF16, bf16 autocast measured 1.7–3× faster than fp32;
on an AVX2-only machine it was 24× slower. So a config may say `"auto"` and the trainer times a few
forward+backward passes of each on its own model and batch shape before the first step, keeps the
faster one, and writes the timings into the run folder (precision.json) for the training card.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from pathlib import Path

import torch

# bf16 must win by this much: it also costs a little accuracy.
MARGIN = 0.9


def cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return sorted({f for f in line.split() if f.startswith(("amx", "avx512_bf16", "avx2"))})


def time_steps(step: Callable[[bool], None], bf16: bool, steps: int) -> float:
    step(bf16)  # warm-up: allocations, kernel selection
    t = time.perf_counter()
    for _ in range(steps):
        step(bf16)
    return (time.perf_counter() - t) / steps


def choose(step: Callable[[bool], None], steps: int = 2) -> dict:
    """`step(bf16)` runs one forward+backward and leaves the weights unchanged (no optimizer step)."""
    fp32 = time_steps(step, False, steps)
    bf16 = time_steps(step, True, steps)
    use = bf16 < MARGIN * fp32
    return {"bf16": use, "fp32_s_per_step": round(fp32, 3), "bf16_s_per_step": round(bf16, 3),
            "speedup": round(fp32 / bf16, 2), "steps_timed": steps, "cpu": platform.processor() or platform.machine(),
            "cpu_flags": cpu_flags(), "torch_threads": torch.get_num_threads()}


def resolve(setting: bool | str, step: Callable[[bool], None], record: Path | None) -> bool:
    """The bf16 flag to train with: a config's true/false as is, "auto" measured (and recorded)."""
    if isinstance(setting, bool):
        return setting
    if setting != "auto":
        raise ValueError(f"run.bf16 {setting!r}: expected true, false or \"auto\"")
    if record is not None and record.exists():  # a resumed run keeps its first measurement
        return bool(json.loads(record.read_text())["bf16"])
    res = choose(step)
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(res, indent=1) + "\n")
    print(f"precision: fp32 {res['fp32_s_per_step']} s/step, bf16 {res['bf16_s_per_step']} s/step "
          f"→ {'bf16' if res['bf16'] else 'fp32'}", flush=True)
    return res["bf16"]
