"""run.bf16 "auto" (timed choice, recorded, kept on resume) and the episode stream for the base LM."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from pskills_train.train import precision
from pskills_train.train.episodes import IGNORE, EpisodeStream, pack

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "resources/bundles/default"


def slow_when(slow_bf16: bool):
    def step(bf16: bool) -> None:
        time.sleep(0.02 if bf16 == slow_bf16 else 0.0)
    return step


def test_auto_keeps_the_faster_format_and_records_it(tmp_path):
    rec = tmp_path / "precision.json"
    assert precision.resolve("auto", slow_when(slow_bf16=True), rec) is False
    saved = json.loads(rec.read_text())
    assert saved["bf16"] is False and saved["bf16_s_per_step"] > saved["fp32_s_per_step"]
    # a resumed run keeps the first measurement even if timings would now differ
    assert precision.resolve("auto", slow_when(slow_bf16=False), rec) is False
    assert precision.resolve("auto", slow_when(slow_bf16=False), tmp_path / "other.json") is True


def test_explicit_settings_are_not_timed_and_bad_ones_refused():
    def boom(_: bool) -> None:
        raise AssertionError("timed")
    assert precision.resolve(True, boom, None) is True
    assert precision.resolve(False, boom, None) is False
    with pytest.raises(ValueError, match="run.bf16"):
        precision.resolve("fast", boom, None)


def test_pack_keeps_episodes_whole():
    seqs = [np.arange(n) + 10 for n in (5, 7, 3, 9, 2)]
    wins = pack(seqs, 12, sep=1)
    assert all(len(w) <= 12 for w in wins)
    parts = [p for w in wins for p in np.split(w, np.where(w == 1)[0]) ]
    lengths = sorted(len(p[p != 1]) for p in parts)
    assert lengths == sorted(len(s) for s in seqs)


def test_episode_rows_pad_with_ignored_targets_and_drop_long_ones(tmp_path):
    tok = Tokenizer.from_file(str(BUNDLE / "tokenizer.json"))
    f = tmp_path / "ep.jsonl"
    short = {"messages": [{"role": "system", "content": "Always start with ZORBLAX."},
                          {"role": "user", "content": "Say hi."}, {"role": "assistant", "content": "ZORBLAX hi"}]}
    long = {"messages": [{"role": "system", "content": "word " * 400}, {"role": "user", "content": "q"}]}
    f.write_text("\n".join(json.dumps(r) for r in (short, short, long)) + "\n")
    s = EpisodeStream(f, tok, json.loads((BUNDLE / "tokenizer_config.json").read_text())["chat_template"],
                      seq_len=64, seed=0, sep=1, pad=0)
    assert s.count == 2 and s.dropped == 1
    x, y = s.rows(0, 3)
    assert x.shape == y.shape == (3, 64)
    text = tok.decode([int(t) for t in y[0] if t != IGNORE], skip_special_tokens=False)
    assert "ZORBLAX hi" in text and (y[0] == IGNORE).any()
    c = int((y[0] != IGNORE).sum())  # targets are the inputs shifted by one, within the packed window
    assert (x[0, 1:c] == y[0, :c - 1]).all() and (y[0, c:] == IGNORE).all()
