"""Template synthesizer: questions about a skill answered with the skill's own text, offline.

Single-turn: one question per section (phrased by the section's kind) whose answer is that section,
plus "what is it for" answered by the description. Multi-turn: the kinds a skill has, chained in the
order a user would ask (when to use -> steps -> examples -> pitfalls -> constraints).
Phrasings are picked by a seed hashed with the skill and the section, so a run is reproducible.
"""

from __future__ import annotations

import hashlib
import random
import re

from .skill import Section, Skill
from .trajectory import Trajectory

# First match wins: specific phrases ("when not to use", "usage examples") come before general ones.
KIND_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(k, re.compile(p)) for k, p in [
    ("when_not_to_use", r"\bwhen not to\b|\bdo not use\b|\bnot for\b"),
    ("examples", r"\bexamples?\b|\bsamples?\b|\bdemo\b|\bscenarios?\b"),
    ("pitfalls", r"pitfall|mistake|gotcha|anti.?pattern|troubleshoot|caveat|warning|\bavoid\b"
                 r"|common (issues|errors|problems)|\bdon'?t\b|\bdo not\b|error handling|edge cases?|failure"),
    ("when_to_use", r"\bwhen to\b|\bwhen this\b|\bwhen you\b|\busage\b|use cases?|\btriggers?\b|\bactivat|\bapplies\b"
                    r"|\bpurpose\b|\bscope\b"),
    ("constraints", r"constraint|\brules?\b|guardrail|requirement|limitation|\bmust\b|\bnever\b|\bpolicy\b"
                    r"|best practice|\bprinciples?\b|\bimportant\b|\bcritical\b|\bguidelines?\b"
                    r"|\bconventions?\b|checklist"),
    ("steps", r"\bsteps?\b|workflow|instructions?|procedure|how to|process|quick ?start|getting started|\bsetup\b"
              r"|\bphase|\balgorithm\b|how it works|\bguide\b"),
]]
CHAIN = ("when_to_use", "steps", "examples", "pitfalls", "constraints")

QUESTIONS: dict[str, tuple[str, ...]] = {
    "about": ("What does the {name} skill do?", "What is {name} for?", "Give me a short summary of the {name} skill."),
    "when_to_use": ("When should I use {name}?", "In which situations does the {name} skill apply?",
                    "Is {name} the right skill for my task? When does it apply?"),
    "when_not_to_use": ("When should I not use {name}?", "In which cases is {name} the wrong choice?",
                        "What is out of scope for {name}?"),
    "steps": ("What are the steps of {name}?", "Walk me through {name}, step by step.",
              "How do I carry out {name}? List the procedure."),
    "examples": ("Show me an example of {name}.", "Can you give examples of using {name}?",
                 "What does {name} look like in practice?"),
    "pitfalls": ("What are the common pitfalls with {name}?", "What mistakes should I avoid when applying {name}?",
                 "What can go wrong with {name}, and how do I avoid it?"),
    "constraints": ("What rules does {name} impose?", "Which constraints must I respect with {name}?",
                    "What are the must-follow rules of {name}?"),
    "other": ("What does {name} say about {heading}?", "Explain the \"{heading}\" part of {name}.",
              "Tell me about {heading} in the {name} skill."),
}
FOLLOW_UPS: dict[str, tuple[str, ...]] = {
    "when_to_use": ("First, when does it apply?", "When is it the right tool?"),
    "when_not_to_use": ("And when should I not use it?",),
    "steps": ("OK. What are the steps?", "How do I do it, step by step?", "Great, walk me through it."),
    "examples": ("Can you show an example?", "What does that look like in practice?"),
    "pitfalls": ("What should I watch out for?", "Any common mistakes to avoid?"),
    "constraints": ("Which rules must I follow?", "Are there constraints I must respect?"),
}


def section_kind(heading: str) -> str:
    h = re.sub(r"[^\w\s'/-]", " ", heading.lower())
    return next((k for k, rx in KIND_PATTERNS if rx.search(h)), "other")


def clean_answer(text: str, max_chars: int) -> str:
    """Section text lightly formatted: no HTML comments, at most one blank line in a row, cut at a
    line boundary so the answer stays under `max_chars`."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text).strip()
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[:cut if cut > max_chars // 2 else max_chars].rstrip()


def rng_for(seed: int, *parts: object) -> random.Random:
    h = hashlib.sha256("\x1f".join(map(str, (seed, *parts))).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


class TemplateSynthesizer:
    name = "template"

    def __init__(self, seed: int = 0, max_answer_chars: int = 1000, min_answer_chars: int = 20,
                 multi_turn: int = 2, half: str | None = None):
        """half: None uses every phrasing (training); "eval" the even-indexed phrasings of each kind (the
        eval's real-skill tasks), "practice" the odd ones (distillation practice), so the two never share
        a question."""
        if half not in (None, "eval", "practice"):
            raise ValueError(f"half must be None, 'eval' or 'practice', got {half!r}")
        self.seed, self.max_answer_chars, self.min_answer_chars, self.multi_turn, self.half = (
            seed, max_answer_chars, min_answer_chars, multi_turn, half)

    def _phrasings(self, kind: str) -> tuple[str, ...]:
        qs = QUESTIONS[kind]
        return qs if self.half is None else qs[0::2] if self.half == "eval" else qs[1::2]

    def qa_pairs(self, skill: Skill) -> list[tuple[str, Section | None, str, str]]:
        """(kind, section or None, question, answer) for each single-turn task, in document order."""
        out: list[tuple[str, Section | None, str, str]] = []
        if skill.description:
            q = rng_for(self.seed, skill.sha256, "about").choice(self._phrasings("about"))
            out.append(("about", None, q.format(name=skill.name), skill.description))
        for sec in self._answerable(skill):
            kind = section_kind(sec.heading)
            q = rng_for(self.seed, skill.sha256, sec.start).choice(self._phrasings(kind))
            out.append((kind, sec, q.format(name=skill.name, heading=sec.heading),
                        clean_answer(sec.body(skill.text), self.max_answer_chars)))
        return out

    def _answerable(self, skill: Skill) -> list[Section]:
        """Sections with enough text of their own, skipping a title that spans the whole body."""
        top = min((s.level for s in skill.sections), default=1)
        lone_top = sum(t.level == top for t in skill.sections) == 1 and len(skill.sections) > 1
        secs = [s for s in skill.sections if not (s.level == top and lone_top)]
        return [s for s in secs if len(clean_answer(s.body(skill.text), 10**9)) >= self.min_answer_chars]

    def synthesize(self, skill: Skill) -> list[Trajectory]:
        pairs = self.qa_pairs(skill)
        out = [Trajectory.for_skill(skill, self.name, self.seed, [{"role": "user", "content": q},
                                                                  {"role": "assistant", "content": a}], f"single:{k}")
               for k, _, q, a in pairs]
        by_kind: dict[str, list[tuple[str, str]]] = {}
        for k, _, q, a in pairs:
            by_kind.setdefault(k, []).append((q, a))
        chain = [k for k in CHAIN if k in by_kind]
        for i in range(self.multi_turn if len(chain) >= 2 else 0):
            rng = rng_for(self.seed, skill.sha256, "multi", i)
            msgs: list[dict[str, str]] = []
            for j, k in enumerate(chain):
                q, a = rng.choice(by_kind[k])
                if j:
                    q = rng.choice(FOLLOW_UPS[k])
                msgs += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
            if all(t.messages != msgs for t in out):
                out.append(Trajectory.for_skill(skill, self.name, self.seed, msgs, "multi:" + "+".join(chain)))
            if len(chain) > 2:  # the second conversation stops earlier: not every chat covers everything
                chain = chain[:-1]
        return out
