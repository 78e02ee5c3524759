"""Real skills scored on use (evals/use.py): requests no practice source produced, held-out forms."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pskills_train.distill import practice_synth
from pskills_train.distill.practice import SOURCES, Question, gather
from pskills_train.evals import use
from pskills_train.evals.__main__ import main as eval_main
from pskills_train.synth.skill import skill_from_text
from test_evals import skill_md

ROOT = Path(__file__).resolve().parents[2]
HYPER = ROOT / "tests/fixtures/bundle-hyper"
ARGS = ["--bundle", str(HYPER), "--max-tasks-per-skill", "2", "--max-answer-tokens", "8", "--max-gen-tokens", "4",
        "--distill-steps", "2", "--conditions", "none,in_context,parametric,distilled,distilled_wrong",
        "--no-per-task"]


def short_md(i: int) -> str:
    """A skill that fits the fixture's 256 positions whole, so the teacher reads it in one piece."""
    w = ["check", "build", "merge", "review"][i % 4]
    return f"---\nname: s{i}\ndescription: {w} files.\n---\n## Steps\n\nAlways {w} the new file first.\n"


def _skills(tmp_path: Path, n: int = 3) -> Path:
    root = tmp_path / "skills"
    for i in range(n):
        (root / f"s{i}").mkdir(parents=True)
        (root / f"s{i}" / "SKILL.md").write_text(short_md(i))
    return root


def _pattern(form: str) -> re.Pattern[str]:
    """A form as a regex: its fixed text literal, each {slot} any text."""
    return re.compile("^" + ".+".join(re.escape(p) for p in re.split(r"\{\w+\}", form)) + "$", re.S)


def test_use_block_has_its_keys(tmp_path, capsys):
    out = tmp_path / "eval.json"
    assert eval_main([*ARGS, "--skills", str(_skills(tmp_path)), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    u = res["use"]
    assert set(u["conditions"]) == {"none", "in_context", "parametric", "distilled", "distilled_wrong"}
    for r in u["conditions"].values():
        assert set(r) == {"nll", "kl"} and r["nll"] > 0 and r["kl"] >= 0
    # the in-context student is the teacher itself on a skill it reads whole: KL 0 up to float error
    assert not any(e["teacher_focused"] for e in u["per_skill"])
    assert u["conditions"]["in_context"]["kl"] == pytest.approx(0.0, abs=1e-4)
    assert u["conditions"]["none"]["kl"] > 1e-3
    assert set(u["distilled_share"]) >= {"value", "ci95", "n_skills"} and u["n_skills"] == 3
    assert set(u["distilled_minus_distilled_wrong"]) == {"nll", "ci95"}
    assert u["leaks"]["use_equals_practice"] == 0 and u["sources"]["held_out_forms"] > 0
    assert "recall" in res and "use" in res["recall"]["what"]
    printed = capsys.readouterr().out
    assert "recall (" in printed and "distilled_share" in printed


def test_share_formula_on_a_constructed_case():
    # means: none 4, distilled 3, in_context 2 -> (4 - 3) / (4 - 2) = 0.5
    s = use.share([5.0, 3.0], [3.5, 2.5], [2.5, 1.5], 200, 0)
    assert s["value"] == pytest.approx(0.5)
    lo, hi = s["ci95"]
    assert lo <= 0.5 <= hi
    # distilled as good as in context: share 1; no better than none: 0
    assert use.share([4.0, 4.0], [2.0, 2.0], [2.0, 2.0], 50, 0)["value"] == pytest.approx(1.0)
    assert use.share([4.0, 4.0], [4.0, 4.0], [2.0, 2.0], 50, 0)["value"] == pytest.approx(0.0)
    entries = [{"skill": f"k{i}", "scored": 2, "sources": {"held_out_forms": 2, "self_written": 0},
                "leaks": {"use_equals_practice": 0, "shown": []},
                "conditions": {c: {"nll": v, "kl": 0.0}
                               for c, v in (("none", n), ("distilled", d), ("in_context", c_), ("distilled_wrong", n))}}
               for i, (n, d, c_) in enumerate(((5.0, 3.5, 2.5), (3.0, 2.5, 1.5)))]
    rep = use.report(entries, 100, 0)
    assert rep["distilled_share"]["value"] == pytest.approx(0.5)
    assert rep["distilled_minus_distilled_wrong"]["nll"] == pytest.approx(-1.0)


def test_held_out_forms_never_appear_in_practice():
    practice_forms = [*practice_synth.FRAMES, *practice_synth.SLOT_FORMS]
    assert not set(practice_forms) & {*use.USE_FRAMES, *use.USE_SLOT_FORMS}
    frames = [_pattern(f) for f in use.USE_FRAMES]
    own = [_pattern(f) for f in practice_synth.FRAMES]
    for i in range(12):
        skill = skill_from_text(skill_md(i), f"s{i}/SKILL.md")
        practised = gather(skill, tuple(s for s in SOURCES if s != "self_written"), seed=0, n_requests=64)
        asked = [q.messages[-1]["content"] for q in practised]
        assert asked and not [a for a in asked if any(p.match(a) for p in frames)]
        held = use.held_out_requests(skill, 24, 0 + use.USE_SEED)
        assert held and all(any(p.match(h) for p in frames) for h in held)
        assert not [h for h in held if any(p.match(h) for p in own)] and not set(held) & set(asked)


def test_a_planted_leak_is_refused(tmp_path, monkeypatch, capsys):
    real = use.questions

    def planted(skill, teacher, seed, written=True, practised=None):  # a scored request practice also asks
        qs, dropped = real(skill, teacher, seed, written, practised)
        asked = practice_synth.requests(skill, 1, 0)[0].question
        return [*qs, Question([{"role": "user", "content": asked}], "held_out_forms")], dropped

    monkeypatch.setattr(use, "questions", planted)
    out = tmp_path / "eval.json"
    assert eval_main([*ARGS, "--skills", str(_skills(tmp_path, 2)), "--out", str(out)]) == 3
    assert not out.exists()
    err = capsys.readouterr().err
    assert "refusing to report: 2 use requests equal a practice question" in err


def test_leak_count_compares_whole_chats():
    q = Question([{"role": "user", "content": "Check  the Draft"}], "held_out_forms")
    p = Question([{"role": "user", "content": "check the draft"}], "requests")
    assert use.leak_count([q], [[p]])["use_equals_practice"] == 1
    assert use.leak_count([q], [[Question([{"role": "user", "content": "check the draft now"}], "x")]])[
        "use_equals_practice"] == 0
    assert use.refusal({"leaks": {"use_equals_practice": 0, "shown": []}}) is None


def test_questions_drop_requests_equal_to_practice():
    skill = skill_from_text(short_md(0), "s0/SKILL.md")
    qs, dropped = use.questions(skill, None, 0, written=False)
    practised = [[Question(list(qs[0].messages), "self_written")]]
    kept, dropped = use.questions(skill, None, 0, written=False, practised=practised)
    assert dropped["equals_practice"] == 1 and len(kept) == len(qs) - 1 and qs[0] not in kept
