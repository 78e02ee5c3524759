"""encoder.onnx: the states of lm.onnx's hidden_states for every encoder layer (0, middle, L), written
by the bundle and hyper exporters and added in place to a bundle from its lm.onnx alone (idempotent);
the committed default bundle's encoder.onnx against its own lm.onnx."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import onnx
import pytest
import torch

from pskills_train.export.bundle import random_model, write_bundle
from pskills_train.export.manifest import BundleSpec
from pskills_train.export.onnx_encoder import ENCODER_FILE, ENCODER_INPUTS, add_encoder, encoder_io, parity
from pskills_train.hyper.config import NetConfig
from pskills_train.hyper.export import write_hyper_bundle
from pskills_train.hyper.net import build_hypernet, perturb
from pskills_train.tokenizer import tokenizer_config

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "resources/bundles/default"


def tiny_bundle(out: Path, encoder_layer: int | None = None, encoder_graph: bool = True) -> Path:
    lm, tok = random_model("tiny", seed=2)
    with torch.no_grad():  # distinct norm weights, as a trained model has (see test_from_onnx)
        for name, p in lm.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    if encoder_layer is not None:
        lm.cfg = replace(lm.cfg, encoder_layer=encoder_layer)
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=lm.cfg.max_positions)
    return write_bundle(lm, tok, tcfg, out, BundleSpec(id="tiny", created="2025-01-01T00:00:00Z",
                                                       encoder_graph=encoder_graph))


@pytest.mark.parametrize("layer", [0, 1, 2])  # embeddings, after layer 1 of 2, after the final norm
def test_states_equal_lm_hidden_states(tmp_path, layer):
    out = tiny_bundle(tmp_path / "b", layer)
    m = json.loads((out / "bundle.json").read_text())
    assert m["encoder"]["layer"] == layer
    assert m["io"]["encoder"] == encoder_io()
    assert ENCODER_FILE in m["files"]
    graph = onnx.load(str(out / ENCODER_FILE)).graph
    assert [v.name for v in graph.input] == ENCODER_INPUTS
    assert [v.name for v in graph.output] == ["hidden_states"]
    # no LM head: the encoder holds fewer weights than lm.onnx (layer 2 = all layers + norm)
    assert (out / ENCODER_FILE).stat().st_size < (out / "lm.onnx").stat().st_size
    assert parity(out, out / ENCODER_FILE) < 1e-5


def test_added_from_lm_onnx_alone_in_place_and_idempotent(tmp_path):
    out = tiny_bundle(tmp_path / "b", encoder_graph=False)
    assert "encoder" not in json.loads((out / "bundle.json").read_text())["io"]
    add_encoder(out)
    first = (out / ENCODER_FILE).read_bytes(), (out / "bundle.json").read_bytes()
    add_encoder(out)
    assert ((out / ENCODER_FILE).read_bytes(), (out / "bundle.json").read_bytes()) == first
    m = json.loads(first[1])
    assert m["io"]["encoder"] == encoder_io()
    assert parity(out, out / ENCODER_FILE) < 1e-5
    # the bundle written with the graph from the start has the same bytes
    direct = tiny_bundle(tmp_path / "direct")
    assert (direct / ENCODER_FILE).read_bytes() == first[0]


def test_hyper_export_adds_the_encoder_to_a_base_without_one(tmp_path):
    base = tiny_bundle(tmp_path / "base", encoder_graph=False)
    lm, _ = random_model("tiny", seed=2)
    net = build_hypernet(lm.cfg, NetConfig(kind="perceiver", rank=2, width=16, heads=2, blocks=1)).eval()
    perturb(net, 1)
    out = write_hyper_bundle(base, net, tmp_path / "h", 16, 4, {"steps": 1}, encoder=True)
    m = json.loads((out / "bundle.json").read_text())
    assert m["io"]["encoder"] == encoder_io() and ENCODER_FILE in m["files"]
    assert m["hypernet"] is not None
    assert parity(out, out / ENCODER_FILE) < 1e-5
    # without the flag the exporter leaves the base's file list alone
    plain = write_hyper_bundle(base, net, tmp_path / "p", 16, 4, {"steps": 1})
    assert ENCODER_FILE not in json.loads((plain / "bundle.json").read_text())["files"]


@pytest.mark.skipif(not (DEFAULT / ENCODER_FILE).exists(), reason="the default bundle has no encoder.onnx")
def test_default_bundle_encoder_matches_its_lm():
    m = json.loads((DEFAULT / "bundle.json").read_text())
    assert m["io"]["encoder"] == encoder_io()
    assert parity(DEFAULT, DEFAULT / ENCODER_FILE) < 1e-5
