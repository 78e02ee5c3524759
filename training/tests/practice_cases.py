"""Writes tests/fixtures/practice-cases.json from the Python practice (run by hand after a deliberate
change to the practice rules; both test_distill_practice_cases.py and the vitest then check it):

    PYTHONPATH=training/src python training/tests/practice_cases.py
"""

from __future__ import annotations

import json
from pathlib import Path

from pskills_train.distill import practice as P
from pskills_train.distill.practice_synth import CLOZE, FRAMES, LEXICON, SLOT_FORMS
from pskills_train.synth.skill import skill_from_text

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "practice-cases.json"

SHIP = """---
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
3. Call notes.lookup(change=ID) for the ticket's title.

## Examples
Request: Notes for ticket 4411
Reply: `api: faster list endpoint (4411)`

## Pitfalls
Never list internal refactors; users cannot see them and the notes get long.
"""

LESSON = """---
name: lesson-sums
description: Add the numbers of a request.
---
## Rule
Answer with the sum of every number in the request, and nothing else.

## Examples
- "Add 3 and 4" → 7
- "What is 10 plus 5?" → 15
"""

TESTS = [
    {"id": f"t{i}", "prompt": f"Notes for the change of {d}"}
    for i, d in enumerate(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "the week"])
]


def skill_files() -> list[tuple[str, str]]:
    out = [("ship-notes/SKILL.md", SHIP), ("lesson-sums/SKILL.md", LESSON)]
    for rel in (
        "skillworld/distill/skills/brotro-mixtus/SKILL.md",
        "skillworld/filler/release-notes/skills/write-release-notes/SKILL.md",
    ):
        out.append((rel, (ROOT / "tests" / "fixtures" / rel).read_text()))
    return out


def case(path: str, text: str, sources: tuple[str, ...], tests=None, written=None, seed=0, limit=None) -> dict:
    skill = skill_from_text(text, path)
    writer = (lambda system, prompts: written) if written is not None else None
    report: dict = {}
    qs = P.gather(skill, sources, tests=tests, seed=seed, limit=limit, writer=writer, report=report)
    return {
        "path": path,
        "name": skill.name,
        "description": skill.description,
        "text": text,
        "sources": list(sources),
        "tests": tests or [],
        "written": written,
        "seed": seed,
        "limit": limit,
        "expect": {
            "questions": [
                {
                    "question": q.messages[-1]["content"],
                    "source": q.source,
                    **({"answer": q.answer} if q.answer is not None else {}),
                }
                for q in qs
            ],
            "counts": P.counts(qs),
            "dropped": report.get("dropped"),
        },
    }


def main() -> None:
    studio = ("tests", "examples", "requests", "self_written", "cloze", "template")
    synth = ("requests", "cloze", "template")
    cases = []
    for path, text in skill_files():
        cases.append(case(path, text, studio))
        cases.append(case(path, text, synth, seed=3))
    cases.append(case("ship-notes/SKILL.md", SHIP, studio, tests=TESTS[:5], seed=1, limit=40))
    cases.append(
        case(
            "ship-notes/SKILL.md",
            SHIP,
            studio,
            written=[
                "1. Notes for the search change we shipped on Tuesday",
                "- Request: Write notes for the export fix",
                "",
                "Notes for the search change we shipped on Tuesday.",
                "Write one line per user-visible change, starting with the area.",
                '"Summarise the deploy of build 52 for me"',
            ],
        )
    )
    written = {
        "skill": SHIP,
        "replies": [
            "1. A\n2. Summarise Friday's deploy\n- summarise friday's deploy!",
            "Never list internal refactors; users cannot see them and the notes get long",
            "Request: notes for the login fix, please",
        ],
    }
    kept, dropped = P.filter_written(list(written["replies"]), SHIP)
    holdout = [
        {"tests": TESTS[:n], "seed": s, "held_out": [t["id"] for t in P.split_tests(TESTS[:n], s)[1]]}
        for n, s in ((3, 0), (4, 0), (7, 1), (8, 2))
    ]
    doc = {
        "_doc": "Practice cases: common/distill/practice.ts and training/src/pskills_train/distill/practice.py"
        ' must give `expect` for each. Written by training/tests/practice_cases.py; see docs/distill.md "Practice".',
        "sources": list(P.SOURCES),
        "owned": list(P.OWNED),
        "min_questions": P.MIN_QUESTIONS,
        "hold_out_every": P.HOLD_OUT_EVERY,
        "cloze": list(CLOZE),
        "write_prompt": P.WRITE_PROMPT,
        "write_prompts": P.write_prompts(["When to use", "Steps"]),
        "frames": list(FRAMES),
        "slot_forms": list(SLOT_FORMS),
        "lexicon": {k: list(v) for k, v in LEXICON.items()},
        "hash": [{"parts": p, "value": P.fnv(*p)} for p in ([0, "a"], [3, "ship-notes", "slot", 7, "n"], ["é", 1])],
        "written": {**written, "kept": kept, "dropped": dropped},
        "holdout": holdout,
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
