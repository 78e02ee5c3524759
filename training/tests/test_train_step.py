"""train_step.onnx (export/train_step.py): standard ONNX ops only, one step equal to torch autograd on the
same model/distill_objective.py functions, base weights read from lm.onnx's bytes (no copy), and the committed default
bundle's graphs cost < 10 % of the bundle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx.external_data_helper import ExternalDataInfo, uses_external_data

from pskills_train.export.manifest import file_table
from pskills_train.export.shared_weights import MIN_SHARED_BYTES
from pskills_train.export.train_step import (
    FINE_BUCKETS,
    PARITY_TOL,
    StepSpec,
    add_train_step,
    io_names,
    lora_keys,
    parse_buckets,
    torch_step,
    warm_inputs,
)
from pskills_train.model.from_onnx import load_onnx_lm

torch.set_num_threads(2)
ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/bundle-tiny"
DEFAULT = ROOT / "resources/bundles/default"
BUCKET = (2, 16)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """A copy of the tiny fixture bundle with a fresh train-step graph."""
    out = tmp_path_factory.mktemp("ts") / "b"
    shutil.copytree(FIXTURE, out)
    add_train_step(out, [BUCKET])
    return out


def graph(bundle: Path) -> onnx.ModelProto:
    manifest = json.loads((bundle / "bundle.json").read_text())
    return onnx.load(str(bundle / manifest["train_step"]["buckets"][0]["file"]), load_external_data=False)


def test_every_op_is_in_the_default_domain(bundle):
    model = graph(bundle)
    ops = {(n.domain, n.op_type) for n in model.graph.node}
    outside = sorted(f"{d}::{op}" for d, op in ops if d not in ("", "ai.onnx"))
    assert not outside, f"ops outside the default ONNX domain: {outside}"
    assert {imp.domain for imp in model.opset_import} <= {"", "ai.onnx"}
    assert {"MatMul", "LogSoftmax", "Sqrt"} <= {op for _, op in ops}


def test_one_step_equals_torch_autograd(bundle):
    manifest = json.loads((bundle / "bundle.json").read_text())
    lm = load_onnx_lm(bundle)
    layers = manifest["lora"]["layers"]
    spec = StepSpec(*BUCKET, manifest["train_step"]["rank"])
    keys = lora_keys(lm.cfg, layers)
    ins, outs = io_names(lm.cfg, layers)
    x = warm_inputs(lm.cfg, keys, spec, seed=7)
    x[-3][0, :5] = 0.0  # an answer mask with holes
    x[ins.index("attention_mask")][1, :3] = 0  # and a left-padded row
    want = torch_step(lm, keys, spec, x)
    sess = ort.InferenceSession(str(bundle / spec.file), providers=["CPUExecutionProvider"])
    got = sess.run(outs, {n: t.numpy() for n, t in zip(ins, x, strict=True)})
    n_f = 2 * len(keys)
    factors = max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got[:n_f], want[:n_f], strict=True))
    moments = max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got[n_f:-1], want[n_f:-1], strict=True))
    assert factors <= PARITY_TOL, factors
    assert moments <= 1e-6, moments
    assert abs(float(got[-1]) - float(want[-1])) <= 1e-5 * max(1.0, abs(float(want[-1])))
    moved = max(float(np.abs(g - t.numpy()).max()) for g, t in zip(got[:n_f], x[:n_f], strict=True))
    assert moved > 1e-5  # the step changed the factors


def test_base_weights_are_lm_onnx_bytes(bundle):
    model = graph(bundle)
    inline = [t.name for t in model.graph.initializer if not uses_external_data(t) and len(t.raw_data) >= 4096]
    assert not inline, f"large inline initializers (copies of weights or constants): {inline[:5]}"
    shared = [ExternalDataInfo(t) for t in model.graph.initializer if uses_external_data(t)]
    assert shared and {i.location for i in shared} == {"lm.onnx"}
    assert all((i.length or 0) >= MIN_SHARED_BYTES for i in shared)


def test_manifest_entry_and_files(bundle):
    manifest = json.loads((bundle / "bundle.json").read_text())
    entry = manifest["train_step"]
    assert entry["buckets"] == [{"batch": 2, "length": 16, "file": "train_step-2x16.onnx"}]
    assert entry["rank"] == manifest["lora"]["default_rank"] and entry["top_k"] == 16
    on_disk = file_table(bundle)
    assert all(on_disk[name] == info for name, info in manifest["files"].items())
    # every other file keeps its bytes
    for name, info in json.loads((FIXTURE / "bundle.json").read_text())["files"].items():
        assert manifest["files"][name] == info
    sess = ort.InferenceSession(str(bundle / "train_step-2x16.onnx"), providers=["CPUExecutionProvider"])
    cfg = load_onnx_lm(bundle).cfg
    ins, outs = io_names(cfg, manifest["lora"]["layers"])
    assert [i.name for i in sess.get_inputs()] == ins
    assert [o.name for o in sess.get_outputs()] == outs


def test_parse_buckets():
    assert parse_buckets("8x128, 8x64,8x64") == [(8, 64), (8, 128)]
    with pytest.raises(ValueError, match="BATCHxLENGTH"):
        parse_buckets("8by64")
    with pytest.raises(ValueError, match="at most 64 rows of 8192 tokens"):
        parse_buckets("8x128,100000x100000")


@pytest.mark.skipif(not (DEFAULT / "bundle.json").exists(), reason="no default bundle")
def test_default_bundle_grows_less_than_ten_percent():
    manifest = json.loads((DEFAULT / "bundle.json").read_text())
    assert "train_step" in manifest, "resources/bundles/default has no train_step graphs"
    step_files = {b["file"] for b in manifest["train_step"]["buckets"]}
    added = sum(manifest["files"][f]["bytes"] for f in step_files)
    rest = sum(v["bytes"] for k, v in manifest["files"].items() if k not in step_files)
    assert added < 0.10 * rest, f"train-step graphs {added} bytes, {100 * added / rest:.1f} % of {rest}"
    # written by `python -m pskills_train.export.train_step resources/bundles/default --buckets fine`
    assert [(b["batch"], b["length"]) for b in manifest["train_step"]["buckets"]] == list(FINE_BUCKETS)
    for f in step_files:
        g = onnx.load(str(DEFAULT / f), load_external_data=False).graph
        assert {ExternalDataInfo(t).location for t in g.initializer if uses_external_data(t)} == {"lm.onnx"}


def test_committed_train_fixture_is_what_the_script_makes(tmp_path):
    """Fails when the exporter or objective changed without regenerating tests/fixtures/bundle-tiny-train
    (the TypeScript parity test's graph and oracle)."""
    import subprocess
    import sys

    from test_bundle import assert_json_close

    committed = ROOT / "tests/fixtures/bundle-tiny-train"
    script = ROOT / "training/scripts/make_fixture_train_step.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "b")], check=True, capture_output=True)
    fresh = json.loads((tmp_path / "b/bundle.json").read_text())
    assert fresh["files"] == json.loads((committed / "bundle.json").read_text())["files"]
    assert_json_close(json.loads((tmp_path / "b/train_oracle.json").read_text()),
                      json.loads((committed / "train_oracle.json").read_text()), "train_oracle.json")


def test_zero_init_step_is_finite_and_leaves_a_untouched(bundle):
    """Zero init has B = 0, so A's gradient is exactly 0 and Adam divides 0 by √0 + ε: the graph must keep
    the ε (an optimizer that drops `+ 1e-8` as an add of zero makes that NaN)."""
    manifest = json.loads((bundle / "bundle.json").read_text())
    lm = load_onnx_lm(bundle)
    layers = manifest["lora"]["layers"]
    spec = StepSpec(*BUCKET, manifest["train_step"]["rank"])
    keys = lora_keys(lm.cfg, layers)
    ins, outs = io_names(lm.cfg, layers)
    from pskills_train.export.train_step import example_inputs

    x = example_inputs(lm.cfg, keys, spec, seed=3)
    for j in range(len(keys)):
        x[2 * j + 1].zero_()  # B = 0
    sess = ort.InferenceSession(str(bundle / spec.file), providers=["CPUExecutionProvider"])
    got = sess.run(outs, {n: t.numpy() for n, t in zip(ins, x, strict=True)})
    want = torch_step(lm, keys, spec, x)
    assert all(np.isfinite(g).all() for g in got)
    for j in range(len(keys)):
        assert np.array_equal(got[2 * j], x[2 * j].numpy())  # A unchanged
    n_f = 2 * len(keys)
    assert max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got[:n_f], want[:n_f], strict=True)) <= PARITY_TOL
