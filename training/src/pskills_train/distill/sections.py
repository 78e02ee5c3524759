"""The teacher's context for a skill longer than its window: the sections a question needs, found by the
question's words (BM25 over the skill's own sections), packed in the skill's order (docs/distill.md "Long
skills"). It needs no labels and knows nothing of any generator: the sections are the skill's `##` (or
deeper) headings as `synth.skill.find_sections` finds them, each running to the next; the head before the
first (frontmatter, title, intro) is always kept."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from ..synth.skill import find_sections

WORD = re.compile(r"[a-z0-9]+")
K1, B = 1.2, 0.75  # BM25's usual constants
RELEVANT = 0.3  # a section is kept from this share of the best section's score up
FRONTMATTER_END = re.compile(r"\n---[ \t]*(?:\n|$)")


def _body_offset(text: str) -> int:
    """Where the text after a leading `---` frontmatter block starts (0 without one), as the TS parser skips it."""
    m = FRONTMATTER_END.search(text, 3) if text.startswith("---\n") else None
    return m.end() if m else 0


def split_sections(text: str) -> list[str]:
    """`text` cut before every `##`+ heading after the frontmatter; the pieces join back to `text`."""
    first = _body_offset(text)
    starts = [s.start for s in find_sections(text) if s.level >= 2 and s.start > 0 and s.start >= first]
    bounds = [0, *starts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


class SectionIndex:
    """One skill's sections with their word counts and token counts, built once for all its questions."""

    def __init__(self, text: str, count: Callable[[str], int]):
        self.text, self.tokens = text, count(text)
        self.parts = split_sections(text)
        self.docs = [Counter(words(p)) for p in self.parts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(1, len(self.docs))
        self.df = Counter(w for d in self.docs for w in d)
        self.counts: list[int | None] = [None] * len(self.parts)  # a part's tokens, counted when first needed
        self.count = count

    def scores(self, query: str) -> list[float]:
        """BM25 of `query` against each section (a word counts once per query, in first-seen order)."""
        n, out = len(self.docs), []
        for d, length in zip(self.docs, self.lengths, strict=True):
            s = 0.0
            for w in dict.fromkeys(words(query)):  # first-seen order: the same float sum in every run
                tf = d.get(w, 0)
                if tf:
                    idf = math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5))
                    s += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / max(1.0, self.avg)))
            out.append(s)
        return out

    def _tokens(self, i: int) -> int:
        if self.counts[i] is None:
            self.counts[i] = self.count(self.parts[i])
        return self.counts[i]  # type: ignore[return-value]

    def focused(self, query: str, budget: int) -> str:
        """The part of the skill that fits `budget` tokens and serves `query`: the head (what comes before the
        second section), then sections by falling score (ties: the earlier first) while they fit, in the
        skill's order. A section scoring under RELEVANT of the best, or repeating an earlier one word for
        word, is left out: a small teacher answers worse beside text it does not need. The whole text when
        it fits."""
        if self.tokens <= budget:
            return self.text
        sc = self.scores(query)
        best = max(sc[1:], default=0.0)
        seen, keep, used = {self.parts[0].strip()}, {0}, self._tokens(0)
        for i in sorted(range(1, len(self.parts)), key=lambda i: (-sc[i], i)):
            if sc[i] <= 0 or sc[i] < RELEVANT * best:
                break
            body = self.parts[i].strip()
            if body not in seen and used + self._tokens(i) <= budget:
                keep.add(i)
                seen.add(body)
                used += self._tokens(i)
        return "".join(self.parts[i] for i in sorted(keep))


def focused(text: str, query: str, budget: int, count: Callable[[str], int]) -> str:
    """`SectionIndex(text, count).focused(query, budget)`: for one question."""
    return SectionIndex(text, count).focused(query, budget)
