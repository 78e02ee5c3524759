"""Fresh made-up words for a SkillWorld skill and its teacher rows: the hypernetwork cannot memorise.

Meta-training on a few hundred worlds, the hypernetwork learns which world a skill is and recalls its
words instead of reading them from the text (docs/results.md). Renamed, each step's world is new: every
nonce word of the skill (a word the SkillWorld grammar makes that no template uses) is swapped for
another drawn from the train pool, case kept, in the skill text and in the teacher rows alike.

Rows are renamed at the token level. The byte-level pre-tokenizer splits words from spaces and
punctuation, so a word's tokens do not depend on their neighbours and a span can be replaced in place.
Answer tokens inside a renamed word get one-hot targets on the new tokens (the teacher copies such words
with near certainty); every other position keeps the teacher's top-k as it was.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from functools import cache

import torch
from tokenizers import Tokenizer

from ..skillworld.lexicon import Lexicon, pool_of
from ..skillworld.templates import all_words
from .teacher import TeacherRow

_WORDS = re.compile(r"[A-Za-z]+")


@cache
def _template_words() -> frozenset[str]:
    return frozenset(all_words())


def nonce_words(text: str) -> list[str]:
    """The train-pool words of a skill that no template uses, lowercase, in order of first use: its
    made-up words, and a few English words the grammar happens to make (renamed alike, harmlessly)."""
    seen: dict[str, None] = {}
    for w in _WORDS.findall(text):
        low = w.lower()
        if low not in _template_words() and pool_of(low) == "train":
            seen.setdefault(low, None)
    return list(seen)


def _cased(word: str, like: str) -> str:
    return word.upper() if like.isupper() else word.capitalize() if like[:1].isupper() else word


class Renamer:
    def __init__(self, tok: Tokenizer):
        self.tok = tok
        # each token's text as the byte-level vocabulary spells it, the space marker as a space
        self._pieces = [(tok.id_to_token(i) or "").replace("Ġ", " ").replace("Ċ", "\n")
                        for i in range(tok.get_vocab_size())]

    def mapping(self, text: str, rng: random.Random) -> dict[str, str]:
        """Each nonce word of `text` -> a fresh train-pool word not in the text."""
        words = nonce_words(text)
        lex = Lexicon("train", _template_words() | set(words))
        return {w: lex.draw(rng) for w in words}

    def text(self, text: str, names: dict[str, str]) -> str:
        return _WORDS.sub(lambda m: _cased(names[m.group().lower()], m.group()) if m.group().lower() in names
                          else m.group(), text)

    def _spans(self, ids: list[int], names: dict[str, str]) -> list[tuple[int, int, list[int]]]:
        """(start, end, new tokens) of every renamed word in `ids` that starts and ends on token
        boundaries. Matched on the text, not the tokens: a generated answer may spell a word in other
        pieces than the tokenizer would."""
        pieces = [self._pieces[t] for t in ids]
        starts, at = {}, 0
        for n, piece in enumerate(pieces):
            starts[at] = n
            at += len(piece)
        ends = {a + len(p): n + 1 for (a, n), p in zip(starts.items(), pieces, strict=True)}
        spans = []
        for m in _WORDS.finditer("".join(pieces)):
            new = names.get(m.group().lower())
            if new is None or m.end() not in ends:
                continue
            if m.start() in starts:
                lead = ""
            elif m.start() - 1 in starts and pieces[starts[m.start() - 1]].startswith(" "):
                lead = " "
            else:
                continue
            new_ids = self.tok.encode(lead + _cased(new, m.group()), add_special_tokens=False).ids
            spans.append((starts[m.start() - len(lead)], ends[m.end()], new_ids))
        return spans

    def row(self, row: TeacherRow, names: dict[str, str]) -> TeacherRow:
        ids, a0 = row.student, row.answer_from
        spans = self._spans(ids, names)
        if not spans:
            return row
        k = row.top_ids.shape[1]
        out: list[int] = []
        tops_i: list[torch.Tensor] = []
        tops_p: list[torch.Tensor] = []
        onehot_p = torch.full((k,), -30.0)
        onehot_p[0] = 0.0
        cut, new_a0 = 0, None

        def keep(lo: int, hi: int) -> None:
            for t in range(lo, hi):
                if t >= a0:  # position t - 1 predicts answer token t
                    tops_i.append(row.top_ids[t - a0])
                    tops_p.append(row.top_logp[t - a0])
            out.extend(ids[lo:hi])

        for s, e, new in spans:
            if s < a0 < e:  # a word across the prompt / answer seam: leave the row as it was
                return row
            keep(cut, s)
            if new_a0 is None and s >= a0:
                new_a0 = len(out) - (s - a0)
            for t in new:
                if s >= a0:
                    tid = torch.zeros(k, dtype=row.top_ids.dtype)
                    tid[0] = t
                    tops_i.append(tid)
                    tops_p.append(onehot_p)
                out.append(t)
            cut = e
        keep(cut, len(ids))
        if new_a0 is None:  # every renamed word in the prompt: the answer keeps its tokens, shifted
            new_a0 = a0 + (len(out) - len(ids))
        answer = out[new_a0:]
        return replace(row, student=out, answer_from=new_a0, top_ids=torch.stack(tops_i),
                       top_logp=torch.stack(tops_p).to(row.top_logp.dtype), answer=answer)
