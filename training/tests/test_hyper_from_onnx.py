"""hyper.from_onnx: a bundle's hypernet.onnx back to a checkpoint that matches it and that export and
stage 2 accept (a fresh clone continues the shipped hypernetwork from the bundle alone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pskills_train.export.bundle import random_model, write_bundle
from pskills_train.export.manifest import BundleSpec
from pskills_train.hyper.export import load_hypernet, write_hyper_bundle
from pskills_train.hyper.from_onnx import load_onnx_hypernet, main, parity
from pskills_train.hyper.net import SlotBatchNorm, build_hypernet, perturb
from pskills_train.tokenizer import tokenizer_config

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def hyper_bundle(tmp_path_factory) -> tuple[Path, torch.nn.Module]:
    from test_hyper import tiny_cfg

    lm, tok = random_model("tiny")
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=lm.cfg.max_positions)
    tmp = tmp_path_factory.mktemp("b")
    base = write_bundle(lm, tok, tcfg, tmp / "base", BundleSpec(id="tiny", created="2025-01-01T00:00:00Z",
                                                                training_card={"kind": "random init"}))
    cfg = tiny_cfg(tmp, readout="content", norm="batch", shared_rank=2)
    net = build_hypernet(lm.cfg, cfg.net)
    perturb(net, 5)
    norm = net.out_norm
    assert isinstance(norm, SlotBatchNorm)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():  # statistics away from (0, 1), as after training
        norm.running_mean.normal_(0.0, 0.3, generator=g)
        norm.running_var.uniform_(0.5, 2.0, generator=g)
    card = {"kind": "hypernetwork", "stage": 2, "steps": 7,
            "config": {k: v for k, v in cfg.to_dict().items() if k not in ("run1", "run2")},
            "run": cfg.to_dict()["run2"]}
    return write_hyper_bundle(base, net.eval(), tmp / "hyper", 16, 4, card), net


def test_recovered_net_equals_the_trained_one(hyper_bundle):
    bundle, trained = hyper_bundle
    net, cfg, _ = load_onnx_hypernet(bundle)
    assert parity(net, bundle) < 1e-5
    assert cfg["net"]["shared_rank"] == 2
    want = trained.state_dict()
    for k, v in net.state_dict().items():
        tol = 1e-3 if k == "out_norm.running_var" else 1e-6  # stored as 1/sqrt(var + eps)
        assert torch.allclose(v, want[k], atol=tol, rtol=tol), k


def test_cli_writes_a_checkpoint_export_loads(hyper_bundle, tmp_path):
    bundle, _ = hyper_bundle
    out = tmp_path / "init.pt"
    assert main([str(bundle), str(out)]) == 0
    ck = torch.load(out, map_location="cpu", weights_only=False)
    net, _, cfg = load_hypernet(ck)
    assert ck["step"] == 7 and cfg["encoder"]["token_budget"] == 16
    assert parity(net, bundle) < 1e-5


def test_a_bundle_without_a_hypernet_card_is_refused(hyper_bundle, tmp_path):
    bundle, _ = hyper_bundle
    m = json.loads((bundle / "bundle.json").read_text())
    m["training_card"].pop("hypernet")
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in bundle.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    (copy / "bundle.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match="training_card.hypernet"):
        load_onnx_hypernet(copy)
