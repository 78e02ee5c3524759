"""The pretraining CLI under torchrun: two gloo ranks on CPU match one process on the same global batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pskills_train.train.config import PretrainConfig
from pskills_train.train.distributed import Dist
from pskills_train.train.pretrain import Pretrainer
from test_pretrain import tiny_setup

STEPS = 4


def _losses(root: Path, name: str) -> list[float]:
    return [json.loads(ln)["loss"] for ln in (root / name / "metrics.jsonl").read_text().splitlines()]


def _config(raw: dict, root: Path, name: str) -> dict:
    raw = json.loads(json.dumps(raw))
    raw["run"].update(out=str(root / name), max_steps=STEPS, eval_every=STEPS, ckpt_every=STEPS)
    return raw


@pytest.mark.skipif(sys.platform != "linux", reason="gloo on CPU is what CI runs")
def test_two_gloo_ranks_match_one_process(tmp_path):
    raw = tiny_setup(tmp_path)
    raw["run"].update(batch_size=8, micro_batch=4)  # one rank: 2 micro-steps; two ranks: 1 each
    Pretrainer(PretrainConfig.from_dict(_config(raw, tmp_path, "single")), Dist(), resume=False).fit()
    cfg = tmp_path / "ddp.json"
    cfg.write_text(json.dumps(_config(raw, tmp_path, "ddp")))
    res = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          "-m", "pskills_train.train.pretrain", "--config", str(cfg)],
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    single, ddp = _losses(tmp_path, "single"), _losses(tmp_path, "ddp")
    assert len(single) == len(ddp) == STEPS
    assert ddp == pytest.approx(single, rel=1e-4)
    assert single[-1] < single[0]
