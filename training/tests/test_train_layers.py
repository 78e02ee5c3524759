"""The layered train step (export/train_layers.py): three default-domain graphs per bucket whose weights are
inputs read from lm.onnx's own bytes, a reference runner over them equal to torch autograd on the whole model
after two Adam steps, and the committed fixture the TypeScript runner checks against."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

from pskills_train.export.manifest import file_table
from pskills_train.export.train_layers import (
    LayeredRunner,
    add_layered,
    check_layered,
    head_inputs,
    layer_io,
    lm_from_weights,
    next_inputs,
    read_weight,
)
from pskills_train.export.train_step import add_train_step, io_names, lora_keys
from pskills_train.model.backend import config_from_manifest
from pskills_train.model.from_onnx import load_onnx_lm

torch.set_num_threads(2)
ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/bundle-tiny"
COMMITTED = ROOT / "tests/fixtures/bundle-tiny-layered"
BUCKETS = [(2, 16), (2, 24)]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """A copy of the tiny fixture bundle with whole graphs replaced by layered ones (two buckets)."""
    out = tmp_path_factory.mktemp("tl") / "b"
    shutil.copytree(FIXTURE, out)
    add_train_step(out, [(2, 16)])  # replaced below, every file of it
    add_layered(out, BUCKETS)
    return out


def manifest_of(bundle: Path) -> dict:
    return json.loads((bundle / "bundle.json").read_text())


def test_graphs_are_default_domain_with_the_contract_names(bundle):
    m = manifest_of(bundle)
    entry = m["train_step"]
    assert entry["kind"] == "layered"
    assert [(b["batch"], b["length"]) for b in entry["buckets"]] == BUCKETS
    assert not [f for f in m["files"] if f.startswith("train_step")]  # the whole graph is gone
    assert not [p.name for p in bundle.iterdir() if p.name.startswith("train_step")]
    cfg = config_from_manifest(m)
    roles = list(entry["weights"]["layers"][0])
    ins, vjp_outs, _ = layer_io(cfg, roles)
    for b in entry["buckets"]:
        layer = onnx.load(str(bundle / b["layer"]))
        saved = [o.name for o in layer.graph.output][1:]
        assert saved and saved == [f"saved.{j}" for j in range(len(saved))]
        assert b["saved_bytes"] == sum(4 * int(np.prod([d.dim_value for d in o.type.tensor_type.shape.dim]))
                                       for o in layer.graph.output[1:])
        bwd_in = [n for n in ins if n in {i.name for i in onnx.load(str(bundle / b["layer_bwd"])).graph.input}]
        for key, want_in, want_out in (("layer", ins, ["hidden_out", *saved]),
                                       ("layer_vjp", [*ins, "grad_out"], vjp_outs),
                                       ("layer_bwd", [*bwd_in, *saved, "grad_out"], vjp_outs),
                                       ("head", head_inputs(list(entry["weights"]["head"])), ["loss", "grad_hidden"])):
            g = onnx.load(str(bundle / b[key]))
            assert [i.name for i in g.graph.input] == want_in
            assert [o.name for o in g.graph.output] == want_out
            ops = {(n.domain, n.op_type) for n in g.graph.node}
            assert {d for d, _ in ops} <= {"", "ai.onnx"}, ops
            assert {imp.domain for imp in g.opset_import} <= {"", "ai.onnx"}
            # no weights inside: every initializer is small (shape constants, Expand scalars)
            assert all(len(t.raw_data) < 4096 for t in g.graph.initializer), b[key]
        head = onnx.load(str(bundle / b["head"]))
        assert "NonZero" in {n.op_type for n in head.graph.node}  # the head runs on the answer rows only
    on_disk = file_table(bundle)
    assert all(on_disk[name] == info for name, info in m["files"].items())


def test_spans_hold_lm_onnx_initializers(bundle):
    m = manifest_of(bundle)
    w = m["train_step"]["weights"]
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(bundle / "lm.onnx")).graph.initializer}
    assert np.array_equal(read_weight(bundle, w["embed"]), inits["lm.model.embed_tokens.weight"])
    assert len(w["layers"]) == m["architecture"]["layers"]
    for spans in w["layers"]:
        for span in spans.values():
            a = read_weight(bundle, span)
            assert span["file"] == "lm.onnx" and span["dtype"] == "float32"
            assert any(v.shape == a.shape and np.array_equal(v, a) for v in inits.values())
    qkv = [read_weight(bundle, spans["self_attn.qkv_proj.weight"]) for spans in w["layers"]]
    assert not np.array_equal(qkv[0], qkv[1])  # each layer its own


def test_two_steps_equal_torch_autograd(bundle):
    m = manifest_of(bundle)
    lm = load_onnx_lm(bundle)
    factors, loss = check_layered(bundle, lm, m, m["train_step"]["buckets"][1], seed=5, tol=1e-5)
    assert factors <= 1e-5 and loss <= 1e-5
    p = m["train_step"]["parity"]
    assert p["factors_max_abs"] <= 1e-5 and p["graphs_max_rel"] <= 1e-4


def test_a_wrong_span_is_caught(bundle, tmp_path):
    """The export's check fails, not passes quietly, when the runner reads other weights (layers swapped)."""
    m = manifest_of(bundle)
    w = m["train_step"]["weights"]
    w["layers"] = w["layers"][::-1]
    with pytest.raises(AssertionError, match="differ from torch autograd"):
        check_layered(bundle, load_onnx_lm(bundle), m, m["train_step"]["buckets"][0])


def test_layers_without_lora_get_zero_factors(bundle):
    """lora.layers = [1]: layer 0 runs with zero factors; the step still equals torch on layer 1's."""
    m = manifest_of(bundle)
    m["lora"]["layers"] = [1]
    factors, _ = check_layered(bundle, load_onnx_lm(bundle), m, m["train_step"]["buckets"][0], tol=1e-5)
    assert factors <= 1e-5


def test_committed_fixture_is_this_export_and_its_parity_holds(bundle):
    """tests/fixtures/bundle-tiny-layered (training/scripts/make_fixture_layered.py): its graphs are the bytes
    this exporter writes for the same lm.onnx, and the reference runner reproduces parity.json's torch steps."""
    m = manifest_of(COMMITTED)
    fresh = manifest_of(bundle)
    for key in ("layer", "layer_vjp", "layer_bwd", "head"):
        name = m["train_step"]["buckets"][0][key]
        assert hashlib.sha256((COMMITTED / name).read_bytes()).hexdigest() == fresh["files"][name]["sha256"], name
    assert m["train_step"]["weights"] == fresh["train_step"]["weights"]
    p = json.loads((COMMITTED / "parity.json").read_text())
    cfg = config_from_manifest(m)
    keys = lora_keys(cfg, m["lora"]["layers"])
    ins, _ = io_names(cfg, m["lora"]["layers"])
    ints = {"input_ids", "attention_mask", "position_ids", "teacher_ids"}

    def t(name: str, a: dict) -> torch.Tensor:
        return torch.tensor(a["data"], dtype=torch.int64 if name in ints else torch.float32).reshape(a["dims"])

    n_f = 2 * len(keys)
    x = [t(n, p["init"][n]) for n in ins[:3 * n_f]] + [torch.tensor(p["step"]), torch.tensor(p["lr"])]
    x += [t(n, p["inputs"][n]) for n in ins[3 * n_f + 2:]]
    runner = LayeredRunner(COMMITTED, m["train_step"]["buckets"][0], m)
    for want in p["steps"]:
        got = runner.step(keys, x)
        assert abs(float(got[-1]) - want["loss"]) <= 1e-5
        diff = max(float((g - t(n, {"dims": list(g.shape), "data": want["factors"][n]})).abs().max())
                   for n, g in zip(ins[:n_f], got[:n_f], strict=True))
        assert diff <= 1e-5, diff
        x = next_inputs(x, got, n_f)
    assert sum(f.stat().st_size for f in COMMITTED.iterdir()) < 2e6


@pytest.mark.parametrize("flags", [["--dtype", "fp16"], ["--weights", "q4"]])
def test_gguf_bundles_distil_layered(tmp_path, flags):
    """`bundle create --from-gguf` writes layered graphs by default: float16 weights are inputs in float16
    (an untied head as lm.onnx stores it, [d, V]); a 4-bit lm.onnx's projections are inputs as its packed
    blocks and scales, dequantized in the graph (no float32 copy), and the step equals torch on the model
    those blocks hold, which is lm.onnx's (same logits in float32 arithmetic; lm.onnx runs int8 activations)."""
    from gguf_tiny import write_gguf
    from pskills_train.export.bundle_writer import verify_with_ort
    from pskills_train.export.from_gguf import main
    from pskills_train.export.lm_q4 import write_float_twin

    path = write_gguf(tmp_path / "m.gguf", "llama")
    out = tmp_path / "b"
    assert main([str(path), "--out", str(out), "--created", "2025-01-01T00:00:00Z", "--train-step-buckets", "1x16",
                 *flags]) == 0
    m = manifest_of(out)
    w = m["train_step"]["weights"]
    lm = lm_from_weights(out, config_from_manifest(m), w)
    if "fp16" in flags:
        assert w["head"]["lm_head.weight"]["shape"] == [m["architecture"]["hidden"], m["architecture"]["vocab"]]
        assert w["layers"][0]["self_attn.qkv_proj.weight"]["dtype"] == "float16"
        assert w["embed"]["dtype"] == "float16"
    else:
        assert "train_step.data" not in m["files"] and m["training_card"]["lm_weights"]["float32_for"] is None
        spans = w["layers"][0]
        assert spans["mlp.down_proj.weight.q4"]["dtype"] == "uint8" and "mlp.down_proj.weight" not in spans
        assert spans["mlp.down_proj.weight.scales"]["dtype"] == "float32"
        assert {"lm_head.weight.q4", "lm_head.weight.scales"} <= set(w["head"])  # untied head, 4-bit too
        (twin,) = write_float_twin(out / "lm.onnx", tmp_path / "twin.onnx")  # lm.onnx in float32 arithmetic
        assert verify_with_ort(lm, twin, outputs=("logits",)) <= 1e-4
    assert m["train_step"]["parity"]["factors_max_abs"] <= 1e-5  # at export
    factors, _ = check_layered(out, lm, m, m["train_step"]["buckets"][0], tol=1e-5)
    assert factors <= 1e-5


def test_memory_check_sizes_layered_by_the_smallest_bucket(tmp_path):
    """The importer's precheck counts [b, s, vocab] tensors of the largest bucket for whole graphs, of the
    smallest (the parity check's torch steps) for layered ones, at fewer bytes each: SmolLM2-135M's 19 GB
    requirement becomes its lm.onnx export's (measured 2,959 MiB; estimated 3.3 GB with the 4-row buckets)."""
    from pskills_train.export.bundle_writer import FromHfOptions
    from pskills_train.export.from_gguf import MEMORY_PER_LOGIT_LAYERED, GGUFError, check_resources, train_logits

    buckets = ((8, 64), (8, 128), (8, 256))
    assert train_logits(FromHfOptions(train_buckets=buckets)) == 8 * 64
    assert train_logits(FromHfOptions(train_buckets=buckets, train_kind="whole")) == 8 * 256
    smollm2, vocab = 134_515_008, 49_152
    logits = train_logits(FromHfOptions(train_buckets=buckets)) * vocab
    check_resources(tmp_path / "m.gguf", tmp_path / "out", smollm2, logits, free_memory=4 * 10**9,
                    free_disk=10**12, per_logit=MEMORY_PER_LOGIT_LAYERED)
    with pytest.raises(GGUFError, match=r"needs about 3\.\d\d GB of memory, 3\.00 GB is available"):
        check_resources(tmp_path / "m.gguf", tmp_path / "out", smollm2, logits, free_memory=3 * 10**9,
                        free_disk=10**12, per_logit=MEMORY_PER_LOGIT_LAYERED)
    with pytest.raises(GGUFError, match="GB of memory"):
        check_resources(tmp_path / "m.gguf", tmp_path / "out", smollm2, 8 * 256 * vocab, free_memory=4 * 10**9,
                        free_disk=10**12)


def test_reexport_keeps_the_layered_kind(tmp_path):
    from pskills_train.export.reexport import reexport

    new = reexport(COMMITTED, tmp_path / "b")
    assert new["train_step"]["kind"] == "layered"
    assert [(b["batch"], b["length"]) for b in new["train_step"]["buckets"]] == [(2, 16)]
    assert new["train_step"]["parity"]["factors_max_abs"] <= 1e-5
    assert not [f for f in new["files"] if f.startswith("train_step")]
