"""Our LlamaLM loaded from HF safetensors equals transformers' own model (fp32, max abs < 1e-4)."""

from __future__ import annotations

import torch

from conftest import left_padded_batch

TOL = 1e-4


def maxdiff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


@torch.no_grad()
def test_logits_and_hidden_states_match(hf_pair):
    hf, ours, _ = hf_pair
    ids, mask, pos = left_padded_batch([12, 12])
    ref = hf(input_ids=ids, attention_mask=mask, position_ids=pos, output_hidden_states=True)
    logits, present, hidden = ours(ids, mask, pos)
    assert logits.shape == ref.logits.shape
    assert maxdiff(logits, ref.logits) < TOL
    assert maxdiff(hidden, ref.hidden_states[1]) < TOL  # encoder_layer=1: after the first decoder layer
    assert len(present) == ours.cfg.num_layers
    assert present[0][0].shape == (2, ours.cfg.num_kv_heads, 12, ours.cfg.head_dim)


@torch.no_grad()
def test_left_padded_batch_matches_hf_and_unpadded_rows(hf_pair):
    hf, ours, _ = hf_pair
    lengths = [11, 4, 8]
    ids, mask, pos = left_padded_batch(lengths)
    ref = hf(input_ids=ids, attention_mask=mask, position_ids=pos).logits
    logits, _, _ = ours(ids, mask, pos)
    real = mask.bool()
    assert maxdiff(logits[real], ref[real]) < TOL
    for r, n in enumerate(lengths):  # each row alone, no padding at all
        alone, _, _ = ours(ids[r:r + 1, -n:])
        assert maxdiff(logits[r, -n:], alone[0]) < TOL


@torch.no_grad()
def test_kv_cache_decoding_equals_full_forward(hf_pair):
    _, ours, _ = hf_pair
    lengths = [10, 6]
    ids, mask, pos = left_padded_batch(lengths)
    full, _, _ = ours(ids, mask, pos)
    prefill = 5
    logits, past, _ = ours(ids[:, :prefill], mask[:, :prefill], pos[:, :prefill])
    steps = [logits]
    for t in range(prefill, ids.shape[1]):  # one token at a time; the mask covers past + current
        logits, past, _ = ours(ids[:, t:t + 1], mask[:, :t + 1], pos[:, t:t + 1], past)
        steps.append(logits)
    cached = torch.cat(steps, dim=1)
    real = mask.bool()
    assert maxdiff(cached[real], full[real]) < TOL


def test_tied_and_untied_heads_load_as_saved(hf_pair):
    hf, ours, _ = hf_pair
    tied = ours.cfg.tie_embeddings
    assert (ours.lm_head.weight is ours.model.embed_tokens.weight) == tied
    assert torch.equal(ours.lm_head.weight, hf.lm_head.weight)
