"""The practice a skill's own text gives: its Examples, one cloze per section, the template questions
about it, and synthesized requests that use it. The same rules as common/distill/practice-synth.ts;
tests/fixtures/practice-cases.json pins both."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..synth.skill import Skill
from ..synth.template import QUESTIONS, clean_answer, section_kind
from .practice_text import answerable, fnv, own_body, pick, without_examples


@dataclass
class Drafted:
    question: str
    answer: str | None = None


# Request / reply pairs as skills write them in Examples: "Request: …" / "Reply: …", "User:" /
# "Assistant:", "Input:" / "Output:", "Q:" / "A:", the reply inline, in backticks or in a fence.
_PAIR = re.compile(
    r"^\s*(?:\*\*)?(?:request|user|input|prompt|q|question)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(?P<q>.+?)\s*\n"
    r"(?:\s*\n)*\s*(?:\*\*)?(?:reply|assistant|output|response|a|answer)(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*"
    r"(?P<a>`[^`\n]+`|[^\n]*\S[^\n]*|\n+```[^\n]*\n(?P<fence>.*?)\n```)",
    re.I | re.M | re.S,
)
_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_ARROW = re.compile(r"\s+(?:→|->|=>)\s+")
_ASKED = re.compile(r"^\s*(?:\*\*)?(?:user|q|question|input|prompt|request)(?:\*\*)?\s*[:>-]\s*(?:\*\*)?\s*", re.I)


def _unquote(s: str) -> str:
    return re.sub(r"^[\"“'`]+|[\"”'`]+$", "", s).strip()


def _unlisted(line: str) -> str:
    return re.sub(r"^\s*>\s*", "", _MARKER.sub("", line, count=1), count=1)


EXAMPLE_VARIANTS = 7  # forced copies per Examples pair with its repeated numbers redrawn


def _variants(pair: Drafted, outside: set[str], n: int, seed: int, *key: object) -> list[Drafted]:
    """Copies of a pair in which the numbers and the Examples-only words (words the skill uses nowhere
    outside its Examples) that its answer repeats from its question are redrawn: numbers with as many
    digits, words with a generic noun (seeded). The Examples' rule practised on items they do not show."""
    in_answer = {w.lower() for w in re.findall(r"\d+|[A-Za-z]{3,}", pair.answer or "")}
    tokens = list(dict.fromkeys(w.lower() for w in re.findall(r"\d+|[A-Za-z]{3,}", pair.question)))
    numbers = [r for r in tokens if r.isascii() and r.isdigit() and r in in_answer and len(r) <= 9]
    words = [w for w in tokens if w.isalpha() and w in in_answer and w not in outside]
    if not numbers and not words:
        return []
    out = []
    for v in range(n):
        m: dict[str, str] = {}
        for r in numbers:
            lo = 1 if len(r) == 1 else 10 ** (len(r) - 1)
            m[r] = str(lo + fnv(seed, *key, v, r) % (10 ** len(r) - lo))
        for w in words:
            m[w] = pick(LEXICON["nouns"], seed, *key, v, w)

        def sub(t: str, m: dict[str, str] = m) -> str:
            def one(x: re.Match[str]) -> str:
                to = m.get(x.group(0).lower())
                if to is None:
                    return x.group(0)
                return to[:1].upper() + to[1:] if x.group(0)[:1].isupper() else to

            return re.sub(r"\d+|[A-Za-z]+", one, t)

        out.append(Drafted(sub(pair.question), sub(pair.answer or "")))
    return out


def examples(skill: Skill, seed: int = 0) -> list[Drafted]:
    """An Examples section's pairs (the reply is the answer), each with EXAMPLE_VARIANTS copies whose
    repeated numbers are redrawn; else its `"q" → a` items; else its asked lines (`User: …`), list
    items and quotes as questions the teacher answers."""
    out: list[Drafted] = []
    outside = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", without_examples(skill).text)}
    for sec in skill.sections:
        if section_kind(sec.heading) != "examples":
            continue
        text = sec.body(skill.text)
        pairs = []
        for m in _PAIR.finditer(text):
            a = m.group("fence") if m.group("fence") is not None else m.group("a").strip()
            if a.startswith("`") and a.endswith("`") and len(a) > 1:
                a = a[1:-1]
            q = m.group("q").strip().strip("`")
            if q and a.strip():
                pairs.append(Drafted(q, a.strip()))
        if pairs:
            for k, p in enumerate(pairs):
                out += [p, *_variants(p, outside, EXAMPLE_VARIANTS, seed, skill.name, "variant", len(out), k)]
            continue
        lines = [_unlisted(ln) for ln in text.split("\n")]
        arrows = [ln for ln in lines if _ARROW.search(ln)]
        if arrows:
            for ln in arrows:
                q, *a = _ARROW.split(ln)
                if len(_unquote(q)) >= 2 and _unquote(" ".join(a)):
                    out.append(Drafted(_unquote(q), _unquote(" ".join(a))))
            continue
        asked = [_ASKED.sub("", ln, count=1) for ln in lines if _ASKED.match(ln)]
        picked = asked or [_unlisted(ln) for ln in text.split("\n") if _MARKER.match(ln) or re.match(r"^\s*>", ln)]
        out += [Drafted(_unquote(q)) for q in picked if len(_unquote(q)) >= 2]
    return out


CLOZE = (
    'What does the "{heading}" section of {name} say?',
    'Recite the "{heading}" part of {name}.',
    'Quote {name}\'s section "{heading}".',
)


def _fill(template_: str, **v: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: v.get(m.group(1), m.group(0)), template_)


def _recallable(skill: Skill) -> list:
    """Sections recall practice asks about: the answerable ones but the Examples (reciting an example's
    items teaches the adapter to repeat them; the `examples` source practises their use)."""
    return [s for s in answerable(skill) if section_kind(s.heading) != "examples"]


def cloze(skill: Skill, max_chars: int = 1200) -> list[Drafted]:
    """One question per answerable section, answered with its text."""
    return [
        Drafted(
            _fill(CLOZE[k % len(CLOZE)], heading=s.heading, name=skill.name),
            clean_answer(s.body(skill.text), max_chars),
        )
        for k, s in enumerate(_recallable(skill))
    ]


# The practice half of template.py's phrasings (odd indices; the eval's real-skill tasks ask the other).
TEMPLATE = {k: v[1] for k, v in QUESTIONS.items()}


def template(skill: Skill, max_chars: int = 1000) -> list[Drafted]:
    out = [Drafted(_fill(TEMPLATE["about"], name=skill.name), skill.description)] if skill.description else []
    return out + [
        Drafted(
            _fill(TEMPLATE[section_kind(s.heading)], name=skill.name, heading=s.heading),
            clean_answer(s.body(skill.text), max_chars),
        )
        for s in _recallable(skill)
    ]


# Slot values: nouns and numbers of the skill's own text and a generic lexicon (none of it a
# generator's slot format or nouns: docs/distill.md "Practice").
LEXICON = {
    "nouns": (
        "booking",
        "customer",
        "draft",
        "meeting",
        "message",
        "payment",
        "profile",
        "project",
        "reminder",
        "schedule",
        "supplier",
        "summary",
        "transfer",
        "review",
        "dataset",
        "listing",
    ),
    "people": ("Dana", "Ravi", "Mei", "Omar", "Lena", "Tomas", "Aiko", "Bruno"),
    "when": ("this morning", "last week", "Friday", "yesterday", "the night shift", "the weekend"),
    "names": ("Maple", "Harbor", "Orion", "Juniper", "Delta", "Willow"),
}
_STOP = set(
    (
        "skill skills following same answer answers request requests user users section sections first other"
        " next most more only whole result results rules rule reply replies time way case example examples"
        " step steps thing things name text line lines word words list part parts below above end start"
    ).split()
)
_DET = re.compile(r"\b(?:a|an|the|each|every|any|this|that|your|its)\s+([A-Za-z]{4,14})\b", re.I)


def slots_of(text: str) -> tuple[list[str], list[str]]:
    """Nouns (words after an article or determiner) and numbers of the text, in order, no repeats."""
    nouns = [w for w in (m.group(1).lower() for m in _DET.finditer(text)) if w not in _STOP]
    return list(dict.fromkeys(nouns))[:24], list(dict.fromkeys(re.findall(r"\d+", text)))[:12]


SLOT_FORMS = (
    "the {noun} for {person}",
    "{num} {noun}s",
    "the {noun} {code}",
    "the {noun} from {when}",
    "{person}'s {noun}",
    'the {noun} called "{title}"',
    "the {noun} #{id}",
    "the {noun} with id {id}",
)


def _slot(skill: Skill, nouns: list[str], numbers: list[str], seed: int, i: int) -> str:
    key = (seed, skill.name, "slot", i)
    pool = list(dict.fromkeys([*nouns, *LEXICON["nouns"]]))
    num = pick(numbers, *key, "m") if numbers and fnv(*key, "d") % 3 == 0 else str(2 + fnv(*key, "v") % 498)
    return _fill(
        pick(SLOT_FORMS, *key, "f"),
        noun=pick(pool, *key, "n"),
        num=num,
        code=f"{'ABCDEFGHJKLMNPRSTVWXYZ'[fnv(*key, 'c') % 22]}-{num}",
        id=pick(numbers, *key, "i") if numbers and fnv(*key, "e") % 3 == 0 else str(1000 + fnv(*key, "x") % 9000),
        person=pick(LEXICON["people"], *key, "p"),
        when=pick(LEXICON["when"], *key, "w"),
        title=pick(LEXICON["names"], *key, "t"),
    )


# {T}: the topic as a sentence; {t}: mid-sentence; {s}, {s2}: slot values.
FRAMES = (
    "{T}. Here is {s}: what do I do?",
    "About {s}: {t}. Can you take care of it?",
    "Please handle {s}. ({T}.)",
    "Can you help with {s}? {T}.",
    "{T} - what does that mean for {s}?",
    "I have {s}. Use {name} on it.",
    "What should happen with {s}?",
    "Process {s} for me, please.",
    "Check {s} and tell me the result.",
    "Record {s} and {s2}.",
)
_CALL = re.compile(r"\b([A-Za-z_][\w.-]*)\(\s*([A-Za-z_]\w*)\s*=")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _topics(text: str) -> list[str]:
    """A section's topics: its list items, else its sentences, as plain text of 3 to 25 words."""
    items = [ln for ln in text.split("\n") if _ITEM.match(ln)]
    raw = (
        [_ITEM.sub("", ln, count=1) for ln in items]
        if items
        else re.split(r"(?<=[.!?])\s+", re.sub(r"```.*?```", " ", text, flags=re.S))
    )
    out = []
    for t in raw:
        t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
        t = re.sub(r"[.!?:;,]+$", "", re.sub(r"\s+", " ", re.sub(r"[*_`#>]+", "", t)).strip())
        if 3 <= len(t.split(" ")) <= 25:
            out.append(t)
    return out


def requests(skill: Skill, n: int, seed: int = 0) -> list[Drafted]:
    """Requests that use the skill, one section after another (the description first), each with
    fresh slot values; the teacher answers them with the skill in context."""
    nouns, numbers = slots_of(without_examples(skill).text)  # an example's items are the examples source's
    units: list[list[str]] = []
    if skill.description:
        units.append(_topics(skill.description))
    for i, sec in enumerate(skill.sections):
        if section_kind(sec.heading) == "examples":  # its requests are the `examples` source
            continue
        own = own_body(skill, i)
        found = _topics(own) + [f"I need the {m.group(1)} result" for m in _CALL.finditer(own)]
        if found or own.strip():
            units.append(found)
    if not units:
        return []
    out: list[Drafted] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n and i < n * 6:
        topics = units[i % len(units)]
        frames = FRAMES if topics else FRAMES[5:]
        topic = pick(topics, seed, skill.name, "topic", i) if topics else ""
        q = _fill(
            pick(frames, seed, skill.name, "frame", i),
            T=topic[:1].upper() + topic[1:],
            t=topic[:1].lower() + topic[1:] if re.match(r"^[A-Z][a-z]", topic) else topic,
            s=_slot(skill, nouns, numbers, seed, 2 * i),
            s2=_slot(skill, nouns, numbers, seed, 2 * i + 1),
            name=skill.name,
        )
        if q not in seen:
            seen.add(q)
            out.append(Drafted(q))
        i += 1
    return out
