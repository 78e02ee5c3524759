"""A skill's text as practice reads it, the same rules as common/distill/practice-text.ts (the shared
cases in tests/fixtures/practice-cases.json keep the two in step): sections with their own text,
Examples cut out for practice that may not see them, and one seeded hash for every choice."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from ..synth.skill import Section, Skill, skill_from_text
from ..synth.template import clean_answer, section_kind

T = TypeVar("T")


def own_body(skill: Skill, i: int) -> str:
    """Section i's own text: up to the next heading of any level."""
    s = skill.sections[i]
    end = skill.sections[i + 1].start if i + 1 < len(skill.sections) else len(skill.text)
    return skill.text[s.body_start : end].strip("\n")


def answerable(skill: Skill, min_chars: int = 20) -> list[Section]:
    """Sections with enough text of their own, skipping a title that spans the whole body."""
    secs = skill.sections
    top = min((s.level for s in secs), default=1)
    lone_top = sum(s.level == top for s in secs) == 1 and len(secs) > 1
    return [
        s
        for s in secs
        if not (lone_top and s.level == top) and len(clean_answer(s.body(skill.text), 10**9)) >= min_chars
    ]


def without_examples(skill: Skill) -> Skill:
    """The skill without its Examples sections (practice for `distilled_synth` sees none of them)."""
    spans = [(s.start, s.end) for s in skill.sections if section_kind(s.heading) == "examples"]
    if not spans:
        return skill
    out, at = [], 0
    for a, b in spans:
        if a < at:
            continue
        out.append(skill.text[at:a])
        at = b
    out.append(skill.text[at:])
    cut = skill_from_text("".join(out), skill.source_path, skill.package, name=skill.name)
    cut.name, cut.description = skill.name, skill.description
    return cut


def fnv(*parts: object) -> int:
    """FNV-1a (32-bit, then mixed) over the UTF-8 of the parts joined by U+001F (practice-text.ts `hash`)."""
    h = 0x811C9DC5
    for b in "\x1f".join(map(str, parts)).encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    # murmur3's finaliser: FNV's low bits barely move when only the last part changes.
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def pick(items: Sequence[T], *parts: object) -> T:
    return items[fnv(*parts) % len(items)]


_NUMBER = re.compile(r"[0-9]+")


def example_numbers(skill: Skill) -> set[str]:
    """Numbers of two digits or more that the skill writes only in its Examples: an example's items."""
    outside = set(_NUMBER.findall(without_examples(skill).text))
    return {n for n in _NUMBER.findall(skill.text) if len(n) >= 2 and n not in outside}


def parrots(answer: str, asked: str, numbers: set[str]) -> bool:
    """Whether a greedy answer repeats an example's number (`example_numbers`) that the chat it answers
    does not hold: a small teacher answering a request it cannot place with an example's item."""
    given = set(_NUMBER.findall(asked))
    return any(n in numbers and n not in given for n in _NUMBER.findall(answer))
