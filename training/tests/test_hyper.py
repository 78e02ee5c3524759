"""Hypernetwork: chunking, encoder, compile paths, stage-1/2 examples, training, resume (frozen_tiny models)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from pskills_train.hyper.compile import (
    batch_adapters,
    chunk_spans,
    compile_ids,
    compile_skill,
    encode_ids,
    encode_states,
)
from pskills_train.hyper.config import HyperConfig, NetConfig
from pskills_train.hyper.examples import Stage1Builder, chat_example, render_chat, sections
from pskills_train.hyper.net import build_hypernet, perturb
from pskills_train.hyper.trainer import HyperTrainer
from pskills_train.model import stack_rows
from pskills_train.tokenizer import CHAT_TEMPLATE, synthetic_corpus

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
SMALL = NetConfig(rank=2, width=32, heads=2, blocks=1)

SKILL = """---
name: review-branch
description: Review a branch before merging it.
---

# Review a branch

Use this skill when a branch is ready.

## Steps

1. Check the tests before you merge the branch.
2. Read each commit and never skip the errors.

```sh
# not a heading: inside a fence
git log
```

## Pitfalls

Never merge a branch whose tests fail; always read the output first.
"""


def tiny_cfg(tmp: Path, **net) -> HyperConfig:
    cfg = HyperConfig.from_dict({
        "net": {**SMALL.__dict__, **net},
        "encoder": {"token_budget": 16, "chunk_overlap": 4},
        "data": {"max_skill_tokens": 48, "target_window": 24, "max_seq": 64, "val_examples": 4},
        "run1": {"out": str(tmp / "s1"), "max_steps": 4, "batch_size": 4, "micro_batch": 2, "lr": 3e-3,
                 "warmup_steps": 1, "eval_every": 1000, "ckpt_every": 2, "log_every": 1, "threads": 1},
        "run2": {"out": str(tmp / "s2"), "init": str(tmp / "s1" / "ckpt.pt"), "max_steps": 2, "batch_size": 2,
                 "micro_batch": 2, "warmup_steps": 1, "eval_every": 1, "ckpt_every": 1, "log_every": 1, "threads": 1},
    })
    return cfg


# ---- chunking and the encoder

def test_line_endings_are_read_as_lf(frozen_tiny):
    tok = frozen_tiny[1]
    assert encode_ids(tok, "# A\r\n\r\nstep one\rstep two\n") == encode_ids(tok, "# A\n\nstep one\nstep two\n")
    with pytest.raises(ValueError):
        encode_ids(tok, "")


def test_chunk_spans_follow_the_rule():
    assert chunk_spans(1, 16, 4) == [(0, 1)]
    assert chunk_spans(16, 16, 4) == [(0, 16)]
    assert chunk_spans(17, 16, 4) == [(0, 16), (12, 17)]
    assert chunk_spans(28, 16, 4) == [(0, 16), (12, 28)]
    assert chunk_spans(29, 16, 4) == [(0, 16), (12, 28), (24, 29)]
    assert chunk_spans(10, 4, 0) == [(0, 4), (4, 8), (8, 10)]
    for n in range(1, 80):
        for b, o in ((16, 4), (8, 0), (5, 4)):
            spans = chunk_spans(n, b, o)
            assert spans[0][0] == 0 and spans[-1][1] == n  # every id covered
            assert all(e - s <= b for s, e in spans)
            stride = b - o
            assert [s for s, _ in spans] == [c * stride for c in range(len(spans))]
            c = len(spans)
            assert not (c * stride + o < n)  # the rule stops exactly there
    with pytest.raises(ValueError):
        chunk_spans(0, 16, 4)
    with pytest.raises(ValueError):
        chunk_spans(5, 4, 4)


def test_encode_states_matches_the_lm_and_ignores_right_padding(frozen_tiny):
    lm, _ = frozen_tiny
    ids = torch.randint(4, 300, (1, 11))
    full = lm(ids)[2]
    assert torch.equal(encode_states(lm, ids), full)
    padded = torch.cat([ids, torch.zeros(1, 5, dtype=torch.int64)], 1)
    mask = torch.cat([torch.ones(1, 11), torch.zeros(1, 5)], 1).long()
    assert torch.allclose(encode_states(lm, padded, mask)[:, :11], full, atol=1e-6)


def test_fresh_hypernet_leaves_the_lm_unchanged(frozen_tiny):
    lm, tok = frozen_tiny
    for kind in ("perceiver", "t2l"):
        net = build_hypernet(lm.cfg, NetConfig(kind=kind, rank=4, width=32, heads=2, blocks=2))
        adapter = compile_skill(lm, net, tok, SKILL, 16, 4)
        assert all(a.abs().max() > 0 for a, _ in adapter.values())  # A is live, B starts at zero
        ids = torch.tensor([encode_ids(tok, "How do I review a branch?")])
        base = lm(ids)[0]
        with_adapter = lm(ids, lora=stack_rows(lm.cfg, [adapter]))[0]
        assert (with_adapter - base).abs().max() < 1e-6


def test_compile_skill_shapes_and_mean_combine(frozen_tiny):
    lm, tok = frozen_tiny
    net = build_hypernet(lm.cfg, SMALL)
    perturb(net, 1)
    net.eval()  # compile_ids is called directly below: running statistics, as compile_skill uses
    ids = encode_ids(tok, SKILL)
    spans = chunk_spans(len(ids), 16, 4)
    adapter = compile_skill(lm, net, tok, SKILL, 16, 4)
    k = len(spans)
    assert k >= 3
    assert set(adapter) == {(i, m) for i in range(lm.cfg.num_layers) for m in lm.cfg.lora_targets}
    a, b = adapter[(1, "down")]
    r = SMALL.rank + SMALL.shared_rank  # read slots plus the shared adapter, per chunk
    assert a.shape == (lm.cfg.intermediate_size, k * r) and b.shape == (k * r, lm.cfg.hidden_size)
    # ΔW is the mean of the chunk ΔWs
    chunk_dw = [compile_ids(lm, net, ids[s:e], 16, 4)[(1, "down")] for s, e in spans]
    mean = sum(ca @ cb for ca, cb in chunk_dw) / k
    assert torch.allclose(a @ b, mean, atol=1e-6)


def test_batch_adapters_is_compile_skill_with_grad(frozen_tiny):
    lm, tok = frozen_tiny
    net = build_hypernet(lm.cfg, SMALL)
    perturb(net, 2)
    net.eval()  # the slot batch norm's running statistics, as compile uses them
    texts = [SKILL, "# Steps\nRun the tests.", SKILL[:120]]
    sources = [encode_ids(tok, t) for t in texts]
    lora = batch_adapters(lm, net, sources, 16, 4)
    a, _ = lora[(0, "q")]
    assert a.requires_grad
    want = stack_rows(lm.cfg, [compile_ids(lm, net, s, 16, 4) for s in sources])
    for key, (a, b) in lora.items():
        assert a.shape == want[key][0].shape
        assert torch.allclose(a, want[key][0], atol=1e-5) and torch.allclose(b, want[key][1], atol=1e-5)


def test_padding_mask_is_exact(frozen_tiny):
    lm, _ = frozen_tiny
    for kind in ("perceiver", "t2l"):
        net = build_hypernet(lm.cfg, NetConfig(kind=kind, rank=2, width=32, heads=2, blocks=2))
        perturb(net, 3)
        states = torch.randn(1, 6, lm.cfg.hidden_size)
        padded = torch.cat([states, torch.randn(1, 3, lm.cfg.hidden_size) * 50], 1)
        mask = torch.tensor([[1.0] * 6 + [0.0] * 3])
        one, two = net(states, torch.ones(1, 6)), net(padded, mask)
        for m in one:
            assert torch.allclose(one[m][0], two[m][0], atol=1e-5) and torch.allclose(one[m][1], two[m][1], atol=1e-5)


# ---- examples

def test_sections_skip_frontmatter_and_fences():
    secs = sections(SKILL)
    assert [s.heading for s in secs] == ["# Review a branch", "## Steps", "## Pitfalls"]
    steps = secs[1]
    assert SKILL[steps.body_start: steps.end].strip().startswith("1. Check the tests")
    assert "# not a heading" in SKILL[steps.body_start: steps.end]


def test_stage1_examples_keep_the_skill_out_of_the_context(frozen_tiny):
    _, tok = frozen_tiny
    b = Stage1Builder(tok, "<skill>\n", max_skill_tokens=10_000, target_window=24, prefix_min=0.2, prefix_max=0.6)
    ids = b.ids(SKILL)
    rng = random.Random(0)
    for _ in range(30):
        full = b.full(SKILL, rng)
        assert full.source == ids and full.prompt == b.prompt
        assert 8 <= len(full.target) <= 24 and any(ids[i:i + 24] == full.target for i in range(0, len(ids), 24))
        pre = b.prefix(SKILL, rng)
        assert 0.2 * len(ids) - 1 <= len(pre.source) <= 0.6 * len(ids) + 1
        assert pre.source == ids[:len(pre.source)] and pre.prompt == b.prompt
        cl = b.cloze(SKILL, rng)
        heading = tok.decode(cl.prompt)
        assert heading in ("# Review a branch\n", "## Steps\n", "## Pitfalls\n")
        body = tok.decode(cl.target)
        source_text = tok.decode(cl.source)
        assert heading.strip() not in source_text and body.strip() not in source_text  # the removed section
        assert body.strip() in SKILL
        for ex in (full, pre, cl):  # the LM's context is only the fixed prompt or a heading
            assert tok.decode(ex.prompt) in ("<skill>\n", heading)


def test_assistant_only_labels(frozen_tiny):
    _, tok = frozen_tiny
    msgs = [{"role": "system", "content": "Apply the skill."}, {"role": "user", "content": "How do I review?"},
            {"role": "assistant", "content": "Check the tests first."}, {"role": "user", "content": "then?"},
            {"role": "assistant", "content": "Merge the branch."}]
    ex = chat_example(tok, CHAT_TEMPLATE, msgs, [5, 6], max_seq=1000)
    ids = ex.prompt + ex.target
    labelled = tok.decode([t for t, keep in zip(ids, ex.labels_mask, strict=True) if keep], skip_special_tokens=False)
    assert labelled == "Check the tests first.<|im_end|>Merge the branch.<|im_end|>"
    assert ex.labels_mask[0] == 0
    # the direct rendering of our template is what jinja2 renders
    jinja = render_chat(CHAT_TEMPLATE + "{#- force jinja -#}", msgs)
    assert render_chat(CHAT_TEMPLATE, msgs) == jinja
    other = chat_example(tok, CHAT_TEMPLATE + "{#- force jinja -#}", msgs, [5, 6], max_seq=1000)
    assert other.target == ex.target and other.labels_mask == ex.labels_mask


# ---- training

def test_training_reduces_loss_and_resume_is_exact(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    texts = synthetic_corpus(4000, seed=5)
    base = (lm, tok, CHAT_TEMPLATE)

    def trainer(out, resume=False, steps=4, lr=3e-3):
        cfg = tiny_cfg(tmp_path)
        cfg.run1.out, cfg.run1.max_steps, cfg.run1.lr = str(tmp_path / out), steps, lr
        return HyperTrainer(cfg, 1, resume, base=base, train_items=texts, val_items=texts[:4])

    straight = trainer("a")
    straight.fit(progress=False)
    half = trainer("b")
    half.train_step()
    half.train_step()
    half.save()
    resumed = trainer("b", resume=True)
    assert resumed.step == 2
    resumed.fit(progress=False)
    for (k, v), (_, w) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(v, w), k
    lines = [json.loads(x) for x in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in lines] == [3, 4]

    long = trainer("c", steps=25, lr=2e-2)
    before = long.evaluate()
    long.fit(progress=False)
    after = long.evaluate()
    assert after["val_loss_full"] < before["val_loss_full"] - 0.05, (before, after)


def test_stage2_starts_from_stage1_and_runs(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    base = (lm, tok, CHAT_TEMPLATE)
    cfg = tiny_cfg(tmp_path)
    cfg.run1.max_steps = 1
    s1 = HyperTrainer(cfg, 1, base=base, train_items=[SKILL], val_items=[SKILL])
    s1.fit(progress=False)
    traj = [{"skill": "review-branch", "skill_text": SKILL,
             "messages": [{"role": "user", "content": "How do I review?"},
                          {"role": "assistant", "content": "Check the tests first."}],
             "provenance": {"synth": "test"}}] * 3
    s2 = HyperTrainer(cfg, 2, base=base, train_items=traj, val_items=traj)
    same = zip(s1.net.state_dict().values(), s2.net.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in same)
    rec = s2.fit(progress=False)
    assert "val_loss_chat" in rec and rec["step"] == 2
    ck = torch.load(tmp_path / "s2" / "ckpt.pt", weights_only=False)
    assert ck["stage"] == 2 and ck["history"][0]["stage"] == 1


def test_retired_experiments_load_at_their_off_value_and_are_refused_on(tmp_path):
    """Configs and bundle cards written before the null experiments were removed still load when
    those keys hold the value that meant off; switched on, they name the removal."""
    card = json.loads((ROOT / "resources/bundles/default/bundle.json").read_text())["training_card"]["hypernet"]
    cfg = HyperConfig.from_dict(card["config"])
    assert cfg.net == NetConfig(), "NetConfig's defaults are the shipped hypernetwork's"
    old = {"net": {"readout": "content", "center": False, "keys": "read", "copy_gain_init": 0.0},
           "stage2": {"answer_only_share": 0.0}}
    assert HyperConfig.from_dict(old).net.readout == "content"
    for bad in ({"net": {"center": True}}, {"net": {"keys": "learned"}}, {"net": {"readout": "transition"}},
                {"net": {"readout": "copy"}}, {"net": {"copy_gain_init": 0.5}}, {"stage2": {"answer_only_share": 0.3}}):
        with pytest.raises(ValueError, match="removed"):
            HyperConfig.from_dict(bad)
