"""LoRA as inputs equals PEFT LoRA on the HF model, per row, including mixed batches and r = 0."""

from __future__ import annotations

import copy

import pytest
import torch

from conftest import left_padded_batch
from pskills_train.model import from_peft, stack_rows, zero_lora

TOL = 1e-4
ADAPTERS = {  # name -> (r, alpha, PEFT target modules)
    "s1": (4, 8, ["q_proj", "v_proj", "o_proj", "up_proj", "down_proj"]),
    "s2": (2, 3, ["k_proj", "gate_proj", "down_proj", "q_proj"]),
}


def maxdiff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


@pytest.fixture(scope="module")
def peft_pair(hf_pair):
    """(PEFT model holding adapters s1 and s2 with random nonzero A and B, our model, our rows)."""
    from peft import LoraConfig, get_peft_model, get_peft_model_state_dict

    hf, ours, _ = hf_pair
    peft_model = None
    for name, (r, alpha, targets) in ADAPTERS.items():
        lc = LoraConfig(r=r, lora_alpha=alpha, target_modules=targets, lora_dropout=0.0)
        if peft_model is None:
            peft_model = get_peft_model(copy.deepcopy(hf), lc, adapter_name=name)
        else:
            peft_model.add_adapter(name, lc)
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():  # PEFT inits lora_B to zero; make every factor nonzero
        for pname, p in peft_model.named_parameters():
            if "lora_" in pname:
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    peft_model.eval()
    rows = {}
    for name, (r, alpha, _) in ADAPTERS.items():
        state = get_peft_model_state_dict(peft_model, adapter_name=name)
        rows[name] = from_peft(state, scale=alpha / r, num_layers=ours.cfg.num_layers)
        assert len(rows[name]) == ours.cfg.num_layers * len(ADAPTERS[name][2])
    return peft_model, ours, rows


@torch.no_grad()
@pytest.mark.parametrize("name", list(ADAPTERS))
def test_single_adapter_matches_peft(peft_pair, name):
    peft_model, ours, rows = peft_pair
    ids, mask, pos = left_padded_batch([9, 9, 5])
    peft_model.set_adapter(name)
    ref = peft_model(input_ids=ids, attention_mask=mask, position_ids=pos).logits
    logits, _, _ = ours(ids, mask, pos, lora=stack_rows(ours.cfg, [rows[name]] * 3))
    base, _, _ = ours(ids, mask, pos)
    real = mask.bool()
    assert maxdiff(logits[real], ref[real]) < TOL
    assert maxdiff(logits[real], base[real]) > 1e-2  # the adapter really changes the output


@torch.no_grad()
def test_mixed_batch_equals_rows_run_separately(peft_pair):
    peft_model, ours, rows = peft_pair
    names = ["s1", None, "s2", "s1"]
    ids, mask, pos = left_padded_batch([7, 9, 9, 4], seed=3)
    lora = stack_rows(ours.cfg, [rows[n] if n else None for n in names])
    assert lora[(0, "q")][0].shape == (4, 64, 4)  # padded to the largest rank
    logits, _, _ = ours(ids, mask, pos, lora=lora)
    for r, n in enumerate(names):
        keep = mask[r].bool()
        alone, _, _ = ours(ids[r:r + 1, keep], lora=stack_rows(ours.cfg, [rows[n] if n else None]))
        assert maxdiff(logits[r, keep], alone[0]) < TOL
        if n is None:
            with peft_model.disable_adapter():
                ref = peft_model(input_ids=ids[r:r + 1, keep]).logits
        else:
            peft_model.set_adapter(n)
            ref = peft_model(input_ids=ids[r:r + 1, keep]).logits
        assert maxdiff(logits[r, keep], ref[0]) < TOL, (r, n)


@torch.no_grad()
def test_rank_zero_is_no_adapter(peft_pair):
    _, ours, _ = peft_pair
    ids, mask, pos = left_padded_batch([6, 3])
    base, _, _ = ours(ids, mask, pos)
    empty = zero_lora(ours.cfg, batch=2, rank=0)
    assert empty[(0, "down")][0].shape == (2, ours.cfg.intermediate_size, 0)
    logits, _, _ = ours(ids, mask, pos, lora=empty)
    assert torch.equal(logits, base)
    assert stack_rows(ours.cfg, [None, None])[(1, "v")][1].shape[1] == 0


@torch.no_grad()
def test_kv_cache_decoding_with_adapters(peft_pair):
    _, ours, rows = peft_pair
    ids, mask, pos = left_padded_batch([8, 5], seed=4)
    lora = stack_rows(ours.cfg, [rows["s1"], rows["s2"]])
    full, _, _ = ours(ids, mask, pos, lora=lora)
    logits, past, _ = ours(ids[:, :4], mask[:, :4], pos[:, :4], lora=lora)
    steps = [logits]
    for t in range(4, ids.shape[1]):
        logits, past, _ = ours(ids[:, t:t + 1], mask[:, :t + 1], pos[:, t:t + 1], past, lora=lora)
        steps.append(logits)
    real = mask.bool()
    assert maxdiff(torch.cat(steps, 1)[real], full[real]) < TOL


def test_gradients_reach_adapter_inputs_not_base(peft_pair):
    _, ours, rows = peft_pair
    ids, mask, pos = left_padded_batch([6, 6])
    lora = {k: (a.clone().requires_grad_(), b.clone().requires_grad_())
            for k, (a, b) in stack_rows(ours.cfg, [rows["s1"], rows["s1"]]).items()}
    for p in ours.parameters():
        p.requires_grad_(False)
    logits, _, _ = ours(ids, mask, pos, lora=lora)
    logits.logsumexp(-1).mean().backward()
    a, b = lora[(0, "q")]
    assert a.grad is not None and a.grad.abs().sum() > 0 and b.grad.abs().sum() > 0
    assert all(p.grad is None for p in ours.parameters())
