"""The torch + PEFT anchor of the distillation scale bench: what a person would run instead of the studio.

    training/.venv/bin/python training/scripts/peft_step.py --shape smollm2-135m|qwen2.5-0.5b [--config FILE]
        [--rows 8] [--length 128] [--steps 3] [--threads N]

A random-weight model of the shape (transformers, built from a config: nothing downloaded), LoRA rank 8
(alpha 16) on all seven projections with PEFT, Adam (lr 1e-3), and per step the causal-LM loss on the
second half of every row (the answer half; the first half's labels are -100), backward, and the update.
The first step is a warm-up and is not timed. Prints one JSON line {seconds_per_step, steps, rows, length,
params, trainable}; run it under `/usr/bin/time -f %M` for the peak RSS, as the bench does.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

SHAPES = {
    "smollm2-135m": {"model_type": "llama", "hidden_size": 576, "num_hidden_layers": 30, "intermediate_size": 1536,
                     "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49_152,
                     "rope_theta": 100_000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": True,
                     "max_position_embeddings": 8192},
    "qwen2.5-0.5b": {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "intermediate_size": 4864,
                     "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151_936,
                     "rope_theta": 1_000_000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
                     "max_position_embeddings": 32_768},
}
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def build(shape: dict) -> torch.nn.Module:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    kw = {k: v for k, v in shape.items() if k != "model_type"}
    cfg = AutoConfig.for_model(shape["model_type"], **kw)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float32)
    lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=TARGETS, task_type="CAUSAL_LM")
    return get_peft_model(model, lora)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", choices=sorted(SHAPES), default="smollm2-135m")
    ap.add_argument("--config", type=Path, help="a config.json (transformers) instead of a named shape")
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--steps", type=int, default=3, help="timed steps, after one warm-up step")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    shape = json.loads(a.config.read_text()) if a.config else SHAPES[a.shape]
    model = build(shape)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, shape["vocab_size"], (a.rows, a.length), generator=g)
    labels = ids.clone()
    labels[:, : a.length // 2] = -100  # the question half: no loss

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        opt.step()
        return float(loss.detach())

    step()  # warm-up
    t0 = time.perf_counter()
    losses = [step() for _ in range(a.steps)]
    seconds = (time.perf_counter() - t0) / a.steps
    print(json.dumps({"seconds_per_step": seconds, "steps": a.steps, "rows": a.rows, "length": a.length,
                      "params": sum(p.numel() for p in model.parameters()), "trainable": sum(p.numel() for p in params),
                      "losses": losses}))


if __name__ == "__main__":
    main()
