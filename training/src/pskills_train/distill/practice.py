"""Practice questions for distillation, only from what a user has (docs/distill.md):

- `tests`: the skill's own test prompts (studio tests; a SkillWorld world's practice.jsonl);
- `examples`: request/reply pairs of the skill's Examples section (the reply is the answer);
- `trajectories`: stored chats that used the skill (the last assistant turn is the answer);
- `template`: the template synthesizer's questions *about* the skill, the practice half of its
  phrasings (the eval's real-skill tasks use the other half), answered with the section text;
- `cloze`: one question per section (heading -> body), so recall reaches sections nobody asked about;
- `requests`: requests that *use* the skill, built from its description, When to use, Tools and
  Examples with varied slot values (generic: it knows nothing of any generator).

A question with `answer` None is answered by the teacher's own greedy answer; with an answer, the
teacher is teacher-forced on it. Never put the tasks an evaluation scores here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..synth.skill import Skill
from ..synth.template import QUESTIONS, TemplateSynthesizer, clean_answer, rng_for, section_kind

SOURCES = ("tests", "examples", "trajectories", "template", "cloze", "requests")
OWNED = ("tests", "examples", "trajectories")  # what the user wrote or ran; the rest is synthesized


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


# Request / reply pairs as skills write them in Examples: "Request: …" / "Reply: …", "User:" /
# "Assistant:", "Input:" / "Output:", "Q:" / "A:", the reply inline, in backticks or in a fence.
_PAIR = re.compile(
    r"^\s*(?:\*\*)?(?:request|user|input|prompt|q|question)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(?P<q>.+?)\s*\n"
    r"(?:\s*\n)*\s*(?:\*\*)?(?:reply|assistant|output|response|a|answer)(?:\*\*)?\s*:\s*(?:\*\*)?[ \t]*"
    r"(?P<a>`[^`\n]+`|[^\n]*\S[^\n]*|\n+```[^\n]*\n(?P<fence>.*?)\n```)",
    re.I | re.M | re.S)


def examples(skill: Skill) -> list[Question]:
    out = []
    for sec in skill.sections:
        if section_kind(sec.heading) != "examples":
            continue
        for m in _PAIR.finditer(sec.body(skill.text)):
            a = m.group("fence") if m.group("fence") is not None else m.group("a").strip()
            if a.startswith("`") and a.endswith("`") and len(a) > 1:
                a = a[1:-1]
            q = m.group("q").strip().strip("`")
            if q and a.strip():
                out.append(Question(_user(q), "examples", a.strip()))
    return out


def template(skill: Skill, seed: int = 0) -> list[Question]:
    syn = TemplateSynthesizer(seed=seed, half="practice")
    return [Question(_user(q), "template", a, {"kind": k}) for k, _, q, a in syn.qa_pairs(skill)]


CLOZE = ("What does the \"{heading}\" section of {name} say?", "Recite the \"{heading}\" part of {name}.",
         "Quote {name}'s section \"{heading}\".")


def cloze(skill: Skill, seed: int = 0, max_chars: int = 1200, min_chars: int = 20) -> list[Question]:
    out = []
    for sec in skill.sections:
        body = clean_answer(sec.body(skill.text), max_chars)
        if len(body) < min_chars:
            continue
        q = rng_for(seed, skill.sha256, "cloze", sec.start).choice(CLOZE).format(heading=sec.heading, name=skill.name)
        out.append(Question(_user(q), "cloze", body, {"heading": sec.heading}))
    return out


NOUNS = ("order", "ticket", "file", "record", "invoice", "account", "report", "request", "entry", "case",
         "package", "item", "note", "task", "shipment", "document")
ASKS = ("Please handle {thing}.", "Can you take care of {thing}?", "I need help with {thing}.",
        "Here is {thing}. What do I do with it?", "Process {thing} for me.", "Deal with {thing}, please.",
        "Look into {thing}.", "Record {thing} and {thing2}.", "What should happen with {thing}?",
        "Did {thing} come through?", "Check {thing} and tell me the result.", "Update {thing}.")
_CALL = re.compile(r"\b([A-Za-z_][\w.-]*)\(\s*([A-Za-z_]\w*)\s*=")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+)$", re.M)


def _thing(rng) -> str:
    return f"{rng.choice(NOUNS)} {rng.randint(100, 9999)}"


def requests(skill: Skill, n: int = 24, seed: int = 0) -> list[Question]:
    """Requests a user of the skill would make, with fresh slot values (teacher answers greedily)."""
    rng = rng_for(seed, skill.sha256, "requests")
    topics: list[str] = []
    if skill.description:
        topics.append(skill.description.split(".")[0].strip().rstrip(".").lower())
    tools: list[tuple[str, str]] = []
    for sec in skill.sections:
        body = sec.body(skill.text)
        if section_kind(sec.heading) == "when_to_use":
            topics += [b.strip().rstrip(".").lower() for b in _BULLET.findall(body)][:6]
        tools += _CALL.findall(body)
    shots = [q.messages[0]["content"] for q in examples(skill)]
    out: list[Question] = []
    seen: set[str] = set()
    for i in range(n * 4):
        if len(out) >= n:
            break
        thing, thing2 = _thing(rng), _thing(rng)
        kind = i % 4
        if kind == 0 or (kind == 1 and not topics) or (kind == 2 and not tools) or (kind == 3 and not shots):
            q = rng.choice(ASKS).format(thing=thing, thing2=thing2)
            if rng.random() < 0.5:
                q = f"{q} Use {skill.name}."
        elif kind == 1:
            q = f"{rng.choice(topics).capitalize()}: {rng.choice(ASKS).format(thing=thing, thing2=thing2)}"
        elif kind == 2:
            tool, arg = rng.choice(tools)
            q = f"Look up {thing} ({arg} {rng.randint(100, 9999)})." if rng.random() < 0.5 else \
                f"I need the {tool} result for {thing}."
        else:  # an example's request with its numbers swapped for new ones
            q = re.sub(r"\d+", lambda _: str(rng.randint(100, 9999)), rng.choice(shots))
        if q not in seen:
            seen.add(q)
            out.append(Question(_user(q), "requests"))
    return out


def from_tests(rows: list[dict[str, Any]]) -> list[Question]:
    """Test rows ({"messages": [...]} or {"prompt": str}) -> questions the teacher answers."""
    out = []
    for r in rows:
        msgs = r.get("messages") or (_user(r["prompt"]) if r.get("prompt") else None)
        if msgs:
            out.append(Question([dict(m) for m in msgs], "tests", None, {"id": r.get("task_id") or r.get("id")}))
    return out


def from_trajectories(rows: list[dict[str, Any]]) -> list[Question]:
    out = []
    for r in rows:
        msgs = list(r.get("messages") or [])
        if len(msgs) >= 2 and msgs[-1].get("role") == "assistant" and msgs[-1].get("content", "").strip():
            out.append(Question([m for m in msgs[:-1] if m.get("role") != "system"], "trajectories",
                                msgs[-1]["content"]))
    return out


def gather(skill: Skill, sources: tuple[str, ...], tests: list[dict[str, Any]] | None = None,
           trajectories: list[dict[str, Any]] | None = None, n_requests: int = 24, seed: int = 0,
           limit: int | None = None, owned_share: float = 0.75) -> list[Question]:
    """Questions from the named sources, at most `limit`: the user's own (tests, examples,
    trajectories) first, up to `owned_share` of the limit, then the synthesized ones; each group
    round-robin over its sources."""
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown practice sources {sorted(unknown)}; known: {', '.join(SOURCES)}")
    made: dict[str, list[Question]] = {
        "tests": from_tests(tests or []) if "tests" in sources else [],
        "examples": examples(skill) if "examples" in sources else [],
        "trajectories": from_trajectories(trajectories or []) if "trajectories" in sources else [],
        "template": template(skill, seed) if "template" in sources else [],
        "cloze": cloze(skill, seed) if "cloze" in sources else [],
        "requests": requests(skill, n_requests, seed) if "requests" in sources else [],
    }
    if not any(made.values()):
        tried = ", ".join(s for s in SOURCES if s in sources)
        raise NoPractice(f"{skill.name}: no usable practice question; tried {tried}"
                         " (add tests, an Examples section with Request:/Reply: pairs, or sections with text)")
    owned = _round_robin([made[s] for s in OWNED])
    synth = _round_robin([made[s] for s in SOURCES if s not in OWNED])
    if limit is None:
        return owned + synth
    # The user's own questions first (they use the skill as the user does), up to owned_share of the
    # limit; the synthesizer fills the rest, so every section still gets a question.
    n_owned = min(len(owned), max(limit - len(synth), round(limit * owned_share)))
    return owned[:n_owned] + synth[:limit - n_owned]


def _round_robin(per: list[list[Question]]) -> list[Question]:
    out: list[Question] = []
    for i in range(max((len(p) for p in per), default=0)):
        out += [p[i] for p in per if i < len(p)]
    return out


def counts(questions: list[Question]) -> dict[str, int]:
    out: dict[str, int] = {}
    for q in questions:
        out[q.source] = out.get(q.source, 0) + 1
    return out


__all__ = ["SOURCES", "Question", "NoPractice", "gather", "counts", "examples", "template", "cloze", "requests",
           "from_tests", "from_trajectories", "QUESTIONS"]
