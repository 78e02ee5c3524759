"""Nonce words from a syllable grammar, split into disjoint train / val / test pools.

A word is two syllables (onset + vowel + coda), lowercase ASCII. Its pool is fixed by a hash of the
word alone, so no seed, split or filler can move a word from one pool to another:

    sha256("skillworld/pool/v1:" + word)[:4] as an integer, mod 10: 0-6 train, 7 val, 8-9 test

Words that occur in the filler (real skill text) or in the templates are never drawn: the exclusion
set is passed in by the caller. Nor is any word of reserved_words.txt: the test-pool words that occur in
text training reads (the docs and skills corpus, episodes, trajectories, the filler fixture), which the
grammar happens to make ("gero", "rambus", "kalle"). The filler covers only skill text, so without this
list a test skill could use a word the base read in its docs. Every entry is a test-pool word, so train
and val draws are unchanged. training/tests/test_skillworld_leak.py keeps it complete.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from functools import cache
from pathlib import Path

ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
          "br", "dr", "gl", "kr", "pl", "tr", "sk", "vl", "zr", "sn")
VOWELS = ("a", "e", "i", "o", "u")
CODAS = ("", "n", "r", "l", "k", "s", "m", "x")
POOL_RULE = 'sha256("skillworld/pool/v1:" + word)[:4] mod 10: 0-6 train, 7 val, 8-9 test'
POOLS = ("train", "val", "test")
_SYLLABLE = f"(?:{'|'.join(sorted(ONSETS, key=len, reverse=True))})[aeiou](?:{'|'.join(c for c in CODAS if c)})?"
_WORD = re.compile(f"(?:{_SYLLABLE}){{2}}")
RESERVED_FILE = Path(__file__).with_name("reserved_words.txt")


def pool_of(word: str) -> str | None:
    """The pool a grammatical nonce word belongs to, or None for anything the grammar cannot make."""
    if not _WORD.fullmatch(word):
        return None
    h = int.from_bytes(hashlib.sha256(f"skillworld/pool/v1:{word}".encode()).digest()[:4], "big") % 10
    return "train" if h < 7 else "val" if h == 7 else "test"


@cache
def reserved_words() -> frozenset[str]:
    """The words of reserved_words.txt (one a line; '#' starts a comment)."""
    lines = RESERVED_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w for line in lines if (w := line.split("#", 1)[0].strip()))


def pool_hash(pool: str) -> str:
    """Identifies a pool: the grammar, the rule and the pool name (not the exclusions)."""
    spec = {"onsets": ONSETS, "vowels": VOWELS, "codas": CODAS, "rule": POOL_RULE, "pool": pool}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


class Lexicon:
    """Draws unused words of one pool. `used` is shared by the caller so a world never repeats a word."""

    def __init__(self, pool: str, exclude: set[str] | frozenset[str]):
        if pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
        self.pool, self.exclude, self.reserved = pool, exclude, reserved_words()
        self.used: set[str] = set()
        self._by_head: dict[str, list[str]] = {}  # first three letters -> used words

    def draw(self, rng: random.Random) -> str:
        for _ in range(100_000):
            word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(2))
            if word in self.used or word in self.exclude or word in self.reserved or not _WORD.fullmatch(word):
                continue
            # One word a prefix of another ("tada", "tadak") would let a checker accept the wrong one.
            if any(word.startswith(u) or u.startswith(word) for u in self._by_head.get(word[:3], ())):
                continue
            if pool_of(word) == self.pool:
                self.used.add(word)
                self._by_head.setdefault(word[:3], []).append(word)
                return word
        raise RuntimeError(f"lexicon pool {self.pool!r} is exhausted")
