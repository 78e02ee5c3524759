"""A generated SKILL.md: frontmatter, title, When to use, filler sections, Pitfalls, and the rule
block placed at the requested depth, padded with filler to a token target."""

from __future__ import annotations

import random
from dataclasses import dataclass

from tokenizers import Tokenizer

from . import templates as T
from .filler import Filler

LENGTH_BUCKETS = (256, 512, 1024, 2048, 4096)
DEPTHS = ("start", "middle", "end")


@dataclass
class Document:
    text: str
    tokens: int
    rule_at: float  # share of the skill's tokens before the rule block
    filler_sources: list[str]
    description_template: str
    unseen_description: bool


def _assemble(head: str, rule: str, pitfalls: str, filler: list[str], counts: list[int], depth: str) -> tuple[str, int]:
    """(text, char offset of the rule block)."""
    body = list(filler)
    if depth == "start":
        at = 0
    elif depth == "middle":
        half, acc, at = sum(counts) / 2, 0, 0
        for i, n in enumerate(counts):  # the gap between sections nearest half of the filler
            if abs(acc + n - half) < abs(acc - half):
                at = i + 1
            acc += n
    body.append(pitfalls)
    if depth == "end":
        at = len(body)
    body.insert(at, rule)
    before = "\n\n".join([head, *body[:at]]) + "\n\n"
    return before + "\n\n".join(body[at:]) + "\n", len(before)


def build_document(rng: random.Random, split: str, team: str, topic: str, rule_sections: str, target: int,
                   depth: str, filler: Filler, tok: Tokenizer) -> Document:
    did, dtext, d_unseen = T.pick(rng, T.DESCRIPTION, split)
    fill = lambda s: s.format(team=team, topic=topic)  # noqa: E731
    head = (f"---\nname: {team}-{topic}\ndescription: {fill(dtext)}\n---\n\n# {team.capitalize()} {topic}\n\n"
            f"{fill(T.INTRO)}\n\n## When to use\n\n{fill(T.WHEN_TO_USE)}")
    pitfalls = f"## Pitfalls\n\n{fill(T.PITFALLS)}"
    count = lambda s: len(tok.encode(s, add_special_tokens=False).ids)  # noqa: E731
    skeleton = count(_assemble(head, rule_sections, pitfalls, [], [], depth)[0])
    side = "heldout" if split == "test" else "train"
    # Block counts sum to ~2 % under the joined text's count; slack lets a block overshoot a little
    # rather than leave a small bucket short when no block fits the rest.
    texts, counts, sources = filler.compose(rng, side, max(0, int(target * 0.98) - skeleton), int(target * 0.04))
    text, rule_start = _assemble(head, rule_sections, pitfalls, texts, counts, depth)
    total = count(text)
    return Document(text, total, round(count(text[:rule_start]) / total, 3), sources, did, d_unseen)
