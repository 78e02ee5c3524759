"""Fixture builders: tiny random Hugging Face checkpoints saved as safetensors, loaded both ways."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from pskills_train.export.bundle import random_model

torch.set_num_threads(2)

VOCAB = 128
TINY = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-6,
            initializer_range=0.2)  # large enough that attention is far from uniform

# name -> (HF config class name, extra config). Each variant exercises one loader/numerics path.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("LlamaConfig", {}),
    "llama-tied-bias-rope3": ("LlamaConfig", {
        "tie_word_embeddings": True, "attention_bias": True,
        "rope_parameters": {"rope_type": "llama3", "rope_theta": 50000.0, "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 16}}),
    "qwen2": ("Qwen2Config", {"tie_word_embeddings": True}),
    "mistral-window": ("MistralConfig", {"sliding_window": 5, "head_dim": 24}),
}


@pytest.fixture(scope="module")
def frozen_tiny():
    """export.bundle's tiny random LM and its tokenizer, frozen as the hypernetwork trains against it."""
    lm, tok = random_model("tiny")
    for p in lm.parameters():
        p.requires_grad_(False)
    return lm, tok


def build_hf(variant: str, seed: int = 0):
    import transformers

    cls_name, extra = VARIANTS[variant]
    cfg = getattr(transformers, cls_name)(**{**TINY, **extra})
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    with torch.no_grad():  # HF zero-inits biases; make them matter
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    return model.eval()


@pytest.fixture(scope="session", params=list(VARIANTS))
def hf_pair(request, tmp_path_factory):
    """(HF model, our LlamaLM loaded from its save_pretrained folder, folder)."""
    from pskills_train.model import load_hf

    hf = build_hf(request.param)
    folder = tmp_path_factory.mktemp(request.param)
    hf.save_pretrained(folder, safe_serialization=True)
    ours = load_hf(folder, encoder_layer=1)
    return hf, ours, folder


def left_padded_batch(lengths: list[int], seed: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """input_ids, attention_mask, position_ids [b, max(lengths)] with pads on the left (id 0)."""
    g = torch.Generator().manual_seed(seed)
    s = max(lengths)
    ids = torch.randint(1, VOCAB, (len(lengths), s), generator=g)  # [b, s]
    mask = torch.zeros(len(lengths), s, dtype=torch.int64)  # [b, s]
    for r, n in enumerate(lengths):
        mask[r, s - n:] = 1
    ids = ids * mask
    pos = (mask.cumsum(-1) - 1).clamp(min=0)  # [b, s]
    return ids, mask, pos


# ---- skipped tests, reported: CI's summary (scripts/test-all.mjs) lists each with its reason

_SKIPS: list[dict[str, str]] = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        _SKIPS.append({"test": report.nodeid, "reason": reason.removeprefix("Skipped: ")})


def pytest_sessionfinish(session, exitstatus):
    """PSKILLS_SKIPS_FILE=path: the skipped tests as JSON lines {test, reason}, for test-all's summary."""
    import json
    import os

    path = os.environ.get("PSKILLS_SKIPS_FILE")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(s) + "\n" for s in _SKIPS)
