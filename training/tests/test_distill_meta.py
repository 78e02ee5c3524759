"""commands.distill_meta: the hypernetwork learns from the distiller's teacher rows (docs/distill.md, "Teaching the
hypernetwork"): the KL falls, a cut run resumes where it stopped, and the exported bundle computes
what was trained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer

from pskills_train.commands.distill_meta import CONFIG, MetaConfig, MetaTrainer, export, load_config
from pskills_train.distill.practice import Question
from pskills_train.distill.teacher import Teacher
from pskills_train.hyper.compile import encode_ids
from pskills_train.hyper.from_onnx import load_onnx_hypernet, parity
from pskills_train.model.backend import OrtBackend
from pskills_train.scoring.tasks import Prompter
from test_hyper_from_onnx import hyper_bundle  # noqa: F401  (the fixture: a tiny bundle with a card)

SKILLS = {
    "zorp": "# Zorp notes\nStart every note with the word zorp, then the ticket in brackets.\n",
    "quib": "# Quib replies\nAnswer in capitals and end each reply with QUIB-7.\n",
    "mell": "# Mell lists\nNumber every line and put mell before each number.\n",
}
QUESTIONS = ["Notes for ticket 12", "Reply to the review", "List the steps", "Summarise the change"]


def _items(bundle: Path) -> list:
    m = json.loads((bundle / "bundle.json").read_text())
    tok = Tokenizer.from_file(str(bundle / m["tokenizer"]["file"]))
    chat = json.loads((bundle / m["tokenizer"]["config"]).read_text())["chat_template"]
    prompter = Prompter(tok, chat, m["architecture"]["max_positions"])
    teacher = Teacher(OrtBackend(bundle), prompter, set(m["special_tokens"]["stop"]), m["special_tokens"]["eos"],
                      m["architecture"]["max_positions"], k=8, max_answer=6, batch=4)
    qs = [Question([{"role": "user", "content": q}], "tests") for q in QUESTIONS]
    return [(name, encode_ids(tok, text), teacher.rows(text, qs)) for name, text in SKILLS.items()]


def _cfg(steps: int) -> MetaConfig:
    return MetaConfig(steps=steps, lr=3e-3, min_lr=3e-3, warmup=0, skills_per_step=3, rows_per_skill=4,
                      val_skills=3, val_rows=4, eval_every=1000, ckpt_every=2)


def test_meta_training_lowers_the_kl_resumes_and_exports(hyper_bundle, tmp_path):  # noqa: F811
    bundle = hyper_bundle[0]
    items = _items(bundle)
    assert all(rows for _, _, rows in items)
    tr = MetaTrainer(bundle, items, items, tmp_path / "run", _cfg(12))
    before = tr.evaluate()
    tr.fit(log=lambda _: None)
    after = tr.evaluate()
    assert after["val_kl_own"] < before["val_kl_own"] - 1e-3, (before, after)
    assert before["val_kl_none"] == after["val_kl_none"]  # the base is frozen
    assert tr.best[1] == 12 and tr.best[0] < before["val_kl_own"]  # evaluated at the end: kept as best.pt

    # resume: a run cut at its last checkpoint continues from there with the same weights
    more = MetaTrainer(bundle, items, items, tmp_path / "run", _cfg(14), resume=True)
    assert more.step == 12
    for k, v in tr.net.state_dict().items():
        assert torch.equal(v, more.net.state_dict()[k]), k
    more.fit(log=lambda _: None)
    assert more.step == 14

    last = {k: v.clone() for k, v in more.net.state_dict().items()}
    assert more.load_best() == more.best[1]  # the export takes the best weights (the last where best)
    if more.best[1] == 12:
        assert any(not torch.equal(v, more.net.state_dict()[k]) for k, v in last.items())
    out = export(more, tmp_path / "bundle", {"steps": more.step})
    net, _, _ = load_onnx_hypernet(out)
    assert parity(net, out) < 1e-4
    for k, v in more.net.state_dict().items():
        assert torch.allclose(v, net.state_dict()[k], atol=1e-5), k
    card = json.loads((out / "bundle.json").read_text())["training_card"]["hypernet"]
    assert card["history"][-1] == {"stage": "distill_meta", "steps": 14}


def test_the_shipped_config_loads_and_names_unknown_fields(tmp_path):
    cfg = load_config()
    assert cfg.steps > 0 and cfg.buckets == (256, 512)
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({**json.loads(CONFIG.read_text()), "stepz": 3}))
    with pytest.raises(ValueError, match="stepz"):
        load_config(bad)



def test_validation_reports_top1_on_the_skill_tokens_and_whole_answers(hyper_bundle, tmp_path):  # noqa: F811
    bundle = hyper_bundle[0]
    items = _items(bundle)
    plain = MetaTrainer(bundle, items, items, tmp_path / "a", _cfg(1))
    rec = plain.evaluate()
    assert 0.0 <= rec["val_top1_skill_own"] <= 1.0 and rec["val_top1_skill_none"] == 0.0
    assert 0.0 <= rec["val_rows_exact_own"] <= 1.0
