"""Model pieces on their own: config checks, adapter batching helpers, encoder layer choice, bf16."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pskills_train.model import LlamaLM, ModelConfig, from_peft, stack_rows, to_peft
from pskills_train.model.layers import attention_mask_4d

SMALL = dict(vocab_size=64, hidden_size=32, num_layers=3, num_heads=4, num_kv_heads=1, head_dim=8,
             intermediate_size=48)


def random_row(cfg: ModelConfig, rank: int, seed: int, targets=None):
    g = torch.Generator().manual_seed(seed)
    row = {}
    for i in range(cfg.num_layers):
        for m in targets or cfg.lora_targets:
            d_in, d_out = cfg.lora_dims(m)
            row[(i, m)] = (torch.randn(d_in, rank, generator=g), torch.randn(rank, d_out, generator=g))
    return row


def test_defaults_are_the_shipped_base():
    card = json.loads((Path(__file__).resolve().parents[2] / "resources/bundles/default/bundle.json").read_text())
    assert ModelConfig.from_dict(card["training_card"]["model"]) == ModelConfig()


def test_config_rejects_what_the_model_cannot_build():
    with pytest.raises(ValueError, match="num_kv_heads"):
        ModelConfig(**{**SMALL, "num_kv_heads": 3})
    with pytest.raises(ValueError, match="unknown lora_targets"):
        ModelConfig(**SMALL, lora_targets=("q", "qkv"))
    with pytest.raises(ValueError, match="rope_type 'yarn'"):
        ModelConfig(**SMALL, rope_scaling={"rope_type": "yarn", "factor": 2.0})
    with pytest.raises(ValueError, match="encoder_layer"):
        ModelConfig(**SMALL, encoder_layer=4)
    cfg = ModelConfig(**SMALL)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    assert cfg.lora_dims("o") == (32, 32) and cfg.lora_dims("k") == (32, 8) and cfg.lora_dims("down") == (48, 32)


def test_stack_rows_pads_ranks_with_exact_zeros_and_checks_keys():
    cfg = ModelConfig(**SMALL)
    row = random_row(cfg, 3, seed=0, targets=("q", "down"))
    out = stack_rows(cfg, [row, None])
    a, b = out[(2, "q")]
    assert a.shape == (2, 32, 3) and b.shape == (2, 3, 32)
    assert torch.equal(a[0], row[(2, "q")][0]) and not a[1].any() and not b[1].any()
    assert not out[(0, "k")][0].any()  # module the row does not adapt: zeros
    with pytest.raises(KeyError, match="not a LoRA target"):
        stack_rows(ModelConfig(**SMALL, lora_targets=("v",)), [row])
    with pytest.raises(ValueError, match="do not fit"):
        stack_rows(cfg, [{(0, "k"): row[(0, "q")]}])


def test_peft_key_round_trip():
    cfg = ModelConfig(**SMALL)
    row = random_row(cfg, 2, seed=1, targets=("v", "gate"))
    state = to_peft(row)
    assert state["base_model.model.model.layers.1.mlp.gate_proj.lora_A.weight"].shape == (2, 32)
    back = from_peft(state, scale=1.0, num_layers=cfg.num_layers)
    assert back.keys() == row.keys() and all(torch.equal(back[k][0], row[k][0]) for k in row)
    half = from_peft(state, scale=0.5, num_layers=cfg.num_layers)
    assert torch.equal(half[(0, "v")][0], 0.5 * row[(0, "v")][0]) and torch.equal(half[(0, "v")][1], row[(0, "v")][1])


@torch.no_grad()
@pytest.mark.parametrize("layer", [0, 2, 3])
def test_hidden_states_is_the_configured_residual_stream(layer):
    torch.manual_seed(0)
    lm = LlamaLM(ModelConfig(**SMALL, encoder_layer=layer)).eval()
    ids = torch.randint(0, 64, (2, 5))
    _, _, hidden = lm(ids)
    x = lm.model.embed_tokens(ids)  # [b, s, d]
    cos, sin = lm.model.rotary(torch.arange(5).expand(2, 5), x.dtype)
    mask = attention_mask_4d(torch.ones(2, 5, dtype=torch.int64), 5, x.dtype)
    states = [x]
    for block in lm.model.layers:
        states.append(block(states[-1], cos, sin, mask, None, {})[0])
    states[-1] = lm.model.norm(states[-1])  # as HF: the last hidden state is post-norm
    assert torch.allclose(hidden, states[layer], atol=1e-6)


@torch.no_grad()
def test_bfloat16_forward_with_adapters_is_close_to_fp32():
    cfg = ModelConfig(**SMALL)
    torch.manual_seed(0)
    lm = LlamaLM(cfg).eval()
    ids = torch.randint(0, 64, (2, 6))
    lora = stack_rows(cfg, [random_row(cfg, 4, seed=2), None])
    ref, _, _ = lm(ids, lora=lora)
    got, _, _ = lm.to(torch.bfloat16)(ids, lora=lora)
    assert got.dtype == torch.bfloat16 and torch.isfinite(got).all()
    assert (got.float() - ref).abs().max() < 0.05 * ref.abs().max()
    assert lm.model.rotary.inv_freq.dtype == torch.float32  # RoPE frequencies are never rounded
