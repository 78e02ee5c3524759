"""lm.onnx in onnxruntime equals PyTorch (< 1e-4), with r = 0 and r = 8, cached and uncached; both
attentions (ONNX ops, and onnxruntime's fused nodes: export/onnx_attention.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import left_padded_batch
from pskills_train.export.onnx_lm import (
    LMExportConfig,
    example_feeds,
    export_lm,
    graph_feeds,
    graph_names,
    lora_graph_feeds,
)
from pskills_train.model import LlamaLM, ModelConfig, stack_rows

TOL = 1e-4
CFG = ModelConfig(vocab_size=128, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=16,
                  intermediate_size=96, qkv_bias=True, encoder_layer=1, lora_targets=("q", "v", "o", "down"))


@pytest.fixture(scope="module", params=["ops", "fused"])
def exported(tmp_path_factory, request):
    import onnxruntime as ort

    torch.manual_seed(0)
    lm = LlamaLM(CFG).eval()
    with torch.no_grad():  # std 0.02 init leaves attention nearly uniform; sharpen it
        for name, p in lm.named_parameters():
            if "proj" in name:
                p.mul_(5.0)
    path = export_lm(lm, tmp_path_factory.mktemp("onnx") / "lm.onnx", LMExportConfig(attention=request.param))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    sess.pskills_attention, sess.pskills_path = request.param, path  # read by `fused`, `_nodes`
    return lm, sess


def torch_run(lm: LlamaLM, f: dict[str, torch.Tensor]):
    past = [(f[f"past_key_values.{i}.key"], f[f"past_key_values.{i}.value"]) for i in range(lm.cfg.num_layers)]
    lora = {(i, m): (f[f"lora.{i}.{m}.A"], f[f"lora.{i}.{m}.B"])
            for i in range(lm.cfg.num_layers) for m in lm.cfg.lora_targets}  # per module, as training feeds
    with torch.no_grad():
        logits, present, hidden = lm(f["input_ids"], f["attention_mask"], f["position_ids"], past, lora)
    return [logits, *[t for kv in present for t in kv], hidden]


def fused(sess) -> bool:
    return sess.pskills_attention == "fused"


def _nodes(sess):
    import onnx

    return onnx.load(sess.pskills_path).graph.node


def next_past(sess, past: dict[str, torch.Tensor], kv: list[np.ndarray]) -> dict[str, torch.Tensor]:
    """The cache after a step: the present outputs, or (fused attention) the past with the step's keys and
    values appended, as the engine does."""
    if not fused(sess):
        return {name: torch.from_numpy(a) for name, a in zip(past, kv, strict=True)}
    b, hd = kv[0].shape[0], CFG.head_dim
    return {name: torch.cat((p, torch.from_numpy(a).view(b, a.shape[1], -1, hd).transpose(1, 2)), dim=2)
            for (name, p), a in zip(past.items(), kv, strict=True)}


def ort_run(sess, f: dict[str, torch.Tensor]) -> list[np.ndarray]:
    return sess.run(None, {"logits_to_keep": np.zeros(1, np.int64),  # every position
                           **{k: v.numpy() for k, v in graph_feeds(CFG, f).items()}})


def test_graph_io_follows_the_bundle_contract(exported):
    _, sess = exported
    ins = {i.name: i for i in sess.get_inputs()}
    outs = {o.name: o for o in sess.get_outputs()}
    assert list(ins) == graph_names(CFG).inputs
    assert ins["input_ids"].shape == ["batch", "sequence_length"] and ins["input_ids"].type == "tensor(int64)"
    assert ins["attention_mask"].shape == ["batch", "total_sequence_length"]
    assert ins["past_key_values.1.value"].shape == ["batch", 2, "past_sequence_length", 16]
    assert ins["lora.0.qkv.A"].shape == ["batch", 64, "lora_rank_qkv"]  # q and v: 2r slots
    assert ins["lora.0.qkv.B"].shape == ["batch", "lora_rank_qkv", 64 + 2 * 32]  # the fused q|k|v columns
    assert ins["lora.1.down.B"].shape == ["batch", "lora_rank", 64]
    assert not any(n.startswith(("lora.0.q.", "lora.0.k.", "lora.0.v.")) for n in ins)  # grouped
    assert ins["logits_to_keep"].shape == [1] and ins["logits_to_keep"].type == "tensor(int64)"
    assert outs["logits"].shape == ["batch", "logits_length", 128]
    if fused(sess):  # the step's keys: the engine appends them to its own cache
        assert outs["step.0.key"].shape == ["batch", "sequence_length", 2 * 16] and "present.0.key" not in outs
    else:
        assert outs["present.0.key"].shape == ["batch", 2, "total_sequence_length", 16]
    assert outs["hidden_states"].shape == ["batch", "sequence_length", 64]


@pytest.mark.parametrize("past,rank", [(0, 0), (0, 8), (5, 0), (5, 8), (3, 1)])
def test_onnxruntime_matches_pytorch(exported, past, rank):
    lm, sess = exported
    # GroupQueryAttention takes several tokens after a past one row at a time (the engine splits such a batch)
    batch = 1 if past and fused(sess) else 3
    f = example_feeds(CFG, batch=batch, seq=4, past=past, rank=rank, seed=past * 10 + rank)
    names = graph_names(CFG, attention=sess.pskills_attention).outputs
    for name, ref, got in zip(names, torch_run(lm, f), ort_run(sess, f), strict=True):
        if name.startswith("step."):  # this step's part of the cache, [b, s, kv·hd]
            ref = ref[:, :, -4:].transpose(1, 2).reshape(batch, 4, -1)
        assert got.shape == tuple(ref.shape), name
        assert np.abs(got - ref.numpy()).max() < TOL, name


def test_cached_decoding_in_onnxruntime_equals_uncached(exported):
    lm, sess = exported
    ids, mask, pos = left_padded_batch([9, 5, 7], seed=5)
    g = torch.Generator().manual_seed(9)
    rows = [None] + [{(i, m): (torch.randn(CFG.lora_dims(m)[0], r, generator=g) * 0.3,
                               torch.randn(r, CFG.lora_dims(m)[1], generator=g) * 0.3)
                      for i in range(CFG.num_layers) for m in CFG.lora_targets} for r in (8, 3)]
    lora = lora_graph_feeds(CFG, stack_rows(CFG, rows))
    empty_past = {k: v for k, v in example_feeds(CFG, 3, 1, 0, 0).items() if k.startswith("past_key_values.")}

    full = ort_run(sess, {"input_ids": ids, "attention_mask": mask, "position_ids": pos, **empty_past, **lora})
    prefill = 4
    out = ort_run(sess, {"input_ids": ids[:, :prefill], "attention_mask": mask[:, :prefill],
                         "position_ids": pos[:, :prefill], **empty_past, **lora})
    steps = [out[0]]
    n_kv = 2 * CFG.num_layers
    past = empty_past
    for t in range(prefill, ids.shape[1]):
        past = next_past(sess, past, out[1:1 + n_kv])
        out = ort_run(sess, {"input_ids": ids[:, t:t + 1], "attention_mask": mask[:, :t + 1],
                             "position_ids": pos[:, t:t + 1], **past, **lora})
        steps.append(out[0])
    cached = np.concatenate(steps, axis=1)
    real = mask.bool().numpy()
    assert np.abs(cached[real] - full[0][real]).max() < TOL
    plain = ort_run(sess, {"input_ids": ids, "attention_mask": mask, "position_ids": pos, **empty_past,
                           **{k: v[:, :, :0] if k.endswith(".A") else v[:, :0] for k, v in lora.items()}})
    assert np.abs(plain[0][0][real[0]] - full[0][0][real[0]]).max() < TOL  # row 0 had no adapter
    assert np.abs(plain[0][1][real[1]] - full[0][1][real[1]]).max() > 1e-2  # row 1 had one


@pytest.mark.parametrize("keep,want", [(0, 4), (1, 1), (3, 3), (9, 4)])
def test_logits_to_keep_returns_the_last_positions(exported, keep, want):
    _, sess = exported
    batch = 1 if fused(sess) else 2
    f = {k: v.numpy() for k, v in graph_feeds(CFG, example_feeds(CFG, batch, seq=4, past=3, rank=2, seed=7)).items()}
    full = sess.run(["logits"], f)[0]  # example_feeds keeps every position
    kept = sess.run(["logits"], {**f, "logits_to_keep": np.array([keep], np.int64)})[0]
    assert kept.shape == (batch, want, CFG.vocab_size)
    assert np.abs(kept - full[:, -want:]).max() == 0


def test_fused_attention_is_one_node_per_layer(exported):
    _, sess = exported
    ops = [n.op_type for n in _nodes(sess)]
    if not fused(sess):
        assert "GroupQueryAttention" not in ops and "Concat" in ops
        return
    assert ops.count("GroupQueryAttention") == CFG.num_layers
    assert ops.count("RotaryEmbedding") == 2 * CFG.num_layers  # q and k
    assert "Softmax" not in ops and "Concat" not in ops  # the cache is appended inside the node
