"""`--weights q4`: lm.onnx's MatMul weights in 4 bits (MatMulNBits), whole train-step graphs still on float32.

A GGUF whose projections are Q4_0 (symmetric 4-bit blocks of 32 along d_in, as MatMulNBits stores them)
requantizes without loss, so its 4-bit lm.onnx must give the float32 bundle's logits and greedy tokens;
other types requantize with an error the bundle's card records."""

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
from pskills_train.export.lm_q4 import TRAIN_STEP_DATA
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


def test_q4_of_q4_0_blocks_keeps_the_logits_and_greedy_tokens(tmp_path):
    gguf = write_gguf(tmp_path / "q4_0.gguf", "llama", seed=1, tensor_type={n: Q.Q4_0 for n in PROJECTIONS})
    fp32 = write_gguf_bundle(gguf, tmp_path / "fp32", FromHfOptions(**OPTS))
    assert main([str(gguf), "--out", str(tmp_path / "q4"), "--weights", "q4", "--train-step-buckets", "none",
                 "--created", OPTS["created"]]) == 0
    q4 = tmp_path / "q4"
    m = json.loads((q4 / "bundle.json").read_text())
    assert sorted(m["files"]) == ["lm.onnx", "tokenizer.json", "tokenizer_config.json"]
    assert m["files"]["lm.onnx"]["sha256"] == sha256_file(q4 / "lm.onnx")
    graph = onnx.load(str(q4 / "lm.onnx")).graph
    weights = {t.name for t in graph.initializer}
    assert sum(n.op_type == "MatMulNBits" for n in graph.node) > 4 * LAYERS  # the projections, the untied head
    assert not [n.name for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    assert (q4 / "lm.onnx").stat().st_size < (fp32 / "lm.onnx").stat().st_size / 2
    assert m["training_card"]["lm_weights"]["logits_vs_float32_max_rel"] < 1e-5

    cfg = ModelConfig.from_dict(m["training_card"]["model"])
    a, b = session(fp32 / "lm.onnx"), session(q4 / "lm.onnx")
    rng = np.random.default_rng(0)
    for _ in range(3):
        prompt = rng.integers(3, 300, (1, 6), dtype=np.int64)
        tokens_a, logits_a = greedy(a, cfg, prompt, 10)
        tokens_b, logits_b = greedy(b, cfg, prompt, 10)
        assert tokens_a == tokens_b
        assert np.abs(logits_a - logits_b).max() <= 1e-4


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
