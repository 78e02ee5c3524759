"""Distillation in the training package (docs/distill.md): the teacher pass, the student loop, the
recipe file, and the eval's distilled conditions with their curves."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import torch

from pskills_train.distill.practice import Question, gather
from pskills_train.distill.run import Distiller
from pskills_train.distill.student import NonFinite, distill, zero_init
from pskills_train.distill.teacher import Teacher
from pskills_train.distill_recipe import RECIPE, Recipe, load_recipe
from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.conditions import DISTILLED
from pskills_train.evals.distilled import CURVE_STEPS
from pskills_train.export.train_step import StepSpec
from pskills_train.model.backend import OrtBackend
from pskills_train.model.from_onnx import load_onnx_lm
from pskills_train.scoring.tasks import Prompter
from pskills_train.synth import skill_from_text

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests/fixtures/bundle-tiny"
HYPER = ROOT / "tests/fixtures/bundle-hyper"
SKILL = """---
name: zorp-notes
description: Write release notes the zorp way.
---
# Zorp notes

## Steps
1. Start every note with the word zorp.
2. End with the ticket number in brackets.

## Examples
Request: Notes for ticket 12
Reply: zorp: faster search [12]
"""


@pytest.fixture(scope="module")
def parts():
    m = json.loads((TINY / "bundle.json").read_text())
    backend = OrtBackend(TINY)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TINY / m["tokenizer"]["file"]))
    chat = json.loads((TINY / m["tokenizer"]["config"]).read_text())["chat_template"]
    prompter = Prompter(tok, chat, m["architecture"]["max_positions"])
    teacher = Teacher(backend, prompter, set(m["special_tokens"]["stop"]), m["special_tokens"]["eos"],
                      m["architecture"]["max_positions"], k=8, max_answer=6, batch=4)
    return m, load_onnx_lm(TINY).eval(), prompter, teacher


def rows_for(teacher, text=SKILL):
    skill = skill_from_text(text, "zorp-notes/SKILL.md")
    qs = gather(skill, ("tests", "examples", "cloze"), tests=[{"prompt": f"Notes for ticket {i}"} for i in range(6)])
    return teacher.rows(skill.text, qs)


def test_teacher_rows_align_the_top_k_with_the_answer(parts):
    _, _, prompter, teacher = parts
    rows = rows_for(teacher)
    assert rows and all(r.top_ids.shape == (len(r.answer), 8) == r.top_logp.shape for r in rows)
    for r in rows:
        assert r.student[r.answer_from:] == r.answer and r.mean_logp <= 0
        assert torch.all(r.top_logp[:, :-1] >= r.top_logp[:, 1:])  # descending
    forced = [r for r in rows if r.source == "examples"]
    assert forced and prompter.tok.decode(forced[0].answer[:-1]).strip().startswith("zorp")  # teacher-forced


def test_a_skill_longer_than_the_context_is_read_by_the_sections_each_question_needs(parts):
    _, _, prompter, teacher = parts
    long = SKILL + "\n## Notes\n" + " ".join(f"word{i}" for i in range(600)) + "\n"
    assert len(prompter.ids(long)) > teacher.context
    rows = rows_for(teacher, long)
    assert rows and all(r.context != long and r.context.startswith("---\nname: zorp-notes") for r in rows)
    assert all("word599" not in r.context for r in rows)  # the section that cannot fit is left out
    ticket = [r for r in rows if r.source == "tests"]
    assert ticket and all("End with the ticket number" in r.context for r in ticket)  # the section it needs
    assert all(r.context == SKILL for r in rows_for(teacher))  # a skill that fits is read whole


def test_the_student_is_deterministic_and_moves_toward_the_teacher(parts):
    m, lm, _, teacher = parts
    rows = rows_for(teacher)
    init = zero_init(lm, m["lora"]["layers"], 4, seed=3)
    rec = Recipe(steps=12, lr=1e-2, batch=4, top_k=8, snapshots=(5,))
    a, b = distill(lm, rows, init, rec, seed=3), distill(lm, rows, init, rec, seed=3)
    assert a.losses == b.losses and all(torch.equal(a.adapter[k][1], b.adapter[k][1]) for k in a.adapter)
    assert sum(a.losses[-3:]) < sum(a.losses[:3])
    assert set(a.snapshots) == {5} and not torch.equal(a.snapshots[5][(0, "q")][1], a.adapter[(0, "q")][1])
    assert torch.equal(init[(0, "q")][1], torch.zeros_like(init[(0, "q")][1]))  # the init is not modified


def test_a_non_finite_loss_stops_at_its_step(parts):
    m, lm, _, teacher = parts
    rows = rows_for(teacher)
    init = zero_init(lm, m["lora"]["layers"], 4, seed=0)
    with pytest.raises(NonFinite, match="step 2"):
        distill(lm, rows, init, Recipe(steps=5, lr=math.inf, batch=4, top_k=8), seed=0)


def test_the_teacher_writes_one_reply_per_prompt_and_gather_filters_them(parts):
    _, _, _, teacher = parts
    replies = teacher.write(SKILL, ["Write 4 requests.", "Write 4 requests about Steps."], max_new=12)
    assert len(replies) == 2 and all(isinstance(r, str) for r in replies)
    report: dict = {}
    skill = skill_from_text(SKILL, "zorp-notes/SKILL.md")
    qs = gather(skill, ("self_written", "cloze"), writer=teacher.write, report=report)
    assert set(report["dropped"]) == {"empty", "duplicate", "copy"}
    assert all(q.answer is None for q in qs if q.source == "self_written")


def test_a_greedy_answer_parroting_a_forced_one_gives_no_row(parts):
    _, _, prompter, teacher = parts
    reply = "zorp: faster search [12]"
    qs = [Question([{"role": "user", "content": "Notes for ticket 12"}], "examples", reply),
          Question([{"role": "user", "content": "Handle the draft for Dana"}], "requests"),
          Question([{"role": "user", "content": "Notes for ticket 12"}], "tests")]
    teacher._answers = lambda prompts, forced: [f if f is not None else prompter.ids(reply) for f in forced]
    try:
        rows = teacher.rows(SKILL, qs)
    finally:
        del teacher._answers
    # The request answered with the example's reply is dropped; the example's own request asked again is not.
    assert [r.source for r in rows] == ["examples", "tests"]


def test_a_greedy_answer_with_an_examples_number_the_request_lacks_gives_no_row(parts):
    _, _, prompter, teacher = parts
    skill = SKILL + "\n## Examples\nRequest: Notes for ticket 4411\nReply: `zorp: faster search [4411]`\n"
    qs = [Question([{"role": "user", "content": "Handle the draft for Dana"}], "requests"),
          Question([{"role": "user", "content": "Notes for ticket 4411"}], "tests"),
          Question([{"role": "user", "content": "Notes for ticket 77"}], "tests")]
    answers = {0: "zorp: faster search [4411]", 1: "zorp: faster search [4411]", 2: "zorp: login fix [77]"}
    teacher._answers = lambda prompts, forced: [prompter.ids(answers[i]) for i in range(len(prompts))]
    try:
        rows = teacher.rows(skill, qs)
    finally:
        del teacher._answers
    # The example's item given to a request without it is dropped; asked for, or another item, it is kept.
    assert [r.question for r in rows] == [1, 2]


class EchoTeacher:
    """A teacher whose rows are the questions it was asked."""

    def rows(self, text, questions):
        return [q.messages[-1]["content"] for q in questions]

    def write(self, system, prompts, max_new=192):
        return []


def test_teacher_rows_follow_the_tests_they_were_gathered_from():
    skill = skill_from_text(SKILL, "zorp-notes/SKILL.md")
    d = Distiller(None, EchoTeacher(), [], 1, load_recipe())  # no lm: no student step here
    first = d.teacher_rows(skill, ("tests",), tests=[{"prompt": "Notes for ticket A"}])[1]
    other = d.teacher_rows(skill, ("tests",), tests=[{"prompt": "Notes for ticket B"}])[1]
    assert first == ["Notes for ticket A"] and other == ["Notes for ticket B"]
    assert d.teacher_rows(skill, ("tests",), tests=[{"prompt": "Notes for ticket A"}])[1] is first  # still cached
    # A test with a number also practises its copies with the number redrawn (practice.test_variants).
    numbered = d.teacher_rows(skill, ("tests",), tests=[{"prompt": "Notes for ticket 12"}])[1]
    assert numbered[0] == "Notes for ticket 12" and len(numbered) > 1
    assert all(re.fullmatch(r"Notes for ticket [1-9][0-9]", q) for q in numbered)

    def chat(n):
        turns = [{"role": "user", "content": f"Notes for ticket {n}"}, {"role": "assistant", "content": "ok"}]
        return [{"messages": turns}]

    assert d.teacher_rows(skill, ("trajectories",), trajectories=chat(3))[1] == ["Notes for ticket 3"]
    assert d.teacher_rows(skill, ("trajectories",), trajectories=chat(4))[1] == ["Notes for ticket 4"]


def test_the_recipe_file_is_the_one_place():
    plan = load_recipe()
    on_file = json.loads(RECIPE.read_text())
    assert plan.recipe.steps == on_file["steps"] and "tests" in plan.sources
    assert {k: v for k, v in vars(Recipe()).items() if k != "snapshots"} == \
        {k: on_file[k] for k in vars(Recipe()) if k != "snapshots"}  # the defaults are the file's
    assert StepSpec(8, 64, 4).top_k == on_file["top_k"] and StepSpec(8, 64, 4).max_norm == on_file["max_norm"]
    assert "tests" not in plan.synth_sources and "examples" not in plan.synth_sources
    assert "self_written" in plan.sources and "requests" in plan.synth_sources
    assert load_recipe(steps=5).recipe.steps == 5


def test_eval_runs_the_distilled_conditions_with_curves(tmp_path):
    sw = pytest.importorskip("pskills_train.skillworld")
    folder = sw.generate("test", 4, 0, tasks_per_skill=2, practice_per_skill=4).write(tmp_path / "w")
    out = tmp_path / "d.json"
    assert eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                      str(out), "--max-answer-tokens", "8", "--max-gen-tokens", "4", "--distill-steps", "6",
                      "--conditions", "none,in_context,parametric,distilled,distilled_zero,distilled_synth,"
                      "distilled_wrong"]) == 0
    res = json.loads(out.read_text())
    base = [c for c in res["conditions"] if "@" not in c]
    assert base == ["none", "in_context", "parametric", *DISTILLED]
    assert set(res["curve"]) == {"distilled", "distilled_zero"}
    assert list(res["curve"]["distilled"]) == [str(s) for s in CURVE_STEPS if s < 6] + ["6"]
    # 0 steps from the instant adapter is the instant adapter: the same accuracy as parametric
    assert res["curve"]["distilled"]["0"] == res["conditions"]["parametric"]["accuracy"]
    by = res["distill"]["by_condition"]
    assert set(by) == {"distilled", "distilled_zero", "distilled_synth"}
    assert by["distilled"]["questions_per_skill"]["tests"] == 4 and "tests" not in by["distilled_synth"][
        "questions_per_skill"]
    da = res["distilled_adapters"]  # diversity and retrieval of the distilled adapters, as for instant ones
    assert da["condition"] == "distilled" and da["diversity"]["n"] == 4 and da["diversity"]["cos_mean"] < 1
    assert da["retrieval"]["k"] == 4 and da["retrieval"]["n_skills"] == 4 and len(da["retrieval"]["ranks"]) == 4
    rec = next(iter(res["distill"]["records"].values()))
    assert rec["steps"] == 6 and rec["seconds"] >= rec["teacher_seconds"] and math.isfinite(rec["final_loss"])
    with pytest.raises(SystemExit, match="unknown"):
        eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                   str(out), "--conditions", "distiled"])


def test_questions_without_text_are_not_questions():
    assert Question([{"role": "user", "content": "x"}], "tests").answer is None
