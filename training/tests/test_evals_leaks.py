"""The eval counts practice leaking into the scored tasks at run time and refuses to report it."""

from __future__ import annotations

import json
from pathlib import Path

from pskills_train.distill.practice import Question
from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.leaks import count, refusal, total
from pskills_train.scoring.tasks import Task
from pskills_train.skillworld import generate

ROOT = Path(__file__).resolve().parents[2]
HYPER = ROOT / "tests/fixtures/bundle-hyper"
ARGS = ["--bundle", str(HYPER), "--suite", "skillworld", "--max-answer-tokens", "8", "--max-gen-tokens", "4",
        "--distill-steps", "2", "--conditions", "none,distilled_zero"]


def _user(q: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": q}]


def test_count_finds_equal_prompts_and_forced_scored_answers():
    scored = [Task(0, "t0", "order", "s", "vasker, petol, dambrin, skuxror", messages=_user("Order: a, b.")),
              Task(0, "t1", "template:x", "s", "Always file the report with the vlarbre desk before noon.",
                   question="What is the rule?")]
    qs = [Question(_user("  order:  A, b. "), "tests"),  # whitespace and case do not hide a copy
          Question(_user("What is the rule?"), "template", "something else"),  # a template task's prompt
          Question(_user("q"), "examples", "Vasker, petol, dambrin, skuxror"),
          Question(_user("Recite Rules"), "cloze",
                   "## Rules\nAlways file the report with the vlarbre desk before noon. "
                   "Then rest."),  # a cloze body holding a scored reference
          Question(_user("fine"), "cloze", "yes"), Question(_user("fine too"), "requests")]
    c = count(qs, scored)
    assert (c["practice_equals_task"], c["forced_scored_answer"]) == (2, 2)
    assert count(qs[4:], scored)["practice_equals_task"] == count(qs[4:], scored)["forced_scored_answer"] == 0
    t = total({"distilled:a": {"leaks": c}, "distilled_zero:a": {"leaks": count(qs[4:], scored)}})
    assert t["runs_checked"] == 2 and t["practice_equals_task"] == 2
    assert "refusing to report" in (refusal(t) or "") and refusal(total({})) is None


def test_a_clean_world_reports_zero_leaks(tmp_path):
    folder = generate("test", 4, 0, tasks_per_skill=2, practice_per_skill=4).write(tmp_path / "w")
    out = tmp_path / "r.json"
    assert eval_main([*ARGS, "--skillworld-dir", str(folder), "--out", str(out)]) == 0
    lk = json.loads(out.read_text())["leaks"]
    assert lk["practice_equals_task"] == lk["forced_scored_answer"] == 0 and lk["runs_checked"] == 4


def test_a_planted_leak_is_refused(tmp_path, capsys):
    folder = generate("test", 4, 0, tasks_per_skill=2, practice_per_skill=4).write(tmp_path / "w")
    tasks = [json.loads(x) for x in (folder / "tasks.jsonl").read_text().splitlines()]
    planted = {**tasks[0], "task_id": tasks[0]["task_id"] + "-copy"}  # a scored task copied into practice
    with open(folder / "practice.jsonl", "a") as f:
        f.write(json.dumps(planted) + "\n")
    order = next(t for t in tasks if t["family"] == "order")  # a scored answer in the skill's own Examples
    skill = folder / order["skill_path"]
    skill.write_text(skill.read_text() + f"\n## Examples\n\nRequest: Sort these.\nReply: `{order['reference']}`\n")
    out = tmp_path / "r.json"
    assert eval_main([*ARGS, "--skillworld-dir", str(folder), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "refusing to report" in err and "practice_equals_task 1," in err and not out.exists()
    # the Examples reply forces it (template and cloze questions skip the Examples section)
    n_forced = int(err.split("forced_scored_answer ")[1].split()[0])
    assert n_forced >= 1 and f"task {order['task_id']}" in err
    assert "forced_scored_answer (examples)" in err
