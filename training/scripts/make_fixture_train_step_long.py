"""Make tests/fixtures/train-step-2x128: a 2×128 train-step graph of tests/fixtures/bundle-tiny-train's model,
and bucket.json (its bucket entry and its bundle.json files entry). A test that needs rows longer than
the fixture's 16 tokens (a round-trip follow-up: request, call, tool result) copies bundle-tiny-train and
adds this bucket (tests/int/engine/fixture.ts `withLongBucket`).

    training/.venv/bin/python training/scripts/make_fixture_train_step_long.py

The graph reads the weights from lm.onnx (external data), so it only works beside bundle-tiny-train's.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import torch

from pskills_train.export.train_step import add_train_step

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests/fixtures/bundle-tiny-train"
OUT = ROOT / "tests/fixtures/train-step-2x128"
BUCKET = (2, 128)


def main() -> None:
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "bundle"
        shutil.copytree(SOURCE, copy)
        new = add_train_step(copy, [BUCKET])
        [bucket] = new["train_step"]["buckets"]
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(copy / bucket["file"], OUT / bucket["file"])
        patch = {"bucket": bucket, "files": {bucket["file"]: new["files"][bucket["file"]]}}
        (OUT / "bucket.json").write_text(json.dumps(patch, indent=2) + "\n")
    print(f"wrote {OUT}: {bucket['file']}")


if __name__ == "__main__":
    main()
