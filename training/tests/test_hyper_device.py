"""What a run on a lent GPU needs from the trainer (scripts/device-train-hyper.sh): packed (xz/gzip) episodes and
a wall-clock budget (run.max_minutes) that stops cleanly with a checkpoint and a validation."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path

import pytest
import torch

from pskills_train.export.bundle import random_model
from pskills_train.hyper.config import HyperConfig, NetConfig
from pskills_train.hyper.trainer import HyperTrainer
from pskills_train.tokenizer import CHAT_TEMPLATE

torch.set_num_threads(1)
SKILLS = {name: f"---\nname: {name}\n---\n\n# {name}\n\nAlways answer with the word {name}.\n"
          for name in ("alpha", "beta", "gamma")}


def episodes() -> list[dict]:
    return [{"skill": n, "skill_text": t, "source": "skillworld:test",
             "messages": [{"role": "user", "content": "What do you answer?"},
                          {"role": "assistant", "content": f"The word {n}."}]} for n, t in SKILLS.items()]


def config(tmp, train: str, val: str, **run2) -> HyperConfig:
    net = NetConfig(rank=2, width=32, heads=2, blocks=1).__dict__
    return HyperConfig.from_dict({
        "net": net, "encoder": {"token_budget": 16, "chunk_overlap": 4},
        "data": {"trajectories_train": train, "trajectories_val": val, "max_skill_tokens": 48, "max_seq": 64,
                 "val_examples": 3},
        "run2": {"out": str(tmp / "s2"), "max_steps": 50, "batch_size": 2, "micro_batch": 2, "warmup_steps": 1,
                 "eval_every": 1000, "ckpt_every": 1000, "log_every": 1000, "threads": 1, **run2},
    })


@pytest.mark.parametrize("suffix,pack", [(".gz", gzip.compress), (".xz", lzma.compress)])
def test_packed_episodes_read_as_the_plain_file(tmp_path, suffix, pack):
    lines = "".join(json.dumps(r) + "\n" for r in episodes())
    (tmp_path / "e.jsonl").write_text(lines)
    packed_file = str(tmp_path / f"e.jsonl{suffix}")
    Path(packed_file).write_bytes(pack(lines.encode()))
    lm, tok = random_model("tiny")
    base = (lm, tok, CHAT_TEMPLATE)
    plain = HyperTrainer(config(tmp_path, str(tmp_path / "e.jsonl"), str(tmp_path / "e.jsonl")), 2, base=base)
    packed = HyperTrainer(config(tmp_path, packed_file, packed_file), 2, base=base)
    assert packed.data.train_items == plain.data.train_items == episodes()
    val_packed, val_plain = packed.data.val["chat"], plain.data.val["chat"]
    assert [e.prompt + e.target for e in val_packed] == [e.prompt + e.target for e in val_plain]


def test_max_minutes_stops_with_a_checkpoint_and_a_validation(tmp_path):
    lm, tok = random_model("tiny")
    # a budget any step exceeds: the run stops after its first step, not at max_steps 50
    cfg = config(tmp_path, "-", "-", max_minutes=1e-9)
    tr = HyperTrainer(cfg, 2, base=(lm, tok, CHAT_TEMPLATE), train_items=episodes(), val_items=episodes())
    last = tr.fit(progress=False)
    assert tr.step == 1 and last["step"] == 1 and "val_loss_chat" in last
    ck = torch.load(tmp_path / "s2" / "ckpt.pt", weights_only=False)
    assert ck["step"] == 1
    rows = [json.loads(x) for x in (tmp_path / "s2" / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["step"] == 1 and "max_minutes" in rows[-1]["stopped"]
    # without a budget the same run goes on to max_steps
    cfg.run2.max_minutes, cfg.run2.max_steps, cfg.run2.out = 0.0, 3, str(tmp_path / "s3")
    tr = HyperTrainer(cfg, 2, base=(lm, tok, CHAT_TEMPLATE), train_items=episodes(), val_items=episodes())
    assert tr.fit(progress=False)["step"] == 3


def test_a_step_under_bf16_autocast(tmp_path):
    """The lent GPU trains with bf16 autocast (run2.bf16 auto); CPU autocast takes the same path here:
    the slot batch norm keeps fp32 statistics for bf16 slots."""
    lm, tok = random_model("tiny")
    cfg = config(tmp_path, "-", "-", device="cpu", bf16=True)
    cfg.net.norm, cfg.net.readout = "batch", "content"
    tr = HyperTrainer(cfg, 2, base=(lm, tok, CHAT_TEMPLATE), train_items=episodes(), val_items=episodes())
    assert tr.place.bf16
    rec = tr.train_step()
    assert torch.isfinite(torch.tensor(rec["loss"]))
    assert tr.net.out_norm.running_mean.dtype == torch.float32


def test_batched_skill_tokens_match_one_by_one(tmp_path):
    """A micro-batch's skill texts are tokenized in one encode_batch: the same ids, cut alike."""
    lm, tok = random_model("tiny")
    recs = episodes() + [{**episodes()[0], "skill_text": "A much longer skill. " * 40}]
    cfg = config(tmp_path, "-", "-")
    tr = HyperTrainer(cfg, 2, base=(lm, tok, CHAT_TEMPLATE), train_items=recs, val_items=recs)
    assert len(tr.data.builder.ids(recs[-1]["skill_text"])) == cfg.data.max_skill_tokens
    assert tr.data.chats(recs) == [tr.data.chat(r) for r in recs]
