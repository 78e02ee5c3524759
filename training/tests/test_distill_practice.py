"""Practice questions for distillation: the shared cases (tests/fixtures/practice-cases.json, also run by
tests/unit/distill-practice.test.ts), sources, the disjoint template halves, SkillWorld practice."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pskills_train.distill import practice as P
from pskills_train.distill import practice_text as T
from pskills_train.distill.practice import NoPractice, counts, examples, gather
from pskills_train.distill.practice_synth import CLOZE, EXAMPLE_VARIANTS, FRAMES, LEXICON, requests
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
    qs = gather(
        skill,
        ("tests", "examples", "template", "cloze", "requests"),
        tests=[{"prompt": "Notes for ticket 77"}],
        n_requests=6,
    )
    c = counts(qs)
    # the test and the pair, each with its copies
    assert (
        c["tests"] == 1
        and c[P.REDRAWN] == P.TEST_VARIANTS
        and c["examples"] == 1 + EXAMPLE_VARIANTS
        and c["requests"] == 6
    )
    assert c["cloze"] >= 3 and c["template"] >= 3
    ex = examples(skill)[0]
    assert ex.question == "Notes for ticket 4411" and ex.answer == "api: faster list endpoint (4411)"
    assert all("ship-notes" not in (q.answer or "") or q.source != "requests" for q in qs)


def test_template_halves_never_share_a_question():
    skill = skill_from_text(SKILL, "ship-notes/SKILL.md")
    for seed in range(5):
        ev = {q for _, _, q, _ in TemplateSynthesizer(seed=seed, half="eval").qa_pairs(skill)}
        pr = {q for _, _, q, _ in TemplateSynthesizer(seed=seed, half="practice").qa_pairs(skill)}
        assert ev and pr and not ev & pr


def test_no_usable_question_names_the_sources_tried():
    bare = skill_from_text("---\nname: x\ndescription: \n---\nhi\n", "x/SKILL.md")
    with pytest.raises(NoPractice, match=re.escape("tried tests (none), examples (none)")):
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
    plain = [{"prompt": "Notes for the deploy"}, {"prompt": "Notes for the hotfix"}]  # no numbers: no copies
    few = gather(skill, ("tests", "cloze"), tests=plain, limit=20)
    assert counts(few)["tests"] == 2 and len(few) == 2 + min(18, counts(few)["cloze"])  # synthesized ones fill


CASES = json.loads((Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "practice-cases.json").read_text())


def test_shared_names_wordings_and_hash():
    assert list(P.SOURCES) == CASES["sources"] and list(P.OWNED) == CASES["owned"]
    assert P.MIN_QUESTIONS == CASES["min_questions"] and P.HOLD_OUT_EVERY == CASES["hold_out_every"]
    assert list(CLOZE) == CASES["cloze"] and list(FRAMES) == CASES["frames"]
    assert (
        P.WRITE_PROMPT == CASES["write_prompt"] and P.write_prompts(["When to use", "Steps"]) == CASES["write_prompts"]
    )
    assert {k: list(v) for k, v in LEXICON.items()} == CASES["lexicon"]
    assert all(P.fnv(*h["parts"]) == h["value"] for h in CASES["hash"])


def test_shared_written_filter_and_holdout():
    w = CASES["written"]
    assert P.filter_written(w["replies"], w["skill"]) == (w["kept"], w["dropped"])
    for h in CASES["holdout"]:
        assert [t["id"] for t in P.split_tests(h["tests"], h["seed"])[1]] == h["held_out"]


def test_shared_parroted_answers():
    f = CASES["parrots"]
    numbers = T.example_numbers(skill_from_text(f["skill"]))
    assert sorted(numbers) == f["example_numbers"]
    assert [T.parrots(a["answer"], a["asked"], numbers) for a in f["answers"]] == [a["parrots"] for a in f["answers"]]


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: f"{c['path']}:{','.join(c['sources'])}")
def test_shared_cases(case):
    skill = skill_from_text(case["text"], case["path"])
    assert (skill.name, skill.description) == (case["name"], case["description"])
    writer = (lambda system, prompts: case["written"]) if case["written"] is not None else None
    report: dict = {}
    qs = gather(
        skill,
        tuple(case["sources"]),
        tests=case["tests"],
        seed=case["seed"],
        limit=case["limit"],
        writer=writer,
        report=report,
    )
    got = [
        {
            "question": q.messages[-1]["content"],
            "source": q.source,
            **({"answer": q.answer} if q.answer else {}),
            **({"messages": q.messages} if len(q.messages) > 1 else {}),  # a chat (common/distill/practice.ts)
            **({"redrawn": True} if "variant" in q.meta else {}),
        }
        for q in qs
    ]
    assert got == case["expect"]["questions"] and counts(qs) == case["expect"]["counts"]
    assert report.get("dropped") == case["expect"]["dropped"]
    if not case["tests"] and case["limit"] is None:
        assert len(qs) >= P.MIN_QUESTIONS


def test_synth_practice_takes_nothing_from_the_examples():
    skill = skill_from_text(SKILL, "ship-notes/SKILL.md")
    qs = gather(
        skill,
        ("requests", "cloze", "template", "self_written"),
        writer=lambda system, prompts: ["Notes for the login fix"] if "4411" not in system else ["LEAK"],
    )
    blob = json.dumps([(q.messages, q.answer) for q in qs])
    assert "4411" not in blob and "faster list endpoint" not in blob and "LEAK" not in blob


def test_requests_cover_every_section_without_a_generator_slot_format():
    qs = [d.question for d in requests(skill_from_text(SKILL, "ship-notes/SKILL.md"), 24)]
    for topic in ("release notes", "merged change", "internal refactors"):
        assert any(topic in q for q in qs), topic
    assert not [q for q in qs if re.search(r"\b(?:invoice|order|ticket|batch|badge|parcel|crate) \d{3,4}\b", q)]


def test_tests_as_chat_practise_their_chat_and_a_chat_that_ends_on_an_answer_asks_nothing():
    chat = [
        {"role": "system", "content": "dropped: the skill is the system turn"},
        {"role": "user", "content": "Look up order 12."},
        {"role": "assistant", "content": 'lookup(order="12")'},
        {"role": "tool", "content": '{"status": "shipped"}'},
    ]
    rows = [
        {"id": "chat", "messages": chat},
        {"id": "answered", "messages": chat[1:3]},
        {"id": "empty", "messages": [{"role": "user", "content": "  "}]},
        {"id": "prompt", "prompt": "File ticket 5."},
    ]
    got = P.from_tests(rows)
    assert [q.messages for q in got] == [chat[1:], [{"role": "user", "content": "File ticket 5."}]]
