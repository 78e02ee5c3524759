"""Bundles from tiny random HF checkpoints (Llama, Qwen2 with q/k/v bias, Mistral): lm.onnx in onnxruntime
equals transformers (fp32 ≤ 1e-4), fp16 storage, ONNX external data, errors that name the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from hf_tiny import save_checkpoint
from pskills_train.commands.from_hf import create_bundle, main
from pskills_train.distill_recipe import bundle_entry
from pskills_train.export.bundle_writer import FromHfOptions, check_shapes, ort_feeds
from pskills_train.export.hf_checkpoint import write_base_bundle
from pskills_train.export.onnx_weights import FP16_MIN_ELEMENTS
from pskills_train.export.staging import MARKER

TOL = 1e-4
OPTS = dict(created="2025-01-01T00:00:00Z")


@pytest.fixture(scope="module", params=["llama", "qwen2", "mistral"])
def checkpoint(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param) / "hf"
    return request.param, folder, save_checkpoint(request.param, folder, seed=1)


def run_ort(path: Path, lm_cfg, ids: np.ndarray, past: dict[str, np.ndarray] | None = None):
    """Logits of `ids` after `past` (one row), and the present KV by past_key_values names (with fused
    attention, the past with the step's keys and values appended, as the engine does)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    p = 0 if past is None else past["past_key_values.0.key"].shape[2]
    feeds = ort_feeds_for(lm_cfg, ids, p, past)
    out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds), strict=True))
    present = {k.replace("present.", "past_key_values."): v for k, v in out.items() if k.startswith("present.")}
    for k, v in out.items():
        if k.startswith("step."):  # [1, s, kv·hd] -> [1, kv, s, hd] after the past
            name = k.replace("step.", "past_key_values.")
            new = v.reshape(1, v.shape[1], lm_cfg.num_kv_heads, lm_cfg.head_dim).transpose(0, 2, 1, 3)
            present[name] = new if past is None else np.concatenate((past[name], new), axis=2)
    return out["logits"], present


def ort_feeds_for(cfg, ids: np.ndarray, past_len: int, past):
    feeds = ort_feeds(cfg, ids)
    s = ids.shape[1]
    feeds["attention_mask"] = np.ones((1, past_len + s), np.int64)
    feeds["position_ids"] = np.arange(past_len, past_len + s)[None].astype(np.int64)
    if past:
        feeds.update(past)
    return feeds


def lm_config(bundle: Path):
    from pskills_train.model.config import ModelConfig

    return ModelConfig.from_dict(json.loads((bundle / "bundle.json").read_text())["training_card"]["model"])


@torch.no_grad()
def test_logits_and_kv_decoding_equal_transformers(checkpoint, tmp_path):
    family, folder, hf = checkpoint
    out = write_base_bundle(folder, tmp_path / "b", FromHfOptions(**OPTS))
    m = json.loads((out / "bundle.json").read_text())
    assert m["architecture"]["family"] == family
    assert m["architecture"]["qkv_bias"] == (family == "qwen2")
    assert m["tokenizer"]["vocab_size"] == 300 and m["architecture"]["vocab"] == 320
    assert m["special_tokens"]["eos"] == 299 and m["hypernet"] is None
    assert "<|im_start|>" in json.loads((out / "tokenizer_config.json").read_text())["chat_template"]
    ids = np.array([[5, 17, 42, 99, 250, 3, 77]], np.int64)
    ref = hf(input_ids=torch.from_numpy(ids)).logits.numpy()  # [1, 7, V]
    cfg = lm_config(out)
    prefill, past = run_ort(out / "lm.onnx", cfg, ids[:, :5])
    assert np.abs(prefill - ref[:, :5]).max() < TOL
    step, past = run_ort(out / "lm.onnx", cfg, ids[:, 5:6], past)  # one token on the KV cache
    step2, _ = run_ort(out / "lm.onnx", cfg, ids[:, 6:7], past)
    assert np.abs(step[0, 0] - ref[0, 5]).max() < TOL
    assert np.abs(step2[0, 0] - ref[0, 6]).max() < TOL


@torch.no_grad()
def test_fp16_storage_halves_the_file_and_equals_rounded_weights(tmp_path):
    folder = tmp_path / "hf"
    hf = save_checkpoint("qwen2", folder, seed=2)
    fp32 = write_base_bundle(folder, tmp_path / "fp32", FromHfOptions(**OPTS))
    fp16 = write_base_bundle(folder, tmp_path / "fp16", FromHfOptions(dtype="fp16", **OPTS))
    size32, size16 = (fp32 / "lm.onnx").stat().st_size, (fp16 / "lm.onnx").stat().st_size
    assert size16 < 0.62 * size32
    graph = onnx.load(str(fp16 / "lm.onnx")).graph
    assert any(t.data_type == onnx.TensorProto.FLOAT16 for t in graph.initializer)
    assert {v.type.tensor_type.elem_type for v in graph.output} == {onnx.TensorProto.FLOAT}  # I/O stays fp32
    for p in hf.parameters():  # the same rounding the exporter applies
        if p.numel() >= FP16_MIN_ELEMENTS or p.dim() >= 2:
            p.copy_(p.half().float())
    ids = np.array([[9, 8, 7, 200, 31]], np.int64)
    logits, _ = run_ort(fp16 / "lm.onnx", lm_config(fp16), ids)
    assert np.abs(logits - hf(input_ids=torch.from_numpy(ids)).logits.numpy()).max() < TOL
    assert json.loads((fp16 / "bundle.json").read_text())["training_card"]["dtype"] == "fp16"


@torch.no_grad()
def test_external_data_past_the_threshold(tmp_path):
    folder = tmp_path / "hf"
    hf = save_checkpoint("llama", folder, seed=3)
    out = write_base_bundle(folder, tmp_path / "b", FromHfOptions(external_threshold=10_000, **OPTS))
    m = json.loads((out / "bundle.json").read_text())
    assert sorted(m["files"]) == ["lm.onnx", "lm.onnx.data", "tokenizer.json", "tokenizer_config.json"]
    assert (out / "lm.onnx").stat().st_size < 100_000 < (out / "lm.onnx.data").stat().st_size
    assert sorted(p.name for p in out.iterdir()) == sorted([*m["files"], "bundle.json", MARKER])  # no temp files
    locations = {e.value for t in onnx.load(str(out / "lm.onnx"), load_external_data=False).graph.initializer
                 for e in t.external_data if e.key == "location"}
    assert locations == {"lm.onnx.data"}
    wrong = {**m, "architecture": {**m["architecture"], "kv_heads": 4}}
    with pytest.raises(AssertionError, match=r"past_key_values\.0\.key has shape \['batch', 2, "):
        check_shapes(out / "lm.onnx", wrong)
    moved = tmp_path / "moved"  # the data is found beside the graph wherever the bundle lives
    shutil.move(out, moved)
    ids = np.array([[1, 2, 3, 4]], np.int64)
    logits, _ = run_ort(moved / "lm.onnx", lm_config(moved), ids)
    assert np.abs(logits - hf(input_ids=torch.from_numpy(ids)).logits.numpy()).max() < TOL


def test_cli_with_fresh_hypernet_and_two_targets(tmp_path, capsys):
    folder = tmp_path / "hf"
    save_checkpoint("qwen2", folder, seed=4)
    code = main(["--from-hf", str(folder), "--out", str(tmp_path / "b"), "--lora-targets", "q,v",
                 "--hypernet", "init", "--id", "tiny-qwen2", "--created", "2025-01-01T00:00:00Z"])
    assert code == 0, capsys.readouterr().err
    m = json.loads((tmp_path / "b" / "bundle.json").read_text())
    assert m["id"] == "tiny-qwen2" and [t["module"] for t in m["lora"]["targets"]] == ["q", "v"]
    assert m["hypernet"]["kind"] == "perceiver" and "hypernet.onnx" in m["files"]
    assert m["training_card"]["hypernet"]["kind"] == "untrained hypernetwork"
    assert m["distill"] == bundle_entry()  # the base's recipe, kept when the hypernetwork is attached
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # staging folders are gone
    sess = ort.InferenceSession(str(tmp_path / "b" / "hypernet.onnx"), providers=["CPUExecutionProvider"])
    outs = dict(zip([o.name for o in sess.get_outputs()],
                    sess.run(None, {"states": np.ones((1, 3, 64), np.float32), "mask": np.ones((1, 3), np.float32)}),
                    strict=True))
    assert outs["B.q"].shape == (2, 12, 64) and not outs["B.q"].any()  # rank 8 + shared 4; fresh: ΔW = 0
    assert main(["--from-hf", str(folder), "--out", str(tmp_path / "b")]) == 1
    assert "b exists (pass" in capsys.readouterr().err


def test_problems_name_the_file(tmp_path):
    folder = tmp_path / "hf"
    save_checkpoint("llama", folder, seed=5)
    opts = FromHfOptions(**OPTS)

    def fails(match: str, exc: type[Exception] = FileNotFoundError):
        with pytest.raises(exc, match=match):
            create_bundle(folder, tmp_path / "out", opts)
        assert not (tmp_path / "out").exists()

    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, "model_type": "gpt2"}))
    fails(r"config\.json: model_type 'gpt2' not supported", ValueError)
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "chat_template.jinja").rename(folder / "elsewhere.jinja")
    fails(r"tokenizer_config\.json: no chat_template", ValueError)
    (folder / "elsewhere.jinja").rename(folder / "chat_template.jinja")
    (folder / "tokenizer.json").rename(folder / "tokenizer.model")
    fails(r"tokenizer\.json: missing \(tokenizer\.model found")
    (folder / "tokenizer.model").rename(folder / "tokenizer.json")
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    fails(r"model\.safetensors: missing.*pytorch_model\.bin found")
    with pytest.raises(ValueError, match="--hypernet .*: trained on a base"):
        (folder / "pytorch_model.bin").rename(folder / "model.safetensors")
        ckpt = tmp_path / "ckpt.pt"
        fake_ckpt(ckpt)
        create_bundle(folder, tmp_path / "out", opts, hypernet=str(ckpt))
    assert not (tmp_path / "out").exists()


def fake_ckpt(path: Path) -> None:
    """A hyper/train.py checkpoint for another base (hidden 48)."""
    from pskills_train.hyper.config import HyperConfig, NetConfig
    from pskills_train.hyper.net import build_hypernet
    from pskills_train.model.config import ModelConfig

    lm_cfg = ModelConfig(vocab_size=64, hidden_size=48, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=12,
                         intermediate_size=64)
    net = build_hypernet(lm_cfg, NetConfig())
    torch.save({"model": net.state_dict(), "config": HyperConfig().to_dict(), "lm_config": lm_cfg.to_dict()}, path)


def test_hyper_training_reads_the_same_chat_template(tmp_path):
    from hf_tiny import CHATML
    from pskills_train.hyper.base import load_base

    folder = tmp_path / "hf"
    save_checkpoint("qwen2", folder, seed=6)
    assert (folder / "chat_template.jinja").exists()  # transformers 5 keeps it beside tokenizer_config.json
    lm, tok, template = load_base(str(folder), "unused")
    assert template == CHATML and tok.get_vocab_size() == 300
    assert lm.cfg.family == "qwen2" and not any(p.requires_grad for p in lm.parameters())
