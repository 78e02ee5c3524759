"""Stage 2's skill-specific terms: in-batch negatives, the shared adapter, ΔW cosine and the cosine stop."""

from __future__ import annotations

import random

import pytest
import torch

from pskills_train.hyper.compile import batch_adapters
from pskills_train.hyper.config import HyperConfig
from pskills_train.hyper.examples import Example, Stage1Builder
from pskills_train.hyper.loss import token_losses
from pskills_train.hyper.net import build_hypernet, perturb
from pskills_train.hyper.similarity import gram, mean_cosine
from pskills_train.hyper.trainer import HyperTrainer
from pskills_train.tokenizer import CHAT_TEMPLATE

NET = {"kind": "perceiver", "rank": 2, "width": 16, "heads": 2, "blocks": 1, "mlp_ratio": 2,
       "targets": ["q", "v", "down"], "out_scale": 0.05}


def cfg(tmp, **stage2) -> HyperConfig:
    return HyperConfig.from_dict({
        "net": {**NET, "shared_rank": 2},
        "encoder": {"token_budget": 16, "chunk_overlap": 4},
        "data": {"max_skill_tokens": 48, "target_window": 24, "max_seq": 64, "val_examples": 4},
        "stage2": stage2,
        "run2": {"out": str(tmp / "s2"), "init": "", "max_steps": 3, "batch_size": 2, "micro_batch": 2, "lr": 3e-3,
                 "warmup_steps": 1, "eval_every": 3, "ckpt_every": 3, "log_every": 1, "threads": 1},
    })


def trajectories() -> list[dict]:
    out = []
    for i, word in enumerate(["alpha", "bravo", "charlie", "delta"]):
        out.append({"skill": f"s{i}", "skill_text": f"# Skill {word}\nAlways answer with {word} {word}.",
                    "messages": [{"role": "user", "content": "What do you say?"},
                                 {"role": "assistant", "content": f"{word} {word}"}]})
    return out


def test_gram_equals_dense_inner_products():
    g = torch.Generator().manual_seed(0)
    lora = {(0, "q"): (torch.randn(3, 5, 2, generator=g), torch.randn(3, 2, 4, generator=g)),
            (1, "v"): (torch.randn(3, 6, 3, generator=g), torch.randn(3, 3, 2, generator=g))}
    dense = [torch.cat([(a[i] @ b[i]).flatten() for a, b in lora.values()]) for i in range(3)]
    want = torch.stack([torch.stack([x @ y for y in dense]) for x in dense])
    assert torch.allclose(gram(lora), want, rtol=1e-5, atol=1e-5)
    same = {k: (a[:1].expand(2, -1, -1), b[:1].expand(2, -1, -1)) for k, (a, b) in lora.items()}
    assert mean_cosine(same) == pytest.approx(1.0, abs=1e-6)


def test_shared_adapter_is_rank_concatenated_and_counted(frozen_tiny):
    lm, _ = frozen_tiny
    c = cfg(__import__("pathlib").Path("/tmp"))
    net = build_hypernet(lm.cfg, c.net)
    perturb(net, seed=1)
    out = net(torch.randn(2, 5, lm.cfg.hidden_size), torch.ones(2, 5))
    a, b = out["q"]
    assert net.rank == 4 and a.shape[-1] == 4 and b.shape[-2] == 4
    # the shared slots are the same for every input; the read slots are not
    assert torch.equal(a[0, :, :, 2:], a[1, :, :, 2:]) and not torch.equal(a[0, :, :, :2], a[1, :, :, :2])
    assert net.shared_share() > 0


def test_contrast_term_trains_and_logs_the_gap(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    tr = HyperTrainer(cfg(tmp_path, contrast_weight=1.0, margin=0.5), 2, base=(lm, tok, CHAT_TEMPLATE),
                      train_items=trajectories(), val_items=trajectories())
    ex = tr.data.micro_examples(0, 0)
    assert len({tuple(e.source) for e in ex}) == len(ex)  # distinct skills in a micro-batch
    rec = tr.fit(progress=False)
    for key in ("hinge", "loss_neg", "cos", "val_loss_wrong_chat", "val_cos_chat", "shared_norm"):
        assert key in rec, key
    assert rec["val_exact_chat"] == 0.0  # a frozen_tiny random LM does not produce the answers greedily
    lora = batch_adapters(lm, tr.net, [e.source for e in ex], 16, 4)
    tot, cnt = tr.losses(ex)
    hinge, neg = tr.contrast(ex, lora, tot, cnt)
    assert hinge >= 0 and neg.shape == tot.shape


def test_a_run_whose_adapters_stay_alike_is_stopped(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    tr = HyperTrainer(cfg(tmp_path, cos_check_step=2, cos_stop_above=-1.0), 2, base=(lm, tok, CHAT_TEMPLATE),
                      train_items=trajectories(), val_items=trajectories())
    with pytest.raises(SystemExit, match="adapters stay alike"):
        tr.fit(progress=False)
    assert tr.step == 2 and (tmp_path / "s2" / "ckpt.pt").exists()


def test_exact_match_is_every_target_token_the_argmax(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    tr = HyperTrainer(cfg(tmp_path, contrast_weight=1.0, margin=0.5), 2, base=(lm, tok, CHAT_TEMPLATE),
                      train_items=trajectories(), val_items=trajectories())
    ex = tr.data.micro_examples(0, 0)[:1]
    seq = list(ex[0].prompt)
    with torch.no_grad():  # the LM's own greedy continuation, one token at a time
        for _ in range(8):
            ids = torch.tensor([seq])
            seq.append(int(lm(ids, torch.ones_like(ids), torch.arange(len(seq))[None], None, None)[0][0, -1].argmax()))
    own = Example(ex[0].objective, ex[0].source, ex[0].prompt, seq[len(ex[0].prompt):])
    # a target that is the LM's own greedy continuation is matched exactly; the trajectory's answer is not
    assert token_losses(lm, None, [own], exact=True)[2].tolist() == [True]
    assert token_losses(lm, None, ex, exact=True)[2].tolist() == [False]


def test_full_objective_prompt_names_its_window_start(frozen_tiny):
    _, tok = frozen_tiny
    text = " ".join(f"word{i}" for i in range(200))
    b = Stage1Builder(tok, "<skill @{start}>\n", 400, 16, 0.2, 0.6)
    ids = b.ids(text)
    for seed in range(5):
        ex = b.full(text, random.Random(seed))
        start = int(tok.decode(ex.prompt).split("@")[1].rstrip(">\n"))
        assert ex.target == ids[start:start + 16]


def test_batch_norm_removes_what_every_skill_shares(frozen_tiny):
    """With net.norm "batch" the read slots are centred over the batch (running statistics when
    compiling), so two skills whose states are nearly identical get adapters that differ several times
    more than with LayerNorm, where the part of the states every skill shares dominates and they
    differ by about the states' own small difference (the collapse of docs/results.md)."""
    lm, _ = frozen_tiny
    g = torch.Generator().manual_seed(5)
    common = torch.randn(1, 6, lm.cfg.hidden_size, generator=g) * 4
    states = common + 0.05 * torch.randn(4, 6, lm.cfg.hidden_size, generator=g)  # 4 nearly identical skills
    rel = {}
    for norm in ("layer", "batch"):
        c = cfg(__import__("pathlib").Path("/tmp"))
        c.net.norm, c.net.readout, c.net.shared_rank = norm, "content", 0
        net = build_hypernet(lm.cfg, c.net)
        perturb(net, seed=1)
        with torch.no_grad():
            if norm == "batch":
                z = net.out_norm(torch.randn(8, net.num_slots, c.net.width, generator=g) * 3 + 2)
                assert z.mean(0).abs().max() < 1e-5 and (z.var(0, unbiased=False) - 1).abs().max() < 1e-3
            for _ in range(30):  # running statistics of this population, as after training
                net(states, torch.ones(4, 6))
            net.eval()
            out = net(states, torch.ones(4, 6))
        dw = torch.stack([torch.cat([(a[i] @ b[i]).flatten() for a, b in out.values()]) for i in range(4)])
        rel[norm] = float((dw[0] - dw[1]).norm() / dw[0].norm())
    # A·B is bilinear in the slots, so part of it is common even to centred slots: the gain is a
    # factor, not a difference of O(1) (docs/results.md, "bilinear mean")
    assert rel["layer"] < 0.05, rel
    assert rel["batch"] > 3 * rel["layer"], rel


def test_slot_clip_bounds_the_adapter_of_an_unusual_chunk(frozen_tiny):
    """A chunk unlike the training population gives slots many running standard deviations out, and
    A·B grows with the square of that; net.slot_clip caps each slot's norm, so the adapter cannot."""
    lm, _ = frozen_tiny
    g = torch.Generator().manual_seed(9)
    norms = {}
    for clip in (0.0, 1.0):
        c = cfg(__import__("pathlib").Path("/tmp"))
        c.net.norm, c.net.readout, c.net.shared_rank, c.net.slot_clip = "batch", "content", 0, clip
        net = build_hypernet(lm.cfg, c.net).eval()  # running statistics 0 / 1: slots pass as they are
        perturb(net, seed=2)
        z = torch.randn(1, net.num_slots, c.net.width, generator=g) / 4  # inside the cap
        with torch.no_grad():
            dw = [torch.cat([(a[0] @ b[0]).flatten() for a, b in net.heads(x).values()]).norm() for x in (z, 40 * z)]
        norms[clip] = float(dw[1] / dw[0])
    assert norms[0.0] == pytest.approx(1600, rel=1e-3)  # bilinear: 40²
    assert norms[1.0] < 40, norms


def test_source_shares_set_the_mix_and_validate_per_source(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    items = [{**t, "source": "skillworld:x"} for t in trajectories()]
    items += [{**t, "skill": f"r{i}", "source": "real:single:about"} for i, t in enumerate(trajectories()[:2])]
    tr = HyperTrainer(cfg(tmp_path, contrast_weight=1.0, source_shares={"real": 1.0, "skillworld": 0.0}), 2,
                      base=(lm, tok, CHAT_TEMPLATE), train_items=items, val_items=items)
    rng = random.Random(0)
    assert all(set(tr.data.pick_skills(rng)) == {"r0", "r1"} for _ in range(20))  # share 0: never drawn
    even = HyperTrainer(cfg(tmp_path, source_shares={"real": 0.5, "skillworld": 0.5}), 2,
                        base=(lm, tok, CHAT_TEMPLATE), train_items=items, val_items=items)
    picks = [n for _ in range(400) for n in even.data.pick_skills(rng)]
    # uniform over the 6 skills would give real 1/3; half the draws are real (a little less: distinctness)
    assert 0.4 < sum(n.startswith("r") for n in picks) / len(picks) < 0.55
    rec = tr.fit(progress=False)
    assert {"val_loss_chat_real", "val_loss_chat_skillworld", "val_loss_wrong_chat_real"} <= set(rec)
    with pytest.raises(ValueError, match="no training episodes from \\['lessons'\\]"):
        HyperTrainer(cfg(tmp_path, source_shares={"lessons": 1.0}), 2, base=(lm, tok, CHAT_TEMPLATE),
                     train_items=items, val_items=items)


def test_stratified_micro_batches_come_from_one_source(frozen_tiny, tmp_path):
    lm, tok = frozen_tiny
    items = [{**t, "source": "skillworld:x"} for t in trajectories()]
    items += [{**t, "skill": f"r{i}", "source": "real:single:about"} for i, t in enumerate(trajectories())]
    tr = HyperTrainer(cfg(tmp_path, source_shares={"real": 0.5, "skillworld": 0.5}, stratify=True), 2,
                      base=(lm, tok, CHAT_TEMPLATE), train_items=items, val_items=items)
    rng = random.Random(1)
    kinds = [{n.startswith("r") for n in tr.data.pick_skills(rng)} for _ in range(50)]
    assert all(len(k) == 1 for k in kinds) and {True} in kinds and {False} in kinds
