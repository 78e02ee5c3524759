"""Slot batch-norm recalibration: running stats become the mean batch statistics of the chosen skills."""

from __future__ import annotations

import torch

from pskills_train.hyper.net import SlotBatchNorm
from pskills_train.hyper.recalibrate import recalibrate
from pskills_train.hyper.trainer import HyperTrainer
from pskills_train.tokenizer import CHAT_TEMPLATE
from test_hyper_contrast import cfg, trajectories


def two_source_trainer(base, tmp_path) -> HyperTrainer:
    """A stage-2 trainer with slot batch norm over SkillWorld episodes and real ones (other skill texts)."""
    lm, tok = base
    items = [{**t, "source": "skillworld:x"} for t in trajectories()]
    items += [{**t, "skill": f"r{i}", "skill_text": t["skill_text"].upper() * 3, "source": "real:single:about"}
              for i, t in enumerate(trajectories())]
    c = cfg(tmp_path, source_shares={"real": 0.5, "skillworld": 0.5})
    c.net.norm, c.net.readout = "batch", "content"
    return HyperTrainer(c, 2, base=(lm, tok, CHAT_TEMPLATE), train_items=items, val_items=items)


def test_recalibrate_sets_stats_from_the_chosen_source_only(frozen_tiny, tmp_path):
    tr = two_source_trainer(frozen_tiny, tmp_path)
    (bn,) = [m for m in tr.net.modules() if isinstance(m, SlotBatchNorm)]
    assert recalibrate(tr, ["real"], batches=6) == 1
    real_mean = bn.running_mean.clone()
    assert not tr.net.training and bn.momentum == 0.05  # restored
    recalibrate(tr, ["skillworld"], batches=6)
    assert not torch.allclose(real_mean, bn.running_mean)  # a different population, different stats
    recalibrate(tr, ["real"], batches=6)
    assert torch.allclose(real_mean, bn.running_mean)  # the same draws give the same stats


def test_stratified_recalibration_alternates_sources(frozen_tiny, tmp_path):
    tr = two_source_trainer(frozen_tiny, tmp_path)
    seen: list[str] = []
    chat = tr.data.chat
    tr.data.chat = lambda rec: (seen.append(rec["source"].split(":")[0]), chat(rec))[1]
    recalibrate(tr, ["real", "skillworld"], batches=8, stratify=True)
    per_batch = [set(seen[i: i + 2]) for i in range(0, len(seen), 2)]  # micro_batch 2
    assert per_batch == [{"real"}, {"skillworld"}] * 4
    seen.clear()
    recalibrate(tr, ["real", "skillworld"], batches=40)
    assert any(len(b) == 2 for b in (set(seen[i: i + 2]) for i in range(0, len(seen), 2)))  # mixed batches
