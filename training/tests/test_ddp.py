"""The pretraining CLI under torchrun: two gloo ranks on CPU match one process on the same global batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_pretrain import tiny_setup

STEPS = 4


def _run(raw: dict, root: Path, name: str, nproc: int) -> list[float]:
    raw = json.loads(json.dumps(raw))
    raw["run"].update(out=str(root / name), max_steps=STEPS, eval_every=STEPS, ckpt_every=STEPS)
    cfg = root / f"{name}.json"
    cfg.write_text(json.dumps(raw))
    launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"] if nproc > 1 else []
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, *launcher, "-m", "pskills_train.train.pretrain", "--config", str(cfg)],
                         capture_output=True, text=True, env=env, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [json.loads(ln) for ln in (root / name / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in lines]


@pytest.mark.skipif(sys.platform != "linux", reason="gloo on CPU is what CI runs")
def test_two_gloo_ranks_match_one_process(tmp_path):
    raw = tiny_setup(tmp_path)
    raw["run"].update(batch_size=8, micro_batch=4)  # one rank: 2 micro-steps; two ranks: 1 each
    single = _run(raw, tmp_path, "single", 1)
    ddp = _run(raw, tmp_path, "ddp", 2)
    assert len(single) == len(ddp) == STEPS
    assert ddp == pytest.approx(single, rel=1e-4)
    assert single[-1] < single[0]
