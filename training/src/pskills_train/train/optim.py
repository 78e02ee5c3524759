"""AdamW with weight decay on matrices only, and the learning-rate schedules (warmup, then cosine or WSD)."""

from __future__ import annotations

import math

import torch

from .config import OptimConfig


def make_optimizer(model: torch.nn.Module, cfg: OptimConfig) -> torch.optim.AdamW:
    """Decay 2-D weights (linears, the tied embedding); never norms or biases (as nanoGPT)."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    rest = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))


def lr_at(step: int, cfg: OptimConfig, max_steps: int, start: int = 0) -> float:
    """Linear warmup to cfg.lr over warmup_steps, then down to min_lr at max_steps.

    cosine: decays from the end of warmup. wsd (warmup-stable-decay): holds cfg.lr and decays linearly
    over the last decay_steps only, so max_steps can be raised on resume while the run is still stable.
    `start` is the step this schedule began at (a run continued from another: run.init_from).
    """
    step, max_steps = step - start, max_steps - start
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.schedule == "wsd":
        left = max_steps - step
        if left >= cfg.decay_steps:
            return cfg.lr
        return cfg.min_lr + (cfg.lr - cfg.min_lr) * left / max(1, cfg.decay_steps)
    span = max(1, max_steps - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / span)
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)
