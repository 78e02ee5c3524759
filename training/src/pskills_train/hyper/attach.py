"""A hypernetwork for a bundle written from a checkpoint (`pskills bundle create --hypernet init|CKPT`):
a fresh one whose B heads are zero, or a trained checkpoint refused unless it fits the base."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..model.config import ModelConfig
from .config import HyperConfig
from .export import load_hypernet, training_card
from .net import build_hypernet


def initial_hypernet(lm_cfg_dict: dict[str, Any], config: Path | None) -> tuple[Any, dict[str, Any], int, int]:
    """(fresh hypernetwork on the bundle's targets, card, token_budget, chunk_overlap); net and encoder
    settings from a hyper config (configs/hyper-*.json) when given."""
    hc = HyperConfig.load(config) if config else HyperConfig()
    lm_cfg = ModelConfig.from_dict(lm_cfg_dict)
    hc.net.targets = list(lm_cfg.lora_targets)
    torch.manual_seed(hc.net.seed)
    net = build_hypernet(lm_cfg, hc.net).eval()
    card = {"kind": "untrained hypernetwork", "net": dict(vars(hc.net)), "steps": 0,
            "note": "B heads start at zero: every compiled adapter is ΔW = 0 until the hypernetwork is trained "
                    "(python -m pskills_train.hyper.train) and attached with --hypernet CKPT"}
    return net, card, hc.encoder.token_budget, hc.encoder.chunk_overlap


def trained_hypernet(ckpt_path: Path, manifest: dict[str, Any]) -> tuple[Any, dict[str, Any], int, int]:
    """A hyper/train.py checkpoint, refused unless it was trained on this base's shape and encoder layer."""
    if not ckpt_path.exists():
        raise FileNotFoundError(f"--hypernet {ckpt_path}: no such checkpoint")
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    net, lm_cfg, cfg = load_hypernet(ckpt)
    a = manifest["architecture"]
    got = (lm_cfg.hidden_size, lm_cfg.num_layers, lm_cfg.encoder_layer_index)
    want = (a["hidden"], a["layers"], manifest["encoder"]["layer"])
    if got != want:
        raise ValueError(f"--hypernet {ckpt_path}: trained on a base with (hidden, layers, encoder layer) {got}, "
                         f"this bundle has {want}")
    return net, training_card(ckpt), cfg["encoder"]["token_budget"], cfg["encoder"]["chunk_overlap"]
