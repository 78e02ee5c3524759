"""Bundles from tiny GGUF files the tests write (gguf_tiny.py): onnxruntime's lm.onnx against transformers'
own GGUF loading of the same file (greedy tokens identical, max |Δlogit| ≤ 1e-3), the tokenizer rebuilt
from the metadata against the one the file was made from, and bad input refused by name before any work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch
from tokenizers import Tokenizer

from gguf_tiny import VARIANTS, _permute, write_gguf
from hf_tiny import build_tokenizer
from pskills_train.distill_recipe import bundle_entry
from pskills_train.export.bundle_writer import FromHfOptions, ort_feeds
from pskills_train.export.from_gguf import GGUFError, _unpermute, check_resources, load_gguf, main, write_gguf_bundle
from pskills_train.model.config import ModelConfig

TOL = 1e-3
OPTS = dict(created="2025-01-01T00:00:00Z")
NEW_TOKENS = 10


@pytest.fixture(scope="module", params=VARIANTS)
def gguf_file(request, tmp_path_factory) -> tuple[str, Path]:
    folder = tmp_path_factory.mktemp(request.param)
    return request.param, write_gguf(folder / "tiny.gguf", request.param, seed=1)


def session(path: Path) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def ort_logits(sess: ort.InferenceSession, cfg: ModelConfig, ids: np.ndarray) -> np.ndarray:
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, ort_feeds(cfg, ids)), strict=True))["logits"]


@torch.no_grad()
def test_bundle_equals_transformers_gguf_loading(gguf_file, tmp_path):
    import transformers

    variant, path = gguf_file
    out = write_gguf_bundle(path, tmp_path / "b", FromHfOptions(**OPTS))
    m = json.loads((out / "bundle.json").read_text())
    assert m["architecture"]["family"] == ("qwen2" if variant == "qwen2" else "llama")
    assert m["architecture"]["qkv_bias"] == (variant == "qwen2")
    assert m["architecture"]["tie_embeddings"] == (variant == "qwen2")
    assert m["hypernet"] is None and m["tokenizer"]["vocab_size"] == 300 and m["architecture"]["vocab"] == 320
    card = m["training_card"]
    assert card["kind"] == "gguf" and card["source"] == "tiny.gguf"
    want_types = {"llama": {"Q8_0", "Q4_0", "Q4_1", "F16", "BF16", "F32"}, "qwen2": {"Q8_0", "F16", "F32"},
                  "kquant": {"Q4_K", "Q6_K"}}[variant]
    assert want_types <= set(card["gguf"]["tensor_types"])
    cfg = ModelConfig.from_dict(card["model"])

    hf = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                           attn_implementation="eager").eval()
    sess = session(out / "lm.onnx")
    ids = np.array([[5, 17, 42, 99, 250, 3, 77, 120]], np.int64)
    ref = hf(input_ids=torch.from_numpy(ids)).logits.numpy()
    got = ort_logits(sess, cfg, ids)
    assert np.abs(got - ref).max() <= TOL

    # greedy decoding, both sides from the same prompt
    hf_ids = hf.generate(torch.from_numpy(ids), max_new_tokens=NEW_TOKENS, do_sample=False,
                         eos_token_id=None, pad_token_id=0)[0, ids.shape[1]:].tolist()
    seq, worst = ids, 0.0
    for _ in range(NEW_TOKENS):
        logits = ort_logits(sess, cfg, seq)[:, -1]
        worst = max(worst, float(np.abs(logits - hf(input_ids=torch.from_numpy(seq)).logits[:, -1].numpy()).max()))
        seq = np.concatenate([seq, logits.argmax(-1)[:, None]], axis=1)
    assert seq[0, ids.shape[1]:].tolist() == hf_ids
    assert worst <= TOL


@torch.no_grad()
def test_mistral_file_is_the_mistral_family_and_equals_transformers(tmp_path):
    """llama.cpp writes Mistral as architecture 'llama', named in general.name; the bundle says family
    mistral, and its logits equal transformers' loading of the file (as Llama: full causal attention,
    which is how llama.cpp runs it)."""
    import transformers

    path = write_gguf(tmp_path / "m.gguf", "llama", seed=2, name="Mistral-7B-Instruct-v0.3")
    out = write_gguf_bundle(path, tmp_path / "b", FromHfOptions(**OPTS))
    m = json.loads((out / "bundle.json").read_text())
    assert m["architecture"]["family"] == "mistral"
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file=path.name,
                                                           attn_implementation="eager").eval()
    ids = np.array([[5, 17, 42, 99, 250, 3, 77, 120]], np.int64)
    ref = hf(input_ids=torch.from_numpy(ids)).logits.numpy()
    got = ort_logits(session(out / "lm.onnx"), ModelConfig.from_dict(m["training_card"]["model"]), ids)
    assert np.abs(got - ref).max() <= TOL
    assert np.array_equal(got.argmax(-1), ref.argmax(-1))


def test_llama_rows_unpermuted():
    w = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    assert np.array_equal(_unpermute(_permute(w, 4), 4), w)
    assert not np.array_equal(_permute(w, 4), w)


def test_tokenizer_and_chat_template_from_metadata(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", "llama")
    out = write_gguf_bundle(path, tmp_path / "b", FromHfOptions(**OPTS))
    ours, source = Tokenizer.from_file(str(out / "tokenizer.json")), build_tokenizer()
    for text in ["review the branch before merge.", "  check 12 tests!\n\nread<|im_end|>x", "émoji 🙂 ok"]:
        assert ours.encode(text).ids == source.encode(text).ids, text
        assert ours.decode(ours.encode(text).ids, skip_special_tokens=False) == text
    tcfg = json.loads((out / "tokenizer_config.json").read_text())
    assert "<|im_start|>" in tcfg["chat_template"] and tcfg["eos_token"] == "<|im_end|>"
    m = json.loads((out / "bundle.json").read_text())
    assert m["special_tokens"]["eos"] == source.token_to_id("<|im_end|>")
    assert m["special_tokens"]["pad"] == source.token_to_id("<|endoftext|>")
    assert source.token_to_id("<|endoftext|>") in m["special_tokens"]["stop"]


def test_cli_writes_bundle_with_train_step(tmp_path, capsys):
    path = write_gguf(tmp_path / "m.gguf", "qwen2")
    assert main([str(path), "--created", "2025-01-01T00:00:00Z", "--train-step-buckets", "1x16"]) == 0
    out = tmp_path / "m"  # default: beside the file, without .gguf
    m = json.loads((out / "bundle.json").read_text())
    assert m["train_step"]["kind"] == "layered"  # bundle create's default (export/train_layers.py)
    assert {"train_layer-1x16.onnx", "train_layer_vjp-1x16.onnx", "train_head-1x16.onnx"} <= set(m["files"])
    assert "self_attn.qkv_proj.bias" in m["train_step"]["weights"]["layers"][0]  # qwen2's q|k|v bias is an input
    assert m["train_step"]["parity"]["factors_max_abs"] <= 1e-5
    assert m["distill"] == bundle_entry()  # the distil recipe (docs/bundle-format.md "distill")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m", "m.gguf"]  # nothing staged left behind
    assert "qwen2 from m.gguf" in capsys.readouterr().out
    assert main([str(path)]) == 1  # exists, no --force
    assert "exists" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- bad input


def expect_refusal(path: Path, tmp_path: Path, match: str, capsys) -> None:
    out = tmp_path / "bundle"
    assert main([str(path), "--out", str(out), "--train-step-buckets", "none"]) == 1
    err = capsys.readouterr().err
    assert "\nerror: " in err and re.search(match, err), err
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".gguf") == []  # nothing half-built


@pytest.mark.parametrize("cut, match", [
    (0.0005, r"truncated at byte [\d,]+, in the name that follows metadata key 'general\.\w+'"),
    (0.02, r"metadata key 'tokenizer\.ggml\.(tokens|token_type|merges)'"),
    (0.9, r"tensor '(output\.weight|blk\.1\.[\w.]+)' lies outside the file: it ends at byte [\d,]+, the file has "
           r"[\d,]+ bytes"),
])
def test_truncated_file_names_the_key_or_tensor(tmp_path, capsys, cut, match):
    full = write_gguf(tmp_path / "full.gguf", "llama").read_bytes()
    bad = tmp_path / "cut.gguf"
    bad.write_bytes(full[:max(30, int(len(full) * cut))])
    (tmp_path / "full.gguf").unlink()
    expect_refusal(bad, tmp_path, match, capsys)


def test_unknown_architecture_names_the_key(tmp_path, capsys):
    path = write_gguf(tmp_path / "g.gguf", "llama", arch="gpt2")
    expect_refusal(path, tmp_path, r"general\.architecture 'gpt2' is not supported \(supported: llama, qwen2", capsys)


def test_unsupported_quant_type_names_the_tensor(tmp_path, capsys):
    from gguf import GGMLQuantizationType as Q

    path = write_gguf(tmp_path / "q.gguf", "llama", tensor_type={"blk.1.ffn_up.weight": Q.Q8_1})
    expect_refusal(path, tmp_path, r"tensor 'blk\.1\.ffn_up\.weight' has quantization type Q8_1, which is not "
                   r"supported", capsys)


def test_not_a_gguf(tmp_path, capsys):
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"PK\x03\x04" + bytes(100))
    expect_refusal(bad, tmp_path, r"not a GGUF file", capsys)


def test_too_big_for_memory_or_disk_is_refused_with_numbers(tmp_path):
    path = tmp_path / "m.gguf"
    # 2.2 GB + 1.75 × 4 GB; with 10⁸ logits of a whole step's tracing, 160 bytes each on top
    with pytest.raises(GGUFError, match=r"1,000\.0 M parameters \(4\.00 GB as float32\): building the bundle needs "
                       r"about 9\.20 GB of memory, 2\.00 GB is available"):
        check_resources(path, tmp_path / "out", 10**9, free_memory=2 * 10**9, free_disk=10**12)
    with pytest.raises(GGUFError, match=r"with its train-step graphs .* needs about 25\.20 GB of memory"):
        check_resources(path, tmp_path / "out", 10**9, 10**8, free_memory=20 * 10**9, free_disk=10**12)
    with pytest.raises(GGUFError, match=r"needs about 8\.00 GB of disk in .*, 1\.00 GB is free"):
        check_resources(path, tmp_path / "out", 10**9, free_memory=10**12, free_disk=10**9)
    check_resources(path, tmp_path / "out", 10**6)  # a tiny model fits


def test_refused_before_dequantizing(tmp_path, monkeypatch):
    import pskills_train.export.from_gguf as fg
    import pskills_train.export.gguf_resources as resources

    path = write_gguf(tmp_path / "m.gguf", "llama")
    monkeypatch.setattr(resources, "mem_available", lambda: 1000)
    monkeypatch.setattr(fg, "build_lm", lambda *a: pytest.fail("dequantized before the resource check"))
    with pytest.raises(GGUFError, match=r"GB of memory, 0\.00 GB is available"):
        load_gguf(path, tmp_path / "out", FromHfOptions())


def test_sentencepiece_tokenizer_equals_transformers(tmp_path):
    """Llama 2 / Mistral GGUFs carry a SentencePiece vocabulary with scores and no merges."""
    import transformers

    path = write_gguf(tmp_path / "s.gguf", "llama", spm=True)
    src = load_gguf(path, tmp_path / "out", FromHfOptions())
    ours = Tokenizer.from_str(src.tokenizer_json.decode())
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    for text in ["review the branch before merge.", " check  tests", "Zebra café 🙂\nok", "answer<s>rule</s>"]:
        assert ours.encode(text).ids == theirs(text, add_special_tokens=False)["input_ids"], text
    assert ours.decode(ours.encode("Zebra café 🙂\nok").ids) == "Zebra café 🙂\nok"  # byte fallback round trip
    assert src.special == {"bos": 1, "eos": 2, "pad": 2, "stop": [2]}
    assert src.tokenizer_config["add_bos_token"] is True


def test_llama3_rope_recovered_from_rope_freqs(tmp_path):
    """llama.cpp stores Llama 3.1's RoPE scaling only as per-frequency factors (rope_freqs.weight)."""
    from dataclasses import replace

    from pskills_train.model.layers import rope_inv_freq

    sc = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
    base = ModelConfig(hidden_size=64, num_heads=4, num_kv_heads=2, head_dim=16, rope_theta=1e4)
    factors = (rope_inv_freq(base) / rope_inv_freq(replace(base, rope_scaling=sc))).numpy()
    assert 1.0 < factors.max() and factors.min() == 1.0  # some frequencies scaled, some not
    path = write_gguf(tmp_path / "r.gguf", "llama", rope_freqs=factors)
    src = load_gguf(path, tmp_path / "out", FromHfOptions())
    assert src.lm.cfg.rope_scaling == sc
    # The gate's own factors (pure Python, checked before torch loads) are torch's within 1e-5.
    from pskills_train.export.gguf_gate import llama3_factors

    assert np.allclose(llama3_factors(1e4, 16, 8.0, 1.0, 4.0, 8192), factors, rtol=1e-5)
    bad = write_gguf(tmp_path / "bad.gguf", "llama", rope_freqs=factors[::-1].copy())
    with pytest.raises(GGUFError, match=r"tensor 'rope_freqs\.weight' holds RoPE factors that match no llama3"):
        load_gguf(bad, tmp_path / "out", FromHfOptions())
