"""Hypernetwork training under torchrun: two gloo ranks on CPU (DDP, the global batch split by micro-batch)
compute what one process computes on the same steps; rank 0 alone writes the checkpoint and metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pskills_train.hyper.config import HyperConfig
from pskills_train.hyper.trainer import HyperTrainer
from pskills_train.tokenizer import synthetic_corpus

STEPS = 3


def write_setup(tmp: Path) -> dict:
    """A tiny corpus on disk and a config on export.bundle's tiny random base (what the CLI reads)."""
    for split, seed in (("skills_train", 1), ("skills_val", 2)):
        (tmp / "corpus" / split).mkdir(parents=True)
        lines = [json.dumps({"id": f"{split}/{i}", "name": f"s{i}", "text": t})
                 for i, t in enumerate(synthetic_corpus(3000, seed=seed))]
        (tmp / "corpus" / split / "0.jsonl").write_text("\n".join(lines) + "\n")
    run = {"max_steps": STEPS, "batch_size": 4, "micro_batch": 2, "lr": 3e-3, "warmup_steps": 1,
           "eval_every": 1000, "ckpt_every": 1000, "log_every": 1, "threads": 1, "device": "cpu"}
    # layer norm: the slot batch norm's statistics are each rank's own batch's, so only a net without it
    # trains identically under DDP and alone
    return {"net": {"rank": 2, "width": 32, "heads": 2, "blocks": 1, "norm": "layer"},
            "encoder": {"token_budget": 16, "chunk_overlap": 4},
            "data": {"base": "random:tiny", "corpus": str(tmp / "corpus"), "max_skill_tokens": 48,
                     "target_window": 24, "max_seq": 64, "val_examples": 2},
            "run1": {**run, "out": str(tmp / "single")}}


def losses(out: Path) -> list[float]:
    return [json.loads(ln)["loss"] for ln in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.skipif(sys.platform != "linux", reason="gloo on CPU is what CI runs")
def test_two_gloo_ranks_match_one_process(tmp_path):
    raw = write_setup(tmp_path)
    HyperTrainer(HyperConfig.from_dict(raw), 1).fit(progress=False)
    raw["run1"]["out"] = str(tmp_path / "ddp")
    cfg = tmp_path / "ddp.json"
    cfg.write_text(json.dumps(raw))
    res = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          "-m", "pskills_train.hyper.train", "--config", str(cfg), "--stage", "1", "--backend", "gloo"],
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "device cpu, bf16 False, 2 process(es)" in res.stdout
    single, ddp = losses(tmp_path / "single"), losses(tmp_path / "ddp")
    assert len(single) == len(ddp) == STEPS
    assert ddp == pytest.approx(single, rel=1e-4)
    a = torch.load(tmp_path / "single" / "ckpt.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "ddp" / "ckpt.pt", weights_only=False)["model"]
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-5), k


def test_micro_batches_must_split_over_ranks():
    from pskills_train.hyper.placement import Placement
    from pskills_train.train.distributed import Dist

    p = Placement(torch.device("cpu"), False, Dist(1, 2))
    assert p.micro_indices(4) == [1, 3]
    with pytest.raises(ValueError, match="3 micro-batches per step do not split over 2 ranks"):
        p.micro_indices(3)
