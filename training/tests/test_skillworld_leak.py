"""No test-pool nonce word reaches anything training reads: SkillWorld train/val skills and tasks,
and (when built) the corpus skills and the template-synth trajectories."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pskills_train.data.config import REPO
from pskills_train.skillworld import generate, pool_of
from pskills_train.skillworld.filler import DEFAULT_CORPUS, DEFAULT_FIXTURE
from pskills_train.skillworld.templates import all_words
from pskills_train.skillworld.world import DEFAULT_TOKENIZER, _filler

TRAJECTORIES = REPO / "training/.cache/trajectories"


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def world_text(world) -> set[str]:
    out: set[str] = set()
    for s in world.skills:
        out |= words(s.text)
    for t in world.tasks:
        out |= words(" ".join([*(m["content"] for m in t.messages), t.reference, *_leaves(t.checker)]))
    return out


def _leaves(spec) -> list[str]:
    """String values of a checker spec (its keys and kinds are not text a model reads)."""
    if isinstance(spec, dict):
        return [x for k, v in spec.items() if k != "kind" for x in _leaves(v)] + [k for k in spec.get("args", {})]
    if isinstance(spec, list):
        return [x for v in spec for x in _leaves(v)]
    return [spec] if isinstance(spec, str) else []


def nonce(world) -> set[str]:
    return {w for s in world.skills for w in s.words.values()}


@pytest.mark.parametrize("filler", ["fixture", "default"])
def test_train_and_val_never_see_a_test_word(filler):
    source = DEFAULT_FIXTURE if filler == "fixture" else None
    test = generate("test", 100, seed=0, filler=source)
    test_words = nonce(test)
    assert test_words and all(pool_of(w) == "test" for w in test_words)
    exclusion = _filler(source, DEFAULT_TOKENIZER).vocabulary | all_words()
    for split, seed in (("train", 0), ("train", 11), ("val", 0)):
        world = generate(split, 100, seed=seed, filler=source)
        assert all(pool_of(w) == split for w in nonce(world)), split
        seen = world_text(world)
        assert not seen & test_words, (split, sorted(seen & test_words)[:5])
        # Any word of the text that the grammar could have drawn for test must be a real word.
        assert {w for w in seen if pool_of(w) == "test"} <= exclusion


def test_corpus_and_trajectories_hold_no_test_word():
    corpus = DEFAULT_CORPUS / "skills_train"
    files = sorted(corpus.glob("*.jsonl")) + sorted(TRAJECTORIES.glob("*.jsonl"))
    if not files:
        pytest.skip("no corpus or trajectories built")
    test_words = nonce(generate("test", 100, seed=0)) | nonce(generate("test", 100, seed=1))
    for f in files:
        found = words(Path(f).read_text(encoding="utf-8")) & test_words
        assert not found, (f.name, sorted(found)[:5])
