"""The teacher's context for a skill longer than its window: the sections a question needs, found by the
question's words (BM25 over the skill's own sections), packed in the skill's order (docs/distill.md "Long
skills"). It needs no labels and knows nothing of any generator: a section is a `##` (or deeper) heading
and the text up to the next one; the head before the first (frontmatter, title, intro) is always kept."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

HEADING = re.compile(r"#{2,6}\s")  # at a line's start; "# Title" stays in the head
WORD = re.compile(r"[a-z0-9]+")
K1, B = 1.2, 0.75  # BM25's usual constants
RELEVANT = 0.3  # a section is kept from this share of the best section's score up


def split_sections(text: str) -> list[str]:
    """`text` cut before every `##`+ heading outside a ``` fence; the pieces join back to `text`."""
    starts, fenced, at = [], False, 0
    for line in text.split("\n"):  # "\n" only, as the TypeScript side splits
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and at > 0 and HEADING.match(line):
            starts.append(at)
        at += len(line) + 1
    bounds = [0, *starts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def scores(sections: list[str], query: str) -> list[float]:
    """BM25 of `query` against each section (a word counts once per query)."""
    docs = [Counter(words(s)) for s in sections]
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / max(1, n)
    df = Counter(w for d in docs for w in d)
    out = []
    for d in docs:
        length = sum(d.values())
        s = 0.0
        for w in dict.fromkeys(words(query)):  # first-seen order: the same float sum in every run
            tf = d.get(w, 0)
            if tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / max(1.0, avg)))
        out.append(s)
    return out


def focused(text: str, query: str, budget: int, count: Callable[[str], int]) -> str:
    """The part of `text` that fits `budget` tokens (`count`) and serves `query`: the head (what comes before
    the second section), then sections by falling score (ties: the earlier first) while they fit, in the
    skill's order. A section scoring under RELEVANT of the best, or repeating an earlier one word for word,
    is left out: a small teacher answers worse beside text it does not need. `text` itself when it fits."""
    if count(text) <= budget:
        return text
    parts = split_sections(text)
    sc = scores(parts, query)
    best = max(sc[1:], default=0.0)
    seen, keep, used = {parts[0].strip()}, {0}, count(parts[0])
    for i in sorted(range(1, len(parts)), key=lambda i: (-sc[i], i)):
        if sc[i] <= 0 or sc[i] < RELEVANT * best:
            break
        n, body = count(parts[i]), parts[i].strip()
        if body not in seen and used + n <= budget:
            keep.add(i)
            seen.add(body)
            used += n
    return "".join(parts[i] for i in sorted(keep))
