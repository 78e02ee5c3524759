"""Pretraining on a tiny synthetic corpus: loss goes down, resume is exact, bits per byte is right."""

from __future__ import annotations

import json
import math
import os
from itertools import pairwise
from pathlib import Path

import pytest
import torch

from pskills_train.data.shards import ShardWriter
from pskills_train.model import LlamaLM, ModelConfig
from pskills_train.tokenizer import synthetic_corpus, train_bpe
from pskills_train.train.config import PretrainConfig
from pskills_train.train.distributed import Dist
from pskills_train.train.evaluate import evaluate
from pskills_train.train.optim import lr_at
from pskills_train.train.pretrain import Pretrainer

TINY_MODEL = dict(vocab_size=384, hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=8,
                  intermediate_size=64, max_positions=64)


def tiny_setup(root: Path) -> dict:
    """A corpus (4 splits + manifest), a tokenizer and a config dict for a ~60 k parameter model."""
    corpus = root / "corpus"
    if not (corpus / "manifest.json").exists():
        for split, n in (("docs_train", 60_000), ("skills_train", 20_000), ("docs_val", 6_000), ("skills_val", 6_000)):
            w = ShardWriter(corpus, split, 1 << 20)
            for i, text in enumerate(synthetic_corpus(n, seed=len(split) + n)):
                w.write({"id": str(i), "text": text})
            w.close()
        (corpus / "manifest.json").write_text("{}")
        train_bpe(synthetic_corpus(80_000), TINY_MODEL["vocab_size"]).save(str(root / "tokenizer.json"))
    return {
        "model": TINY_MODEL,
        "data": {"corpus": str(corpus), "tokenizer": str(root / "tokenizer.json"), "tokens": str(root / "tokens"),
                 "seq_len": 32, "eval_windows": 8},
        "optim": {"lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 5, "weight_decay": 0.1},
        "run": {"out": str(root / "run"), "batch_size": 8, "micro_batch": 4, "max_steps": 40, "eval_every": 20,
                "ckpt_every": 1000, "log_every": 1, "seed": 7, "threads": 1},
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return tiny_setup(tmp_path_factory.mktemp("pretrain"))


def _cfg(raw: dict, **run) -> PretrainConfig:
    raw = json.loads(json.dumps(raw))
    raw["run"].update(run)
    return PretrainConfig.from_dict(raw)


def test_loss_decreases_and_metrics_are_logged(setup):
    cfg = _cfg(setup)
    Pretrainer(cfg, Dist(), resume=False).fit()
    lines = [json.loads(ln) for ln in (Path(cfg.run.out) / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in lines] == list(range(1, 41))
    first, last = lines[0], lines[-1]
    assert last["loss"] < first["loss"] - 1.0
    assert math.log(TINY_MODEL["vocab_size"]) - 0.3 < first["loss"] < math.log(TINY_MODEL["vocab_size"]) + 0.3
    assert last["tokens"] == 40 * 8 * 32 and last["tokens_per_s"] > 0
    assert {"val_loss_docs_val", "val_bpb_docs_val", "val_loss_skills_val", "val_bpb_skills_val"} <= set(last)
    assert (Path(cfg.run.out) / "model/model.safetensors").exists() and (Path(cfg.run.out) / "ckpt.pt").exists()


def test_resume_gives_the_same_next_losses_as_an_uninterrupted_run(setup, tmp_path):
    straight = Pretrainer(_cfg(setup, out=str(tmp_path / "a"), max_steps=8), Dist(), resume=False)
    want = [straight.train_step() for _ in range(6)]
    first = Pretrainer(_cfg(setup, out=str(tmp_path / "b"), max_steps=8), Dist(), resume=False)
    got = [first.train_step() for _ in range(3)]
    first.save()
    del first
    again = Pretrainer(_cfg(setup, out=str(tmp_path / "b"), max_steps=8), Dist(), resume=True)
    assert (again.step, again.position) == (3, 24)
    got += [again.train_step() for _ in range(3)]
    assert got == pytest.approx(want, abs=1e-6)
    assert got[3] != got[2]


def test_bits_per_byte_of_a_uniform_model():
    cfg = ModelConfig(**TINY_MODEL)
    model = LlamaLM(cfg)
    with torch.no_grad():
        model.model.embed_tokens.weight.zero_()  # tied: zero logits, a uniform next-token distribution
    windows = torch.randint(4, cfg.vocab_size, (3, 9))  # [n, L + 1]
    table = torch.full((cfg.vocab_size,), 3, dtype=torch.int64)  # every token stands for 3 bytes
    res = evaluate(model, windows, table, batch=2)
    assert res["loss"] == pytest.approx(math.log(cfg.vocab_size), rel=1e-6)
    assert res["bpb"] == pytest.approx(math.log2(cfg.vocab_size) / 3, rel=1e-6)
    assert (res["tokens"], res["bytes"]) == (24, 72)


def test_schedule_and_config_checks(setup):
    cfg = _cfg(setup)
    lrs = [lr_at(s, cfg.optim, 100) for s in range(100)]
    assert lrs[0] == pytest.approx(cfg.optim.lr / 5) and lrs[4] == pytest.approx(cfg.optim.lr)
    assert all(a >= b for a, b in pairwise(lrs[4:])) and lrs[-1] > cfg.optim.min_lr
    assert lr_at(100, cfg.optim, 100) == pytest.approx(cfg.optim.min_lr)
    with pytest.raises(ValueError, match="multiple of micro_batch"):
        cfg.check(world=3)
    with pytest.raises(ValueError, match="unknown fields"):
        PretrainConfig.from_dict({"run": {"batch": 1}})
    over = PretrainConfig.load(_write(setup), ["run.bf16=true", "optim.lr=0.5"])
    assert over.run.bf16 is True and over.optim.lr == 0.5


def test_wsd_holds_the_rate_then_decays_linearly(setup):
    raw = json.loads(json.dumps(setup))
    raw["optim"].update(schedule="wsd", decay_steps=10)
    opt = PretrainConfig.from_dict(raw).optim
    assert lr_at(4, opt, 50) == lr_at(39, opt, 50) == pytest.approx(opt.lr)
    assert lr_at(45, opt, 50) == pytest.approx((opt.lr + opt.min_lr) / 2)
    assert lr_at(50, opt, 50) == pytest.approx(opt.min_lr)
    # raising max_steps while still stable leaves the rates so far unchanged (why a long run uses wsd)
    assert [lr_at(s, opt, 50) for s in range(40)] == [lr_at(s, opt, 80) for s in range(40)]
    assert lr_at(20, opt, 70, start=20) == pytest.approx(opt.lr / 5)  # a second phase warms up again
    raw["optim"]["decay_steps"] = 0
    with pytest.raises(ValueError, match="decay_steps"):
        PretrainConfig.from_dict(raw).check(world=1)


def test_a_second_phase_continues_an_earlier_run(setup, tmp_path):
    first = Pretrainer(_cfg(setup, out=str(tmp_path / "p1"), max_steps=6), Dist(), resume=False)
    first.fit()
    raw = json.loads(json.dumps(setup))
    raw["optim"].update(schedule="wsd", decay_steps=2, warmup_steps=2)
    raw["run"].update(out=str(tmp_path / "p2"), init_from=str(tmp_path / "p1"), max_steps=10)
    second = Pretrainer(PretrainConfig.from_dict(raw), Dist(), resume=False)
    assert (second.step, second.position, second.start) == (6, 48, 6)
    same = zip(second.model.state_dict().values(), first.model.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in same)
    assert second.phases[0]["to_step"] == 6 and second.phases[0]["config"]["optim"]["schedule"] == "cosine"
    second.fit()
    rows = [json.loads(ln) for ln in (tmp_path / "p2/metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 11))  # the first phase's rows, then its own
    assert rows[6]["lr"] == pytest.approx(raw["optim"]["lr"] / 2)  # warming up again from step 6
    ck = torch.load(tmp_path / "p2/ckpt.pt", weights_only=False)
    assert (ck["start_step"], ck["phases"][0]["to_step"]) == (6, 6)
    again = Pretrainer(PretrainConfig.from_dict(raw), Dist(), resume=True)  # resuming keeps the phase start
    assert (again.start, len(again.phases)) == (6, 1)
    raw["model"] = dict(TINY_MODEL, intermediate_size=96)
    with pytest.raises(ValueError, match="model config differs"):
        Pretrainer(PretrainConfig.from_dict(raw), Dist(), resume=False)
    raw["model"], raw["run"]["max_steps"] = TINY_MODEL, 6
    with pytest.raises(ValueError, match="must be past"):
        Pretrainer(PretrainConfig.from_dict(raw), Dist(), resume=False)


def _write(raw: dict) -> Path:
    path = Path(raw["run"]["out"]).parent / "cfg.json"
    path.write_text(json.dumps(raw))
    return path


def test_a_paused_run_leaves_the_pause_out_of_its_time(setup, tmp_path):
    import subprocess
    trainer = Pretrainer(_cfg(setup, out=str(tmp_path / "p")), Dist(), resume=False)
    trainer.paused = 0.0
    waker = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -CONT {os.getpid()}"])
    trainer._pause()  # stops this process until the waker's SIGCONT
    waker.wait()
    assert trainer.paused >= 0.4


def test_episodes_fill_their_share_of_rows_and_train(setup, tmp_path):
    """Episode rows replace a quarter of each micro-batch; documents' windows are left intact."""
    from pskills_train.tokenizer import CHAT_TEMPLATE

    eps = tmp_path / "ep.jsonl"
    rows = [{"messages": [{"role": "system", "content": f"Say {w}."}, {"role": "user", "content": "go"},
                          {"role": "assistant", "content": w}]} for w in ("red", "blue", "green")]
    eps.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "tc.json").write_text(json.dumps({"chat_template": CHAT_TEMPLATE}))
    raw = json.loads(json.dumps(setup))
    raw["data"].update(episodes=str(eps), episode_share=0.25, chat_template=str(tmp_path / "tc.json"))
    cfg = _cfg(raw, out=str(tmp_path / "run"), max_steps=3, eval_every=3)
    tr = Pretrainer(cfg, Dist(), resume=False)
    x, y = tr.stream.micro_batch(0, 8, 0, 0, 1, 4)
    seen = []
    real = tr.model.forward

    def spy(ids, *a, **k):
        seen.append(ids.clone())
        return real(ids, *a, **k)

    tr.net = spy
    tr.train_step()
    assert torch.equal(seen[0][1:], x[1:])  # three document rows as the stream has them
    assert not torch.equal(seen[0][0], x[0]) and seen[0][0].min() >= 0  # one episode row, no -100 in inputs
    tr.net = tr.model
    tr.fit()
    assert math.isfinite(json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])["loss"])
