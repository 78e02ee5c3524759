"""Checkpoint I/O: sharded HF checkpoints, our own checkpoints read back by transformers, clear errors."""

from __future__ import annotations

import json

import pytest
import torch

from conftest import build_hf, left_padded_batch
from pskills_train.model import LlamaLM, ModelConfig, load_hf, save_hf


@torch.no_grad()
def test_sharded_checkpoint_loads(tmp_path):
    hf = build_hf("qwen2", seed=3)
    hf.save_pretrained(tmp_path, max_shard_size="40KB")
    assert (tmp_path / "model.safetensors.index.json").exists()
    ours = load_hf(tmp_path)
    ids, mask, pos = left_padded_batch([5, 8])
    ref = hf(input_ids=ids, attention_mask=mask, position_ids=pos).logits
    assert (ours(ids, mask, pos)[0] - ref).abs()[mask.bool()].max() < 1e-4


@torch.no_grad()
@pytest.mark.parametrize("family,tied", [("llama", True), ("qwen2", False), ("mistral", False)])
def test_our_checkpoint_reads_back_in_transformers(tmp_path, family, tied):
    import transformers

    cfg = ModelConfig(vocab_size=96, hidden_size=48, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=12,
                      intermediate_size=80, family=family, tie_embeddings=tied, qkv_bias=family == "qwen2")
    torch.manual_seed(0)
    ours = LlamaLM(cfg).eval()
    save_hf(ours, tmp_path)
    hf = transformers.AutoModelForCausalLM.from_pretrained(tmp_path, attn_implementation="eager").eval()
    ids = torch.randint(0, 96, (2, 7))
    assert (ours(ids)[0] - hf(input_ids=ids).logits).abs().max() < 1e-4
    again = load_hf(tmp_path)
    assert again.cfg.tie_embeddings == tied and torch.equal(again(ids)[0], ours(ids)[0])


def test_unsupported_and_broken_checkpoints_name_the_problem(tmp_path):
    hf = build_hf("llama")
    hf.save_pretrained(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "model_type": "gpt2"}))
    with pytest.raises(ValueError, match=r"config\.json: model_type 'gpt2' not supported"):
        load_hf(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "intermediate_size": 100}))
    with pytest.raises(ValueError, match="mlp.gate_proj.weight has shape"):
        load_hf(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "num_hidden_layers": 3}))
    with pytest.raises(KeyError, match="missing keys"):
        load_hf(tmp_path)
