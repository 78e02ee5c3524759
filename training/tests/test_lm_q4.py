"""`--weights q4`: lm.onnx's MatMul weights in 4 bits (MatMulNBits), whole train-step graphs still on float32.

A GGUF whose projections are Q4_0 (symmetric 4-bit blocks of 32 along d_in, as MatMulNBits stores them)
requantizes without loss, so its 4-bit lm.onnx in float32 arithmetic must give the float32 bundle's logits
and greedy tokens; other types requantize with an error the bundle's card records."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from gguf import GGMLQuantizationType as Q

from gguf_tiny import LAYERS, write_gguf
from pskills_train.export.bundle_writer import FromHfOptions, ort_feeds
from pskills_train.export.from_gguf import main, write_gguf_bundle
from pskills_train.export.lm_q4 import TRAIN_STEP_DATA, write_float_twin
from pskills_train.export.manifest import sha256_file
from pskills_train.model.config import ModelConfig

OPTS = dict(created="2025-01-01T00:00:00Z")
PROJECTIONS = ["output.weight"] + [f"blk.{i}.{n}.weight" for i in range(LAYERS) for n in
                                   ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")]


def session(path: Path) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def greedy(sess: ort.InferenceSession, cfg: ModelConfig, ids: np.ndarray, n: int) -> tuple[list[int], np.ndarray]:
    """n greedy tokens (no cache: the whole sequence each step) and every step's last logits [n, V]."""
    seen = []
    for _ in range(n):
        logits = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, ort_feeds(cfg, ids)),
                          strict=True))["logits"][:, -1]
        seen.append(logits[0])
        ids = np.concatenate([ids, logits.argmax(-1)[:, None]], axis=1)
    return ids[0, -n:].tolist(), np.stack(seen)


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_q4_of_q4_0_blocks_keeps_the_weights_and_greedy_tokens(tmp_path, variant):
    """Q4_0 projections requantize without loss: lm.onnx's float twin (float32 arithmetic, a tied head back
    on the embedding) gives the float32 bundle's logits and greedy tokens. lm.onnx itself computes with
    int8 activations, a tied head (qwen2) in 8 bits of its own and an untied one (llama) in 4: on this
    random model, whose top logits are near-ties, that moves greedy tokens within a few steps, so its
    logits are held to the card's bound instead (SmolLM2-135M's NLL: docs/results.md)."""
    projections = PROJECTIONS if variant == "llama" else PROJECTIONS[1:]  # qwen2's head is the embedding
    gguf = write_gguf(tmp_path / "q4_0.gguf", variant, seed=1, tensor_type={n: Q.Q4_0 for n in projections})
    fp32 = write_gguf_bundle(gguf, tmp_path / "fp32", FromHfOptions(**OPTS))
    assert main([str(gguf), "--out", str(tmp_path / "q4"), "--weights", "q4", "--train-step-buckets", "none",
                 "--created", OPTS["created"]]) == 0
    q4 = tmp_path / "q4"
    m = json.loads((q4 / "bundle.json").read_text())
    assert sorted(m["files"]) == ["lm.onnx", "tokenizer.json", "tokenizer_config.json"]
    assert m["files"]["lm.onnx"]["sha256"] == sha256_file(q4 / "lm.onnx")
    cfg = ModelConfig.from_dict(m["training_card"]["model"])
    graph = onnx.load(str(q4 / "lm.onnx")).graph
    weights = {t.name for t in graph.initializer}
    nbits = [{a.name: a.i for a in n.attribute} for n in graph.node if n.op_type == "MatMulNBits"]
    assert len(nbits) > 4 * LAYERS and {a["accuracy_level"] for a in nbits} == {4}  # the projections and the head
    (head,) = [a for a in nbits if a["N"] == cfg.vocab_size]
    assert head["bits"] == (8 if cfg.tie_embeddings else 4) and cfg.tie_embeddings == (variant == "qwen2")
    assert not [n.name for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    assert "lm.model.embed_tokens.weight" in weights  # the Gather's float32 embedding, beside a tied head's copy
    assert (q4 / "lm.onnx").stat().st_size < (fp32 / "lm.onnx").stat().st_size / 2
    card = m["training_card"]["lm_weights"]
    assert card["accuracy_level"] == 4 and card["tied_head_bits"] == (8 if cfg.tie_embeddings else None)
    assert 0 < card["logits_vs_float32_max_rel"] < 0.1  # int8 activations (and a tied head's 8 bits) only

    (twin,) = write_float_twin(q4 / "lm.onnx", tmp_path / "twin.onnx")
    a, c = session(fp32 / "lm.onnx"), session(twin)
    rng = np.random.default_rng(0)
    for _ in range(3):
        prompt = rng.integers(3, 300, (1, 6), dtype=np.int64)
        tokens_a, logits_a = greedy(a, cfg, prompt, 10)
        tokens_c, logits_c = greedy(c, cfg, prompt, 10)
        assert tokens_a == tokens_c
        assert np.abs(logits_a - logits_c).max() <= 1e-4


def test_q4_train_steps_read_the_float32_weights(tmp_path):
    gguf = write_gguf(tmp_path / "tiny.gguf", "llama", seed=1)  # Q8_0, Q4_1, F16, BF16: a lossy requantization
    opts = dict(OPTS, train_buckets=((2, 16),), train_kind="whole")  # layered: test_train_layers.py
    fp32 = write_gguf_bundle(gguf, tmp_path / "fp32", FromHfOptions(**opts))
    q4 = write_gguf_bundle(gguf, tmp_path / "q4", FromHfOptions(**opts, weights="q4"))
    m = json.loads((q4 / "bundle.json").read_text())
    assert m["files"][TRAIN_STEP_DATA]["sha256"] == sha256_file(q4 / TRAIN_STEP_DATA)
    assert 0 < m["training_card"]["lm_weights"]["logits_vs_float32_max_rel"] < 1
    (bucket,) = m["train_step"]["buckets"]
    graph = onnx.load(str(q4 / bucket["file"]), load_external_data=False)
    locations = {e.value for t in graph.graph.initializer for e in t.external_data if e.key == "location"}
    assert locations == {TRAIN_STEP_DATA}
    # the same float32 tensors as the float32 bundle's graph, which reads them from its lm.onnx
    want = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(str(fp32 / bucket["file"])).graph.initializer}
    got = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(str(q4 / bucket["file"])).graph.initializer}
    assert want.keys() == got.keys() and all(np.array_equal(want[k], got[k]) for k in want)
    session(q4 / bucket["file"])  # loads from its path, external data and all


def test_q4_needs_float32_storage(tmp_path):
    gguf = write_gguf(tmp_path / "tiny.gguf", "llama", seed=1)
    with pytest.raises(ValueError, match="--weights q4 .* --dtype fp32"):
        write_gguf_bundle(gguf, tmp_path / "b", FromHfOptions(**OPTS, dtype="fp16", weights="q4"))


def test_q4_tied_head_copy_is_invisible_to_layered_train_steps(tmp_path):
    """A tied head's 8-bit copy is lm.onnx's alone: layered train steps (exported after requantizing, checked
    against lm.onnx's float twin) still read the head as the float32 embedding, and list no extra projection."""
    gguf = write_gguf(tmp_path / "m.gguf", "qwen2", seed=1)
    assert main([str(gguf), "--out", str(tmp_path / "b"), "--weights", "q4", "--train-step-buckets", "1x16",
                 "--created", OPTS["created"]]) == 0
    m = json.loads((tmp_path / "b" / "bundle.json").read_text())
    w = m["train_step"]["weights"]
    assert m["train_step"]["kind"] == "layered" and m["training_card"]["lm_weights"]["tied_head_bits"] == 8
    assert w["head"]["lm_head.weight"] == w["embed"] and w["embed"]["dtype"] == "float32"
    assert len(w["layers"]) == LAYERS
