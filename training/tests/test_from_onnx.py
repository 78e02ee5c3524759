"""Recovering a bundle's base LM from lm.onnx: the weights round-trip and the logits match onnxruntime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pskills_train.export.bundle import random_model, write_bundle
from pskills_train.export.manifest import BundleSpec
from pskills_train.model.from_onnx import load_onnx_lm, parity
from pskills_train.tokenizer import tokenizer_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    lm, tok = random_model("tiny", seed=3)
    with torch.no_grad():  # distinct norm weights, so none is folded into a shared constant
        for name, p in lm.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    out = tmp_path_factory.mktemp("b") / "tiny"
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=256)
    write_bundle(lm, tok, tcfg, out, BundleSpec(id="t", created="2025-01-01T00:00:00Z"))
    return lm, out


def test_every_weight_round_trips(exported):
    lm, out = exported
    got = load_onnx_lm(out).state_dict()
    for k, v in lm.state_dict().items():
        assert torch.equal(got[k], v), k


def test_logits_match_onnxruntime(exported):
    _, out = exported
    assert parity(load_onnx_lm(out), out) < 1e-4


def test_a_bundle_whose_config_disagrees_is_refused_naming_the_file(exported, tmp_path):
    _, out = exported
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in out.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    m = json.loads((bad / "bundle.json").read_text())
    m["architecture"]["layers"] += 1
    (bad / "bundle.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match="lm.onnx"):
        load_onnx_lm(bad)
