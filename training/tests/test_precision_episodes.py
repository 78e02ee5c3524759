"""run.bf16 "auto" (timed choice, recorded, kept on resume) and the episode stream for the base LM."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch
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
    x, y, _ = s.rows(0, 3)
    assert x.shape == y.shape == (3, 64)
    text = tok.decode([int(t) for t in y[0] if t != IGNORE], skip_special_tokens=False)
    assert "ZORBLAX hi" in text and (y[0] == IGNORE).any()
    c = int((y[0] != IGNORE).sum())  # targets are the inputs shifted by one, within the packed window
    assert (x[0, 1:c] == y[0, :c - 1]).all() and (y[0, c:] == IGNORE).all()


def _episode_file(tmp_path: Path, rows: list[dict]) -> Path:
    f = tmp_path / "ep.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return f


TEMPLATE = json.loads((BUNDLE / "tokenizer_config.json").read_text())["chat_template"]
RULE = {"messages": [{"role": "system", "content": "Always start with ZORBLAX."},
                     {"role": "user", "content": "Say hi."}, {"role": "assistant", "content": "ZORBLAX hi"}]}


def test_answer_only_targets_are_the_final_answer_and_its_end_token(tmp_path):
    tok = Tokenizer.from_file(str(BUNDLE / "tokenizer.json"))
    tool = {"messages": [{"role": "system", "content": "Use the tool."}, {"role": "user", "content": "Go."},
                         {"role": "assistant", "content": "CALL lookup"}, {"role": "tool", "content": "42"},
                         {"role": "assistant", "content": "It is 42."}]}
    s = EpisodeStream(_episode_file(tmp_path, [RULE, tool]), tok, TEMPLATE, seq_len=128, seed=0, sep=1, pad=0,
                      need_answers=True)
    _, all_targets, y = s.rows(0, 1)  # both episodes fit one window
    assert ((y == IGNORE) | (y == all_targets)).all() and (all_targets != IGNORE).sum() > (y != IGNORE).sum()
    text = tok.decode([int(t) for t in y[0] if t != IGNORE], skip_special_tokens=False)
    # the final answers and their <|im_end|>, nothing of the skill, the question or the tool-calling turn
    assert text.replace("<|im_end|>", "|") in ("ZORBLAX hi|It is 42.|", "It is 42.|ZORBLAX hi|")
    assert "CALL" not in text and "Always" not in text


def test_answer_only_refuses_an_episode_without_a_final_answer(tmp_path):
    tok = Tokenizer.from_file(str(BUNDLE / "tokenizer.json"))
    open_ended = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]}
    with pytest.raises(ValueError, match="line 2: the last message is not an assistant answer"):
        EpisodeStream(_episode_file(tmp_path, [RULE, open_ended]), tok, TEMPLATE, seq_len=64, seed=0, sep=1, pad=0,
                      need_answers=True)


class Oracle(torch.nn.Module):
    """Predicts each next token of `ids` (an answer token `miss` positions wrong when asked)."""

    def __init__(self, ids: np.ndarray, vocab: int, miss: int | None = None):
        super().__init__()
        self.ids, self.vocab, self.miss = torch.from_numpy(ids), vocab, miss

    def forward(self, x):
        logits = torch.zeros(*x.shape, self.vocab)
        nxt = self.ids[1:x.shape[1] + 1].clone()
        if self.miss is not None:
            nxt[self.miss] = (nxt[self.miss] + 1) % self.vocab
        logits[:, torch.arange(x.shape[1]), nxt] = 1.0
        return (logits,)


def test_probe_counts_exact_greedy_answers(tmp_path):
    from pskills_train.train.probe import Probe

    tok = Tokenizer.from_file(str(BUNDLE / "tokenizer.json"))
    probe = Probe(_episode_file(tmp_path, [RULE] * 3), tok, TEMPLATE, seq_len=64, count=2, pad=0)
    assert len(probe.sets["in_context"]) == 2 and len(probe.sets["none"]) == 2
    ids, mask = probe.sets["in_context"][0]
    assert int(mask.sum()) == len(tok.encode("ZORBLAX hi<|im_end|>", add_special_tokens=False).ids)
    vocab = tok.get_vocab_size()
    probe.sets = {"in_context": probe.sets["in_context"]}
    assert probe(Oracle(ids, vocab), bf16=False)["probe_exact_in_context"] == 1.0
    last = int(np.where(mask)[0][-1]) - 1  # the input position that predicts <|im_end|>
    res = probe(Oracle(ids, vocab, miss=last), bf16=False)
    answer = int(mask.sum())
    assert res["probe_exact_in_context"] == 0.0 and res["probe_token_acc_in_context"] == (answer - 1) / answer
    res = probe(Oracle(ids, vocab, miss=0), bf16=False)  # a miss outside the answer does not count
    assert res["probe_exact_in_context"] == 1.0


def test_config_refuses_an_unknown_episode_loss():
    from pskills_train.train.config import PretrainConfig

    cfg = ROOT / "training/configs/pretrain-phase5.json"
    with pytest.raises(ValueError, match="data.episode_loss 'tokens'"):
        PretrainConfig.load(cfg, ['data.episode_loss="tokens"']).check(1)
    with pytest.raises(ValueError, match="data.answer_weight"):
        PretrainConfig.load(cfg, ["data.answer_weight=0"]).check(1)
    assert PretrainConfig.load(cfg).check(1) == 4
