"""SkillWorld practice never repeats a scored task: not its prompt, not its answer (docs/skillworld.md)."""

from __future__ import annotations

import json

from pskills_train.skillworld import generate
from pskills_train.skillworld.__main__ import main as skillworld
from pskills_train.skillworld.families import order_practice
from pskills_train.skillworld.filler import DEFAULT_FIXTURE

WORLDS, SKILLS, PRACTICE = 100, 12, 32


def _prompt(t) -> str:
    return json.dumps(t.messages, sort_keys=True)


def test_100_worlds_of_32_practice_questions_never_overlap_the_scored_tasks():
    overlaps, answers, short = [], [], 0
    families: set[str] = set()
    for seed in range(WORLDS):
        w = generate("test", SKILLS, seed, filler=DEFAULT_FIXTURE, practice_per_skill=PRACTICE)
        for s in w.skills:
            scored = [t for t in w.tasks if t.skill == s.name]
            practice = [t for t in w.practice if t.skill == s.name]
            families.add(s.family)
            prompts, refs = {_prompt(t) for t in scored}, {t.reference.strip().lower() for t in scored}
            overlaps += [(seed, t.task_id) for t in practice if _prompt(t) in prompts]
            answers += [(seed, t.task_id, t.reference) for t in practice if t.reference.strip().lower() in refs]
            # every practice question is distinct, and a skill writes PRACTICE unless its rule has fewer
            assert len({_prompt(t) for t in practice}) == len(practice)
            if len(practice) < PRACTICE:
                short += 1
                assert w.manifest["practice"]["short"][s.name] == len(practice) == 26 and s.family == "order"
        assert w.manifest["practice"]["written"] == len(w.practice)
    assert len(families) == 6
    assert not overlaps, f"{len(overlaps)} practice prompts equal a scored prompt: {overlaps[:5]}"
    assert not answers, f"{len(answers)} practice answers equal a scored answer: {answers[:5]}"
    assert short == WORLDS * 2  # the two order skills of each world


def test_order_practice_instances_are_partial_and_never_the_skills_order():
    steps = ["a", "b", "c", "d"]
    pool = order_practice(steps)
    assert len(pool) == len({tuple(p) for p in pool}) == 26
    assert all(2 <= len(p) <= 3 and p != [s for s in steps if s in p] for p in pool)


def test_generate_warns_when_a_rule_writes_fewer_practice_questions(tmp_path, capsys):
    out = tmp_path / "w"
    assert skillworld(["generate", "--split", "test", "--n", "6", "--seed", "5", "--out", str(out),
                       "--filler", str(DEFAULT_FIXTURE), "--practice-per-skill", "30"]) == 0
    err = capsys.readouterr().err
    man = json.loads((out / "manifest.json").read_text())
    assert man["practice"]["short"] and "fewer distinct practice instances" in err
    rows = (out / "practice.jsonl").read_text().splitlines()
    assert len(rows) == man["practice"]["written"] == 5 * 30 + 26
