"""Deterministic skill-like English text for tokenizers of random bundles (fixtures, benchmarks).

Not training data: it only has to give a BPE enough repeated pairs to learn a few hundred merges,
with the words, markdown and punctuation the real corpus has, and be identical on every run.
"""

from __future__ import annotations

import random

_WORDS = ("the a an this that each every when then use run check write read open close file folder "
          "skill step steps example examples pitfall test tests build error errors value values name "
          "names list table model adapter token tokens prompt answer question user assistant system "
          "review commit branch merge config option options command commands output input text line "
          "lines first next last before after always never only also should must can may will not "
          "and or but if with without from into over under for to of in on at by is are was be").split()
_HEADINGS = ("When to use", "Steps", "Examples", "Pitfalls", "Inputs", "Outputs", "Notes")
_PUNCT = (".", ".", ".", ",", ":", ";", "?", "!")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 12))]
    words[0] = words[0].capitalize()
    if rng.random() < 0.2:
        words.insert(rng.randint(1, len(words)), f"`{rng.choice(_WORDS)}_{rng.randint(0, 99)}`")
    return " ".join(words) + rng.choice(_PUNCT)


def synthetic_corpus(n_chars: int, seed: int = 0) -> list[str]:
    """Markdown "skills": headings, numbered steps and prose, about `n_chars` characters in all."""
    rng = random.Random(seed)
    docs, total = [], 0
    while total < n_chars:
        parts = [f"# {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}"]
        for heading in rng.sample(_HEADINGS, 3):
            parts.append(f"## {heading}")
            if heading == "Steps":
                parts += [f"{k}. {_sentence(rng)}" for k in range(1, rng.randint(3, 6))]
            else:
                parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 4))))
        doc = "\n\n".join(parts) + "\n"
        docs.append(doc)
        total += len(doc)
    return docs
