"""Make tests/fixtures/bundle-tiny-train: the tiny fixture bundle's lm.onnx and tokenizer with a 2×16
train-step graph (export/train_step.py) and train_oracle.json, for the TypeScript engine's parity test
(tests/int/engine/train-step.int.test.ts).

    training/.venv/bin/python training/scripts/make_fixture_train_step.py [--out DIR]

train_oracle.json holds one step's inputs (warm Adam moments, a left-padded row, an answer mask with
holes) and what torch autograd on the same objective.py functions gives: the loss and the updated
factors, row-major float32. Re-running gives the same graph bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import torch

from pskills_train.export.train_step import StepSpec, add_train_step, io_names, lora_keys, torch_step, warm_inputs
from pskills_train.model.from_onnx import load_onnx_lm

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests/fixtures/bundle-tiny"
BUCKET = (2, 16)
SEED = 7


def f32(t: torch.Tensor) -> list:
    return [float(str(np.float32(v))) for v in t.flatten().tolist()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "tests/fixtures/bundle-tiny-train")
    out = ap.parse_args().out
    manifest = json.loads((SOURCE / "bundle.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for name in manifest["files"]:
        shutil.copyfile(SOURCE / name, out / name)
    shutil.copyfile(SOURCE / "bundle.json", out / "bundle.json")
    torch.set_num_threads(1)
    new = add_train_step(out, [BUCKET])
    lm = load_onnx_lm(out)
    layers = manifest["lora"]["layers"]
    spec = StepSpec(*BUCKET, new["train_step"]["rank"])
    keys = lora_keys(lm.cfg, layers)
    ins, outs = io_names(lm.cfg, layers)
    x = warm_inputs(lm.cfg, keys, spec, SEED)
    x[ins.index("answer_mask")][0, :5] = 0.0
    x[ins.index("attention_mask")][1, :3] = 0
    want = torch_step(lm, keys, spec, x)
    n_f = 2 * len(keys)
    oracle = {
        "bucket": list(BUCKET),
        "inputs": {n: {"dims": list(t.shape), "data": t.flatten().tolist() if t.dtype == torch.int64 else f32(t)}
                   for n, t in zip(ins, x, strict=True)},
        "loss": float(want[-1]),
        "new_lora": {n: f32(t) for n, t in zip(outs[:n_f], want[:n_f], strict=True)},
    }
    (out / "train_oracle.json").write_text(json.dumps(oracle) + "\n")


if __name__ == "__main__":
    main()
