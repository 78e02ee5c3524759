"""export.reexport: a format 1 bundle, and the shipped default, written again as format 2 with the same numbers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pskills_train.export.manifest import FORMAT
from pskills_train.export.reexport import GRAPHS, logits_diff, reexport
from pskills_train.model.from_onnx import load_onnx_lm

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "tests" / "fixtures" / "bundle-tiny-v1"  # format 1, frozen (its README.md)
DEFAULT = ROOT / "resources" / "bundles" / "default"


@pytest.fixture(params=[V1, DEFAULT], ids=["tiny format 1", "default bundle"])
def source(request) -> Path:
    return request.param


def test_reexport_writes_format_2_with_the_same_logits(source, tmp_path):
    old = json.loads((source / "bundle.json").read_text())
    new = reexport(source, tmp_path / "new")
    assert new["format"] == FORMAT and [g["name"] for g in new["lora"]["groups"]][0] == "qkv"
    assert new["training_card"]["reexport"]["of"] == hashlib.sha256((source / "bundle.json").read_bytes()).hexdigest()
    assert new["training_card"]["reexport"]["logits_max_abs_diff"] <= 1e-4
    def card(m: dict) -> dict:
        return {k: v for k, v in m["training_card"].items() if k != "reexport"}

    assert card(new) == card(old)
    for name, entry in old["files"].items():  # tokenizer, hypernetworks: the same bytes
        if name not in GRAPHS:
            assert new["files"][name] == entry, name
    if old["format"] != FORMAT:  # the tied head is stored once
        assert new["files"]["lm.onnx"]["bytes"] < old["files"]["lm.onnx"]["bytes"]
    # an independent check of the written files, adapters included
    assert logits_diff(source, tmp_path / "new", load_onnx_lm(tmp_path / "new")) <= 1e-4
