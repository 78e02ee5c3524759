"""Make tests/fixtures/bundle-tiny-layered: the tiny fixture bundle's lm.onnx and tokenizer with the layered
train-step graphs of one 2×16 bucket (export/train_layers.py) and parity.json, for the TypeScript layered
runner's parity test.

    training/.venv/bin/python training/scripts/make_fixture_layered.py [--out DIR]

parity.json holds a seeded batch (a left-padded row, an answer mask with holes), the factors and warm Adam
moments it starts from (step `step`, learning rate `lr`), and what `train_step.torch_step` (torch autograd
on the whole model, the same objective.py functions) gives after each of two steps: the loss (before that
step's update) and the updated factors. Arrays are row-major float32 (int64 for ids and masks); factor
names are `lora.{i}.{module}.A|B`, moments `m.…` and `v.…`. Re-running gives the same graph bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import torch

from pskills_train.export.train_layers import add_layered, next_inputs
from pskills_train.export.train_step import StepSpec, io_names, lora_keys, torch_step, warm_inputs
from pskills_train.model.from_onnx import load_onnx_lm

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests/fixtures/bundle-tiny"
BUCKET = (2, 16)
SEED = 7
LR = 1e-3
STEPS = 2


def f32(t: torch.Tensor) -> list:
    return [float(str(np.float32(v))) for v in t.flatten().tolist()]


def arr(t: torch.Tensor) -> dict:
    return {"dims": list(t.shape), "data": t.flatten().tolist() if t.dtype == torch.int64 else f32(t)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "tests/fixtures/bundle-tiny-layered")
    out = ap.parse_args().out
    manifest = json.loads((SOURCE / "bundle.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for name in manifest["files"]:
        shutil.copyfile(SOURCE / name, out / name)
    shutil.copyfile(SOURCE / "bundle.json", out / "bundle.json")
    torch.set_num_threads(1)
    new = add_layered(out, [BUCKET])
    lm = load_onnx_lm(out)
    layers = manifest["lora"]["layers"]
    spec = StepSpec(*BUCKET, new["train_step"]["rank"])
    keys = lora_keys(lm.cfg, layers)
    ins, _ = io_names(lm.cfg, layers)
    x = warm_inputs(lm.cfg, keys, spec, SEED)
    x[ins.index("answer_mask")][0, :5] = 0.0
    x[ins.index("attention_mask")][1, :3] = 0
    x[ins.index("position_ids")][1] = (x[ins.index("attention_mask")][1].cumsum(-1) - 1).clamp(min=0)
    x[ins.index("lr")] = torch.tensor(LR)
    n_f = 2 * len(keys)
    data = ["input_ids", "attention_mask", "position_ids", "answer_mask", "teacher_ids", "teacher_logp"]
    parity = {
        "bucket": list(BUCKET), "step": float(x[ins.index("step")]), "lr": LR,
        "inputs": {n: arr(x[ins.index(n)]) for n in data},
        "init": {n: arr(t) for n, t in zip(ins[:3 * n_f], x[:3 * n_f], strict=True)},
        "steps": [],
    }
    for _ in range(STEPS):
        want = torch_step(lm, keys, spec, x)
        parity["steps"].append({"loss": float(want[-1]),
                                "factors": {n: f32(t) for n, t in zip(ins[:n_f], want[:n_f], strict=True)}})
        x = next_inputs(x, want, n_f)
    (out / "parity.json").write_text(json.dumps(parity) + "\n")


if __name__ == "__main__":
    main()
