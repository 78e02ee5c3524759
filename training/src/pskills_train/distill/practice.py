"""Practice questions for distillation, only from what a person has (docs/distill.md "Practice").

The same sources, names and rules as the studio's common/distill/practice.ts (one implementation in
two languages; tests/fixtures/practice-cases.json pins source names, wordings and whole questions):

- `tests`: the skill's own test prompts (studio tests; a SkillWorld world's practice.jsonl), then
  TEST_VARIANTS copies of each with its numbers redrawn (`test_variants`);
- `examples`: the Examples section's request/reply pairs (the reply is the answer);
- `trajectories`: stored chats that used the skill (the last assistant turn is the answer);
- `user`: questions typed in the studio's practice panel;
- `requests`: requests that *use* the skill, one section after another, with slot values from the
  skill's own text and a generic lexicon (practice_synth.py; it knows nothing of any generator);
- `self_written`: requests the teacher (the base with the skill in context) writes, filtered;
- `cloze`: one question per section (heading -> body), so recall reaches every section;
- `template`: the practice half of the template synthesizer's questions about the skill.

A question with `answer` None is answered by the teacher's own greedy answer; with an answer, the
teacher is teacher-forced on it. Without `examples` among the sources, nothing comes from the
Examples: not requests, cloze, template answers nor slot values. Never put scored tasks here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..synth.skill import Skill
from ..synth.template import QUESTIONS, section_kind
from .practice_synth import cloze, examples, requests, template
from .practice_text import fnv, own_body, without_examples  # noqa: F401 (fnv: re-exported)

SOURCES = ("tests", "examples", "trajectories", "user", "requests", "self_written", "cloze", "template")
OWNED = ("tests", "examples", "trajectories", "user")  # what the person wrote or ran; the rest is made
MIN_QUESTIONS = 32  # a skill without tests practises on at least this many from the other sources
HOLD_OUT_EVERY = 4  # one test in this many judges the adapter instead of training it

WRITE_PROMPT = (
    "Write {n} different requests that a user of this skill might send{about}. Vary the details"
    " (names, numbers, items) and the wording. Write only the requests, one per line, with no"
    " numbering and no answers."
)
WRITE_PER_PROMPT = 4
WRITE_PROMPTS = 8
WRITE_TOKENS = 192  # a writer reply: four requests
# How the teacher samples a reply, prompt i with seed i (HF's processors in that order, then a mulberry32
# draw: scoring/sample.py, as the studio's engine). Greedy, a small base writes one request under every
# prompt, and the filter drops the copies as duplicates.
WRITE_SAMPLING = {"temperature": 0.8, "top_p": 0.95, "repetition_penalty": 1.1}


@dataclass
class Question:
    messages: list[dict[str, str]]  # the chat before the answer (no skill text in it)
    source: str
    answer: str | None = None  # None: the teacher answers greedily
    meta: dict[str, Any] = field(default_factory=dict)


class NoPractice(ValueError):
    """A skill with no usable practice question: says which sources were tried."""


def _user(q: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": q}]


def split_tests(
    tests: list[dict[str, Any]], seed: int = 0, every: int = HOLD_OUT_EVERY
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(practised, held out): a seeded 1 in `every` of the tests held out, none below `every` tests."""
    if len(tests) < every:
        return list(tests), []
    order = sorted(range(len(tests)), key=lambda i: (fnv(seed, "holdout", _test_id(tests[i])), i))
    out = set(order[: len(tests) // every])
    return [t for i, t in enumerate(tests) if i not in out], [t for i, t in enumerate(tests) if i in out]


def _test_id(r: dict[str, Any]) -> str:
    return str(r.get("id") or r.get("task_id") or r.get("prompt") or "")


def write_prompts(headings: list[str]) -> list[str]:
    """The prompts a writer answers (with the skill as practice may see it as the system message)."""
    abouts = ["", *(f' about "{h}"' for h in headings)][:WRITE_PROMPTS]
    return [WRITE_PROMPT.replace("{n}", str(WRITE_PER_PROMPT)).replace("{about}", a) for a in abouts]


def write_headings(skill: Skill) -> list[str]:
    """The headings a writer is asked about: each section with text of its own, but the Examples."""
    return [
        s.heading
        for i, s in enumerate(skill.sections)
        if section_kind(s.heading) != "examples" and own_body(skill, i).strip()
    ]


# Spelled out, as Python's \s, \d and str.strip differ from JavaScript's at the edges (U+0085, U+FEFF,
# other scripts' digits): the filter must read a line the same in both (common/distill/practice.ts).
_WS = "[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_SPACES = re.compile(f"{_WS}+")
_EDGES = re.compile(f"^{_WS}+|{_WS}+\\Z")
_NUMBERING = re.compile(f"^{_WS}*(?:[-+•]|\\*(?!\\*)|[0-9]+[.):]){_WS}*")  # not the first * of **Request:**
_LABEL = re.compile(f"^{_WS}*(?:\\*\\*)?(?:request|user|q)(?:\\*\\*)?{_WS}*:(?:\\*\\*)?{_WS}*", re.I)
_QUOTES = re.compile("^[\"“'`]+|[\"”'`]+\\Z")


def _trim(s: str) -> str:
    return _EDGES.sub("", s)


def _key(s: str) -> str:
    return re.sub(r"[.!?]+\Z", "", _trim(_SPACES.sub(" ", s.lower())))


COPY_WORDS = 4  # a request that repeats this many words of the skill in a row copies it


def _copies(k: str, grams: set[str]) -> bool:
    w = [x for x in re.split(r"[\W_]+", k) if x]
    return any(" ".join(w[i : i + COPY_WORDS]) in grams for i in range(len(w) - COPY_WORDS + 1))


def filter_written(
    replies: list[str], skill_text: str, seen: set[str] | None = None
) -> tuple[list[str], dict[str, int]]:
    """Requests out of a writer's replies: one a line, numbering, labels and quotes off; empties,
    duplicates and copies of the skill's own sentences dropped and counted."""
    seen = set() if seen is None else seen
    dropped = {"empty": 0, "duplicate": 0, "copy": 0}
    skill = _key(re.sub(r"[*_`#>]+", "", skill_text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")))
    words = [w for w in re.split(r"[\W_]+", skill) if w]
    grams = {" ".join(words[i : i + COPY_WORDS]) for i in range(len(words) - 3)}
    kept: list[str] = []
    for line in (ln for r in replies for ln in r.split("\n")):
        q = _trim(_QUOTES.sub("", _LABEL.sub("", _NUMBERING.sub("", line, count=1), count=1)))
        k = _key(q)
        if len(k) < 3 or len(k) > 600:
            dropped["empty"] += 1
        elif k in seen:
            dropped["duplicate"] += 1
        elif (len(k) >= 12 and k in skill) or _copies(k, grams):
            dropped["copy"] += 1
        else:
            seen.add(k)
            kept.append(q)
    return kept, dropped


Writer = Callable[[str, list[str]], list[str]]  # (system text, prompts) -> one reply per prompt


def self_written(skill: Skill, writer: Writer) -> tuple[list[str], dict[str, int]]:
    """Requests the writer (the teacher with the skill in context) writes for this skill, filtered."""
    replies = writer(skill.text, write_prompts(write_headings(skill)))
    return filter_written(replies, skill.text)


def from_tests(rows: list[dict[str, Any]]) -> list[Question]:
    """Test rows ({"messages": [...]} or {"prompt": str}) -> questions the teacher answers."""
    out = []
    for r in rows:
        msgs = [m for m in r.get("messages") or [] if m.get("role") != "system"]
        if r.get("prompt") is not None:
            msgs = _user(r["prompt"]) if r["prompt"].strip() else []
        # A chat that ends on an answer, or an empty turn, asks nothing (as common/distill/practice.ts).
        if msgs and msgs[-1].get("role") != "assistant" and msgs[-1].get("content", "").strip():
            out.append(Question([dict(m) for m in msgs], "tests", None, {"id": r.get("task_id") or r.get("id")}))
    return out


TEST_VARIANTS = 3  # copies of each test with its numbers redrawn (the teacher answers them)


def _redrawn(text: str, to: dict[str, str]) -> str:
    return re.sub(r"[0-9]+", lambda x: to.get(x.group(0), x.group(0)), text)


def test_variants(questions: list[Question], n: int = TEST_VARIANTS, seed: int = 0) -> list[Question]:
    """Copies of test questions with every number of the chat redrawn (as many digits; one mapping per
    copy, so a tool call and its result keep the request's numbers): the test's shape on other items,
    so the adapter copies a request's items instead of learning the tests' own."""
    out: list[Question] = []
    for v in range(n):
        for k, q in enumerate(questions):
            found = dict.fromkeys(x for t in q.messages for x in re.findall(r"[0-9]+", t.get("content", "")))
            to: dict[str, str] = {}
            for r in (x for x in found if len(x) <= 9):
                lo = 1 if len(r) == 1 else 10 ** (len(r) - 1)
                to[r] = str(lo + fnv(seed, "test-variant", k, v, r) % (10 ** len(r) - lo))
            if to:
                msgs = [{**t, "content": _redrawn(t.get("content", ""), to)} for t in q.messages]
                out.append(Question(msgs, q.source, None, {**q.meta, "variant": v}))
    return out


def from_trajectories(rows: list[dict[str, Any]]) -> list[Question]:
    out = []
    for r in rows:
        msgs = list(r.get("messages") or [])
        if len(msgs) >= 2 and msgs[-1].get("role") == "assistant" and msgs[-1].get("content", "").strip():
            out.append(
                Question([m for m in msgs[:-1] if m.get("role") != "system"], "trajectories", msgs[-1]["content"])
            )
    return out


def gather(
    skill: Skill,
    sources: tuple[str, ...],
    tests: list[dict[str, Any]] | None = None,
    trajectories: list[dict[str, Any]] | None = None,
    n_requests: int = 24,
    seed: int = 0,
    limit: int | None = None,
    owned_share: float = 0.75,
    writer: Writer | None = None,
    user: list[str] | None = None,
    report: dict[str, Any] | None = None,
) -> list[Question]:
    """Questions from the named sources, at most `limit`: the person's own first, up to `owned_share`
    of the limit, then the made ones; each group round-robin over its sources. `report`, when
    given, receives the self-written requests dropped by kind."""
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown practice sources {sorted(unknown)}; known: {', '.join(SOURCES)}")
    seen = skill if "examples" in sources else without_examples(skill)
    made: dict[str, list[Question]] = {s: [] for s in SOURCES}
    if "tests" in sources:
        made["tests"] = from_tests(tests or [])
        made["tests"] += test_variants(made["tests"], TEST_VARIANTS, seed)
    if "examples" in sources:
        made["examples"] = [Question(_user(d.question), "examples", d.answer) for d in examples(seen, seed)]
    if "trajectories" in sources:
        made["trajectories"] = from_trajectories(trajectories or [])
    if "user" in sources:
        made["user"] = [Question(_user(q), "user") for q in user or []]
    if "self_written" in sources and writer is not None:
        kept, dropped = self_written(seen, writer)
        made["self_written"] = [Question(_user(q), "self_written") for q in kept]
        if report is not None:
            report["dropped"] = dropped
    if "cloze" in sources:
        made["cloze"] = [Question(_user(d.question), "cloze", d.answer) for d in cloze(seen)]
    if "template" in sources:
        made["template"] = [Question(_user(d.question), "template", d.answer) for d in template(seen)]
    if "requests" in sources:
        others = sum(len(v) for k, v in made.items() if k != "requests")
        need = 0 if made["tests"] else MIN_QUESTIONS - others
        made["requests"] = [
            Question(_user(d.question), "requests") for d in requests(seen, max(n_requests, need), seed)
        ]
    tried = [s for s in SOURCES if s in sources]
    if not any(made[s] for s in tried):
        raise NoPractice(
            f"{skill.name}: no usable practice question; tried "
            + ", ".join(f"{s} (none)" for s in tried)
            + " (add tests, an Examples section with Request:/Reply: pairs, or sections with text)"
        )
    owned = _round_robin([made[s] for s in OWNED if s in sources])
    synth = _round_robin([made[s] for s in SOURCES if s in sources and s not in OWNED])
    if limit is None:
        return _deduped(owned + synth)
    # The person's own questions first (they use the skill as the person does), up to owned_share of
    # the limit; the made ones fill the rest, so every section still gets a question.
    n_owned = min(len(owned), max(limit - len(synth), round(limit * owned_share)))
    return _deduped(owned[:n_owned] + synth[: limit - n_owned])


def _deduped(qs: list[Question]) -> list[Question]:
    seen: set[str] = set()
    out = []
    for q in qs:
        k = q.messages[-1]["content"] if q.messages else ""
        if k not in seen:
            seen.add(k)
            out.append(q)
    return out


def _round_robin(per: list[list[Question]]) -> list[Question]:
    out: list[Question] = []
    for i in range(max((len(p) for p in per), default=0)):
        out += [p[i] for p in per if i < len(p)]
    return out


REDRAWN = "tests_redrawn"  # the count of the tests' copies (a test's count stays the person's own)


def counts(questions: list[Question]) -> dict[str, int]:
    out: dict[str, int] = {}
    for q in questions:
        k = REDRAWN if q.source == "tests" and "variant" in q.meta else q.source
        out[k] = out.get(k, 0) + 1
    return out


__all__ = [
    "SOURCES",
    "Question",
    "NoPractice",
    "gather",
    "counts",
    "examples",
    "template",
    "cloze",
    "requests",
    "from_tests",
    "test_variants",
    "from_trajectories",
    "split_tests",
    "filter_written",
    "write_prompts",
    "write_headings",
    "self_written",
    "QUESTIONS",
]
