"""Practice questions for distillation: sources, the disjoint template halves, SkillWorld practice."""

from __future__ import annotations

import pytest

from pskills_train.distill.practice import NoPractice, counts, examples, gather
from pskills_train.skillworld import generate
from pskills_train.synth.skill import skill_from_text
from pskills_train.synth.template import TemplateSynthesizer

SKILL = """---
name: ship-notes
description: Write release notes for a shipped change. Keeps notes short.
---
# Ship notes

## When to use
- writing release notes for a merged change
- summarising a deploy

## Steps
1. Read the merged change and its ticket.
2. Write one line per user-visible change, starting with the area.

## Examples
Request: Notes for ticket 4411
Reply: `api: faster list endpoint (4411)`

## Pitfalls
Never list internal refactors; users cannot see them and the notes get long.
"""


def test_every_source_gives_questions_and_counts_them():
    skill = skill_from_text(SKILL, "ship-notes/SKILL.md")
    qs = gather(skill, ("tests", "examples", "template", "cloze", "requests"),
                tests=[{"prompt": "Notes for ticket 77"}], n_requests=6)
    c = counts(qs)
    assert c["tests"] == 1 and c["examples"] == 1 and c["requests"] == 6
    assert c["cloze"] >= 3 and c["template"] >= 3
    ex = examples(skill)[0]
    assert ex.messages[0]["content"] == "Notes for ticket 4411" and ex.answer == "api: faster list endpoint (4411)"
    assert all("ship-notes" not in (q.answer or "") or q.source != "requests" for q in qs)


def test_template_halves_never_share_a_question():
    skill = skill_from_text(SKILL, "ship-notes/SKILL.md")
    for seed in range(5):
        ev = {q for _, _, q, _ in TemplateSynthesizer(seed=seed, half="eval").qa_pairs(skill)}
        pr = {q for _, _, q, _ in TemplateSynthesizer(seed=seed, half="practice").qa_pairs(skill)}
        assert ev and pr and not ev & pr


def test_no_usable_question_names_the_sources_tried():
    bare = skill_from_text("---\nname: x\ndescription: \n---\nhi\n", "x/SKILL.md")
    with pytest.raises(NoPractice, match="tried tests, examples"):
        gather(bare, ("tests", "examples"))


def test_skillworld_practice_leaves_the_world_unchanged_and_is_disjoint():
    a = generate("test", 12, 3, practice_per_skill=0)
    b = generate("test", 12, 3, practice_per_skill=8)
    assert [t.to_json() for t in a.tasks] == [t.to_json() for t in b.tasks]
    assert [s.text for s in a.skills] == [s.text for s in b.skills]
    assert len(b.practice) == 12 * 8
    scored = {(t.skill, t.messages[0]["content"]) for t in b.tasks}
    assert not scored & {(t.skill, t.messages[0]["content"]) for t in b.practice}


def test_a_limit_takes_the_users_own_questions_first_and_keeps_synthesized_ones():
    skill = skill_from_text(SKILL, "ship-notes/SKILL.md")
    tests = [{"prompt": f"Notes for ticket {i}"} for i in range(40)]
    qs = gather(skill, ("tests", "examples", "template", "cloze", "requests"), tests=tests, limit=20)
    c = counts(qs)
    assert len(qs) == 20 and c["tests"] + c["examples"] == 15  # three quarters owned
    assert [q.source for q in qs[:2]] == ["tests", "examples"]  # round-robin inside the owned group
    few = gather(skill, ("tests", "cloze"), tests=tests[:2], limit=20)
    assert counts(few)["tests"] == 2 and len(few) == 2 + min(18, counts(few)["cloze"])  # synthesized ones fill
