"""Training checkpoints: model, optimizer, step, data position, RNG states, config.

Written to a temporary name and renamed, so a crash mid-write leaves the previous checkpoint.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

CKPT = "ckpt.pt"


def rng_state() -> dict[str, Any]:
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])


def save_checkpoint(out: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, step: int, position: int,
                    config: dict[str, Any], extra: dict[str, Any] | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / CKPT
    tmp = out / f"{CKPT}.tmp"
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step, "position": position,
                "rng": rng_state(), "config": config, **(extra or {})}, tmp)
    os.replace(tmp, path)
    return path


def load_checkpoint(out: Path) -> dict[str, Any]:
    path = out / CKPT
    if not path.exists():
        raise FileNotFoundError(f"{path}: no checkpoint to resume from")
    # weights_only=False: the RNG states are numpy/python objects, and we wrote this file ourselves
    return torch.load(path, map_location="cpu", weights_only=False)
