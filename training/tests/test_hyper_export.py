"""hypernet.onnx and the hyper bundle: ONNX vs PyTorch, same I/O for both kinds, deterministic bytes,
the export CLI, and the TypeScript fixture (tests/fixtures/bundle-hyper) recomputed through onnxruntime."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch

from pskills_train.export.bundle import write_bundle
from pskills_train.export.manifest import BundleSpec, hypernet_output_names
from pskills_train.export.staging import MARKER
from pskills_train.hyper.config import NetConfig
from pskills_train.hyper.export import check_hypernet_graph, export_hypernet, write_hyper_bundle
from pskills_train.hyper.export import main as export_main
from pskills_train.hyper.net import build_hypernet, perturb
from pskills_train.hyper.trainer import HyperTrainer
from pskills_train.tokenizer import CHAT_TEMPLATE, synthetic_corpus, tokenizer_config

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/bundle-hyper"
BUDGET = 16


@pytest.fixture(scope="module")
def base_bundle(frozen_tiny, tmp_path_factory):
    lm, tok = frozen_tiny
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=lm.cfg.max_positions)
    out = tmp_path_factory.mktemp("base") / "bundle"
    return write_bundle(lm, tok, tcfg, out, BundleSpec(id="tiny", created="2025-01-01T00:00:00Z",
                                                       training_card={"kind": "random init"}))


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12))


@pytest.mark.parametrize("kind,extra", [("perceiver", {}), ("t2l", {}),
                                        ("perceiver", {"readout": "query", "norm": "layer", "shared_rank": 0,
                                                       "slot_clip": 0.0}),
                                        ("perceiver", {"slot_clip": 0.5})])
def test_onnx_matches_pytorch(frozen_tiny, tmp_path, kind, extra):
    lm, _ = frozen_tiny
    net = build_hypernet(lm.cfg, NetConfig(kind=kind, rank=3, width=32, heads=2, blocks=2, **extra))
    perturb(net, 7)
    if extra.get("norm") == "batch":  # running statistics away from (0, 1), as after training
        g0 = torch.Generator().manual_seed(3)
        with torch.no_grad():
            for _ in range(5):
                net(torch.randn(6, 9, lm.cfg.hidden_size, generator=g0) * 2 + 1, torch.ones(6, 9))
        assert float(net.out_norm.running_var.mean()) != pytest.approx(1.0)
    net.eval()
    path = export_hypernet(net, tmp_path / "h.onnx")
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    assert names == hypernet_output_names(net.modules_)
    g = torch.Generator().manual_seed(1)
    for n in (1, 7, BUDGET):
        states = torch.randn(1, n, lm.cfg.hidden_size, generator=g) * 3
        mask = torch.ones(1, n)
        got = sess.run(None, {"states": states.numpy(), "mask": mask.numpy()})
        with torch.no_grad():
            want = net(states, mask)
        for name, arr in zip(names, got, strict=True):
            ab, m = name.split(".")
            ref = want[m][0 if ab == "A" else 1][0].detach().numpy()
            assert arr.shape == ref.shape
            assert rel_err(arr, ref) < 1e-4, (name, n)


def test_both_kinds_share_the_bundle_io_and_bytes_are_deterministic(frozen_tiny, base_bundle, tmp_path):
    lm, _ = frozen_tiny
    manifests = {}
    for kind in ("perceiver", "t2l"):
        net = build_hypernet(lm.cfg, NetConfig(kind=kind, rank=2, width=16, heads=2, blocks=1, shared_rank=0)).eval()
        perturb(net, 1)
        outs = [write_hyper_bundle(base_bundle, net, tmp_path / f"{kind}{i}", BUDGET, 4, {"steps": 0}) for i in (0, 1)]
        files = sorted(p.name for p in outs[0].iterdir())
        assert files == [MARKER, "bundle.json", "hypernet.onnx", "lm.onnx", "tokenizer.json", "tokenizer_config.json"]
        for f in files:
            assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
        m = json.loads((outs[0] / "bundle.json").read_text())
        check_hypernet_graph(outs[0] / "hypernet.onnx", m)
        assert m["hypernet"]["kind"] == kind and m["hypernet"]["rank"] == 2
        assert m["encoder"]["token_budget"] == BUDGET and m["encoder"]["chunk_overlap"] == 4
        assert m["lora"]["default_rank"] == 2 and m["training_card"]["hypernet"] == {"steps": 0}
        assert set(m["files"]) == set(files) - {"bundle.json", MARKER}
        sess = ort.InferenceSession(str(outs[0] / "hypernet.onnx"), providers=["CPUExecutionProvider"])
        manifests[kind] = ([(i.name, i.shape) for i in sess.get_inputs()],
                           [(o.name, o.shape) for o in sess.get_outputs()])
    assert manifests["perceiver"] == manifests["t2l"]
    # the base bundle's own files are copied unchanged
    base = json.loads((base_bundle / "bundle.json").read_text())
    for name, meta in base["files"].items():
        assert json.loads((tmp_path / "t2l0" / "bundle.json").read_text())["files"][name] == meta


def test_export_cli_from_a_training_checkpoint(frozen_tiny, base_bundle, tmp_path):
    lm, tok = frozen_tiny
    from test_hyper import tiny_cfg

    cfg = tiny_cfg(tmp_path)
    cfg.run1.max_steps = 2
    HyperTrainer(cfg, 1, base=(lm, tok, CHAT_TEMPLATE), train_items=synthetic_corpus(2000), val_items=[]).fit(False)
    out = tmp_path / "bundle"
    # --no-encoder-graph: a random base's all-ones norms cannot be told apart in lm.onnx (test_onnx_encoder)
    assert export_main(["--base-bundle", str(base_bundle), "--checkpoint", str(tmp_path / "s1" / "ckpt.pt"),
                        "--out", str(out), "--kind", "perceiver", "--no-encoder-graph"]) == 0
    m = json.loads((out / "bundle.json").read_text())
    card = m["training_card"]["hypernet"]
    assert card["steps"] == 2 and card["stage"] == 1 and card["config"]["net"]["width"] == 32
    assert m["hypernet"]["params"] > 0
    with pytest.raises(ValueError):
        export_main(["--base-bundle", str(base_bundle), "--checkpoint", str(tmp_path / "s1" / "ckpt.pt"),
                     "--out", str(tmp_path / "x"), "--kind", "t2l"])


def test_fixture_oracle_through_onnxruntime():
    """What main/engine/compile.ts must do, in numpy: chunk, lm.onnx per chunk, hypernet.onnx, mean combine."""
    oracle = json.loads((FIXTURE / "oracle.json").read_text())
    manifest = json.loads((FIXTURE / "bundle.json").read_text())
    arch = manifest["architecture"]
    lm = ort.InferenceSession(str(FIXTURE / "lm.onnx"), providers=["CPUExecutionProvider"])
    hyper = ort.InferenceSession(str(FIXTURE / "hypernet.onnx"), providers=["CPUExecutionProvider"])
    modules = [t["module"] for t in manifest["lora"]["targets"]]
    for case in oracle["chunk_cases"]:
        from pskills_train.hyper.compile import chunk_spans
        assert [list(s) for s in chunk_spans(case["n"], case["token_budget"], case["chunk_overlap"])] == case["chunks"]
    for skill in oracle["skills"]:
        chunks = []
        for (s, e), last in zip(skill["chunks"], skill["chunk_last_state"], strict=True):
            m = e - s
            feeds = {"input_ids": np.array([skill["ids"][s:e]], dtype=np.int64),
                     "attention_mask": np.ones((1, m), dtype=np.int64),
                     "position_ids": np.arange(m, dtype=np.int64)[None], "logits_to_keep": np.zeros(1, np.int64)}
            for i in range(arch["layers"]):
                for kv in ("key", "value"):
                    empty = np.zeros((1, arch["kv_heads"], 0, arch["head_dim"]), np.float32)
                    feeds[f"past_key_values.{i}.{kv}"] = empty
            for g in manifest["lora"]["groups"]:
                for i in manifest["lora"]["layers"]:
                    feeds[f"lora.{i}.{g['name']}.A"] = np.zeros((1, g["d_in"], 0), np.float32)
                    feeds[f"lora.{i}.{g['name']}.B"] = np.zeros((1, 0, g["d_out"]), np.float32)
            states = lm.run(["hidden_states"], feeds)[0]
            assert rel_err(states[0, -1], np.array(last, np.float32)) < 1e-4
            out = hyper.run(None, {"states": states, "mask": np.ones((1, m), np.float32)})
            chunks.append(dict(zip([o.name for o in hyper.get_outputs()], out, strict=True)))
        k = len(chunks)
        for j, layer in enumerate(manifest["lora"]["layers"]):
            for mod in modules:
                a = np.concatenate([c[f"A.{mod}"][j] / k for c in chunks], axis=-1)
                b = np.concatenate([c[f"B.{mod}"][j] for c in chunks], axis=0)
                want = skill["adapter"][f"{layer}.{mod}"]
                assert list(a.shape) == want["A_shape"] and list(b.shape) == want["B_shape"]
                assert rel_err(a.ravel(), np.array(want["A"], np.float32)) < 1e-4
                assert rel_err(b.ravel(), np.array(want["B"], np.float32)) < 1e-4


def test_committed_fixture_is_what_the_script_makes(tmp_path):
    """Fails when the hypernet, exporter or compile path changed without regenerating tests/fixtures/bundle-hyper."""
    import subprocess
    import sys

    script = ROOT / "training/scripts/make_fixture_hyper.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "b")], check=True, capture_output=True)
    fresh, committed = (json.loads((d / "bundle.json").read_text()) for d in (tmp_path / "b", FIXTURE))
    assert fresh == committed
    new, old = (json.loads((d / "oracle.json").read_text()) for d in (tmp_path / "b", FIXTURE))
    def inputs(oracle):
        return [(s["text"], s["ids"], s["chunks"]) for s in oracle["skills"]]

    assert inputs(new) == inputs(old)
    for a, b in zip(new["skills"], old["skills"], strict=True):
        for key, want in b["adapter"].items():
            for ab in "AB":
                assert rel_err(np.array(a["adapter"][key][ab]), np.array(want[ab])) < 1e-5
    total = sum(p.stat().st_size for p in FIXTURE.iterdir())
    assert total < 1_000_000


def test_ablations_ship_beside_the_hypernet(frozen_tiny, base_bundle, tmp_path):
    lm, _ = frozen_tiny
    nets = {kind: build_hypernet(lm.cfg, NetConfig(kind=kind, rank=2, width=16, heads=2, blocks=1)).eval()
            for kind in ("perceiver", "t2l")}
    for i, net in enumerate(nets.values()):
        perturb(net, i + 1)
    out = write_hyper_bundle(base_bundle, nets["perceiver"], tmp_path / "b", BUDGET, 4, {"steps": 2},
                             ablations={"t2l_baseline": (nets["t2l"], {"steps": 1})})
    m = json.loads((out / "bundle.json").read_text())
    assert m["hypernet"]["ablations"] == {"t2l_baseline": "hypernet-t2l_baseline.onnx"}
    assert "hypernet-t2l_baseline.onnx" in m["files"]
    assert m["training_card"]["hypernet"]["ablations"] == {"t2l_baseline": {"steps": 1}}
    check_hypernet_graph(out / "hypernet-t2l_baseline.onnx", m)
    # the shipped file is that network, not a copy of the main one
    feeds = {"states": np.random.default_rng(0).standard_normal((1, 5, lm.cfg.hidden_size), dtype=np.float32),
             "mask": np.ones((1, 5), np.float32)}
    main_out = ort.InferenceSession(str(out / "hypernet.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)
    abl = ort.InferenceSession(str(out / "hypernet-t2l_baseline.onnx"), providers=["CPUExecutionProvider"])
    abl_out = abl.run(None, feeds)
    assert not np.allclose(main_out[0], abl_out[0])
    with pytest.raises(ValueError, match="expected one of"):
        write_hyper_bundle(base_bundle, nets["perceiver"], tmp_path / "c", BUDGET, 4, {},
                           ablations={"other": (nets["t2l"], {})})
