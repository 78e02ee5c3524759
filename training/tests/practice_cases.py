"""Writes tests/fixtures/practice-cases.json from the Python practice (run by hand after a deliberate
change to the practice rules; both test_distill_practice_cases.py and the vitest then check it):

    PYTHONPATH=training/src python training/tests/practice_cases.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pskills_train.distill import practice as P
from pskills_train.distill import practice_text as T
from pskills_train.distill import round_trip as R
from pskills_train.distill.practice_synth import CLOZE, FRAMES, LEXICON, SLOT_FORMS
from pskills_train.distill.sections import SectionIndex, focused, split_sections
from pskills_train.scoring import sample as S
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
                    **({"messages": q.messages} if len(q.messages) > 1 else {}),
                    **({"redrawn": True} if "variant" in q.meta else {}),
                }
                for q in qs
            ],
            "counts": P.counts(qs),
            "dropped": report.get("dropped"),
        },
    }


# Tests with numbers: each gets TEST_VARIANTS copies with its numbers redrawn (a chat's turns alike).
NUMBERED = [
    {"id": "n0", "prompt": "Notes for ticket 4411 and build 52"},
    {"id": "n1", "prompt": "Notes for the change of Monday"},
    {
        "id": "n2",
        "messages": [
            {"role": "user", "content": "Notes for change 812, please"},
            {"role": "assistant", "content": "notes.lookup(change=812)"},
            {"role": "tool", "content": '{"title": "faster export (812)", "n": 7}'},
        ],
    },
]

# Greedy teacher answers that parrot SHIP's example (its Examples-only number: 4411): (answer, chat).
PARROTS = [
    ("api: faster list endpoint (4411)", "Notes for the export fix"),
    ("api: faster list endpoint (4411)", "Notes for ticket 4411"),
    ("api: 4411 and 52", "Notes for ticket 52"),
    ("api: 44110", "Notes for the export fix"),
    ("api: 52", "Notes for the export fix"),
    ("", ""),
]


BOOKINGS = "# Bookings\n\n## Tools\n\n- `find_booking(who)`: a booking by the guest's name.\n"

DETECT = [
    'lookup(id="x")',
    'CALL fetch_booking(ref="A-12", day=3)',
    "I will run `weather.get(city: 'Oslo')` now.",
    "get_order(42)",
    "First a(b), then c(d=1).",
    "größe(wert=3)",
    "get_total(\u0663)",
    '{"tool": "search", "arguments": {"q": "maple"}}',
    '```json\n{"function": {"name": "send", "parameters": {"to": "Mei"}}}\n```',
    '{"name": "lookup", "arguments": "{\\"id\\": 3}"}',
    '{"tool_name": " find ", "input": {"city": "Zürich", "n": [1, 2], "ok": true, "x": null}}',
    '{"name": " ", "tool": "t", "args": {}}',
    "\x85lookup(id=1)\x1f",
    "a" * 230 + " f(x=1)",
    # no call
    "The total (about 40) is fine.",
    "Use the form (see above).",
    "Der Preis (ca. 40 €) ist gut.",
    "call it()",
    "send (to=1)",
    "über(x=1)",
    '{"name": "Dana"}',
    '{"tool": "x", "arguments": null}',
    "{not json}",
    "x" * 300 + ' lookup(id="x")',
    "",
    " \n ",
]

NAMES_TOOL = [
    (BOOKINGS, "find_booking"),
    (BOOKINGS, "FIND_BOOKING"),
    (BOOKINGS, "find_book"),
    (BOOKINGS, "api.find_booking"),
    ("Use api.find_booking(x).", "find_booking"),
    ("Call `Weather.get(city)` first.", "weather.get"),
    ("Always answer with the codeword.", "lookup_codeword"),
    ("Use the lookup tool.", "lookup"),
    ("Use the lookup-tool.", "lookup"),
    ("Use LOOKUP.", "lookup"),
    ("call a+b(x) now", "a+b"),
    ("Nutze größe_rechnen.", "größe_rechnen"),
    ("Nutze übergröße.", "größe"),
]


def round_trip_cases() -> dict:
    def call(c: R.Call | None) -> dict | None:
        return None if c is None else {"name": c.name, "args": c.args}

    user = [{"role": "user", "content": "find the booking for Dana"}]
    said = [
        (user, "requests", ' find_booking(who="Dana") '),
        ([{"role": "user", "content": "what is the rule?"}], "cloze", "Always x."),
        ([{"role": "user", "content": "find it again"}], "self_written", 'find_booking(who="Dana")'),
        (
            [*user, {"role": "assistant", "content": 'find_booking(who="x")'}, {"role": "tool", "content": "{}"}],
            "tests",
            'find_booking(who="Mei")',
        ),
        ([{"role": "user", "content": "and for Ravi?"}], "requests", "\x85find_booking(who='Ravi')\n"),
        ([{"role": "user", "content": "look it up"}], "requests", 'lookup_codeword(w="x")'),
        (
            [{"role": "user", "content": "json please"}],
            "self_written",
            '{"tool": "find_booking", "args": {"who": "Lena"}}',
        ),
    ] + [([{"role": "user", "content": f"req {i}"}], "requests", f"find_booking(i={i})") for i in range(10)]
    follow = []
    for seed, cap in ((7, R.CAP), (0, 3)):
        qs = [(P.Question([dict(m) for m in msgs], src), ans) for msgs, src, ans in said]
        follow.append(
            {
                "skill": BOOKINGS,
                "seed": seed,
                "cap": cap,
                "said": [{"messages": msgs, "source": src, "answer": ans} for msgs, src, ans in said],
                "expect": [
                    {"question": q.messages[-1]["content"], "source": q.source, "messages": q.messages}
                    for q in R.follow_ups(qs, seed, BOOKINGS, cap)
                ],
            }
        )
    keys = [[0, R.SOURCE, "find the booking for Dana", 'find_booking(who="Dana")'], ["é", 3]]
    keys += [[7, R.SOURCE, f"req {i}", f"f(i={i})"] for i in range(14)]
    return {
        "source": R.SOURCE,
        "cap": R.CAP,
        "max_call_chars": R.MAX_CALL_CHARS,
        "lexicon": {k: list(v) for k, v in R.RESULT_LEXICON.items()},
        "shapes": list(R.SHAPES),
        "detect": [{"answer": a, "call": call(R.detect_call(a))} for a in DETECT],
        "names_tool": [{"skill": t, "name": n, "names": R.names_tool(t, n)} for t, n in NAMES_TOOL],
        "result_text": [{"key": k, "text": R.result_text(*k)} for k in keys],
        "follow_ups": follow,
    }


GROESSE = """---
name: datei-pruefer
description: Prüft Dateien vor dem Upload.
---
# Datei-Prüfer

Prüfe die **Größe** jeder Datei, bevor du sie hochlädst.

## Wann

## Schritte
1. Prüfe die Größe jeder Datei.
2. Melde Dateien über 10 MB.

```
## not a heading (in a fence)
```

### Sonderfälle
Leere Dateien zählen als Fehler.

## Sample requests
- Prüfe bericht.pdf
"""

# Writer replies as a small base writes them: numbering, labels, quotes, spacing, case, other scripts'
# spaces and digits, copies of the skill, empties (docs/distill.md "Practice").
WRITTEN = [
    (
        SHIP,
        [
            "1. Notes for the search change we shipped on Tuesday\n"
            "2) notes for the search change we shipped on tuesday!\n"
            "\u2022 NOTES FOR THE SEARCH CHANGE   WE SHIPPED ON TUESDAY?",
            "**Request:** Summarise the deploy of build 52\nQ: summarise the deploy of build 52.\n"
            "User: \u201cSummarise the deploy of build 52\u201d",
            "Write one line per user-visible change, starting with the area.\n"
            "Please read the merged change and its ticket today\nNever list internal refactors",
            "\n   \n-\n1.\nok\n\u00a0\u00a0\n\U0001f44d\U0001f44d\n\U0001f44d\U0001f44d\U0001f44d",
            "Notes\u00a0for the\u3000login fix\nnotes for the login fix\n\ufeffNotes for the billing fix\n"
            "\x85Notes for the export fix\x85\nNotes for the API fix\r\n\u0663. Notes for the cache fix",
            "x" * 601 + "\n- " + "y" * 600,
            "3: 'Notes for ticket 9001'\n`Notes for ticket 9001`",
        ],
    ),
    (
        GROESSE,
        [
            "Bitte prüfe die Größe jeder Datei sofort\nPRÜFE bericht.pdf\nPrüfe bericht.pdf!\n"
            "Straße-Datei über 12 MB melden\nStrasse-Datei über 12 MB melden",
        ],
    ),
]


def _f32(xs) -> list[float]:
    return [float(x) for x in np.asarray(xs, dtype=np.float32)]


def self_written_cases() -> dict:
    """The writer's prompts, sampling (the engine's processors and generator) and filter, case by case."""
    heads = [SHIP, LESSON, GROESSE, GROESSE.replace("\n", "\r\n")]
    heads.append("# T\n\nText.\n" + "".join(f"## H{i}\nBody {i}.\n" for i in range(9)))
    rng = np.random.RandomState(5)
    base = _f32(rng.normal(0, 2, 40))
    ties = _f32([1.5] * 6 + [0.25] * 6 + [-2.0] * 4)
    masked = _f32([3.0, -1e30, 2.5, -1.0, -1e30, 2.5, 0.0, -0.5])  # -1e30: masked before (JSON has no -inf)
    draws = []
    for logits, context, sampling, seed in (
        (base, [1, 2, 3, 3, 10, 39], P.WRITE_SAMPLING, 0),
        (base, [1, 2, 3, 3, 10, 39], P.WRITE_SAMPLING, 1),
        (base, [], {"temperature": 1.3, "top_p": 0.5, "repetition_penalty": 1.0}, 7),
        (base, [int(np.argmax(base))], {"temperature": 0.0, "top_p": 1.0, "repetition_penalty": 1.3}, 0),
        (ties, [0, 6], {"temperature": 0.8, "top_p": 0.6, "repetition_penalty": 1.1}, 3),
        (masked, [2], {"temperature": 2.0, "top_p": 0.95, "repetition_penalty": 1.1}, 2**32 - 1),
    ):
        s = S.Sampling(**sampling)
        gen = S.mulberry32(seed) if s.temperature else None
        arr = np.asarray(logits, dtype=np.float32)
        got = [S.draw(S.process(arr, context, s), gen) for _ in range(24)]
        draws.append({"logits": logits, "context": context, "sampling": sampling, "seed": seed, "draws": got})
    filters = []
    for skill, replies in WRITTEN:
        kept, dropped = P.filter_written(list(replies), skill)
        filters.append({"skill": skill, "replies": replies, "kept": kept, "dropped": dropped})
    return {
        "tokens": P.WRITE_TOKENS,
        "sampling": P.WRITE_SAMPLING,
        "prompts": [
            {"skill": t, "headings": (h := P.write_headings(skill_from_text(t))), "prompts": P.write_prompts(h)}
            for t in heads
        ],
        "rng": [
            {"seed": sd, "values": [g() for g in [S.mulberry32(sd)] for _ in range(6)]} for sd in (0, 1, 7, 2**32 - 1)
        ],
        "draws": draws,
        "filter": filters,
    }


def sections_cases() -> dict:
    """The long-skill teacher's section choice (distill/sections.py), with whitespace words as the count."""
    filler = "## Upgrade in small steps\n\nUpgrade one major version at a time and run the tests after each.\n\n"
    fence = "## Setup\n\n```bash\n## not a heading\npip install zorp\n```\n\n~~~\n## nor this\n~~~\n\n"
    keep = "## Keep it true\n\nRun the examples as tests. Zürich ünits.\n\n"
    long = SHIP + "\n" + filler + fence + filler + keep + filler

    def count(t: str) -> int:
        return len(t.split())

    queries = ["Notes for ticket 4411, please", "Upgrade the zorp setup with pip", "Keep it true: run the examples",
               "qqq", "notes.lookup(change=812)\n{\"title\": \"faster export\"}"]
    return {
        "text": long,
        "split": split_sections(long),
        "cases": [{"query": q, "budget": b, "scores": SectionIndex(long, count).scores(q),
                   "focused": focused(long, q, b, count)} for q in queries for b in (60, 120, 10_000)],
    }


def main() -> None:
    studio = ("tests", "examples", "requests", "self_written", "cloze", "template")
    synth = ("requests", "cloze", "template")
    cases = []
    for path, text in skill_files():
        cases.append(case(path, text, studio))
        cases.append(case(path, text, synth, seed=3))
    cases.append(case("ship-notes/SKILL.md", SHIP, studio, tests=TESTS[:5], seed=1, limit=40))
    cases.append(case("ship-notes/SKILL.md", SHIP, studio, tests=NUMBERED, seed=2, limit=40))
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
        "round_trip": round_trip_cases(),
        "self_written": self_written_cases(),
        "sections": sections_cases(),
        "parrots": {
            "skill": SHIP,
            "example_numbers": sorted(T.example_numbers(skill_from_text(SHIP))),
            "answers": [
                {"answer": a, "asked": q, "parrots": T.parrots(a, q, T.example_numbers(skill_from_text(SHIP)))}
                for a, q in PARROTS
            ],
        },
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
