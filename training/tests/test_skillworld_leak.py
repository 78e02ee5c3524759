"""No test-pool nonce word reaches anything training reads.

Always (no build needed): SkillWorld train and val worlds, with the filler fixture and the default filler;
the committed text a fresh clone trains on (the filler fixture, the templates); the lexicon's reserved words;
and the whole screen below on training data the test builds itself (SkillWorld train / val folders and
the episodes train/build_episodes.py makes of them), so CI runs it on a fresh clone.

With training/.cache built, every text source training reads, only the fields a model sees:
- the corpus splits: docs_train and skills_train (pretraining's train.bin, the tokenizer, stage-1 skills),
  docs_val and skills_val (held-out loss, stage-1 validation);
- the episodes of train/build_episodes.py (base.jsonl for pretraining, stage2.jsonl for the hypernetwork)
  and the synthesized trajectories, under training/.cache and wherever a training config names them;
- the SkillWorld train / val folders the episodes are built from (tasks and SKILL.md files).
A test-pool word in that text must be one the lexicon never draws (a template word or a reserved word).
PSKILLS_UPDATE_RESERVED=1 adds what it finds to skillworld/reserved_words.txt instead of failing.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path

import pytest

from pskills_train.data.config import REPO
from pskills_train.skillworld import generate, pool_of
from pskills_train.skillworld.filler import DEFAULT_CORPUS, DEFAULT_FIXTURE
from pskills_train.skillworld.lexicon import RESERVED_FILE, Lexicon, reserved_words
from pskills_train.skillworld.templates import all_words
from pskills_train.skillworld.world import DEFAULT_TOKENIZER, FORMAT, _filler

CACHE = REPO / "training/.cache"
CONFIGS = REPO / "training/configs"
CORPUS_SPLITS = ("docs_train", "skills_train", "docs_val", "skills_val")
READ_FIELDS = ("text", "skill_text", "reference")  # plus messages[*].content; ids, names and checkers are not read
# Test words that did occur in docs_train before the lexicon screened with reserved_words.txt.
FOUND_IN_DOCS = ("gero", "kalle", "lefi", "linger", "rambus", "semen")
_WORD = re.compile(r"[A-Za-z]+")  # the words of Filler.vocabulary
_REGEX_ESCAPE = re.compile(r"\\[A-Za-z]")


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def world_text(world) -> set[str]:
    out: set[str] = set()
    for s in world.skills:
        out |= words(s.text)
    for t in world.tasks:
        out |= words(" ".join([*(m["content"] for m in t.messages), t.reference, *_leaves(t.checker)]))
    return out


def _leaves(spec, key: str = "") -> list[str]:
    """String values of a checker spec (its keys and kinds are not text a model reads). In a regex, "\\b"
    before "refol" is an escape, not the word "brefol"."""
    if isinstance(spec, dict):
        return [x for k, v in spec.items() if k != "kind" for x in _leaves(v, k)] + [k for k in spec.get("args", {})]
    if isinstance(spec, list):
        return [x for v in spec for x in _leaves(v, key)]
    if not isinstance(spec, str):
        return []
    return [_REGEX_ESCAPE.sub(" ", spec) if key == "pattern" else spec]


def nonce(world) -> set[str]:
    return {w for s in world.skills for w in s.words.values()}


def never_drawn() -> set[str]:
    """Words no split's lexicon draws, whatever the filler."""
    return all_words() | reserved_words()


def reserve(leaked: dict) -> dict:
    """With PSKILLS_UPDATE_RESERVED=1, add the leaked words to reserved_words.txt and report none."""
    if not leaked or not os.environ.get("PSKILLS_UPDATE_RESERVED"):
        return leaked
    header = [line for line in RESERVED_FILE.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    RESERVED_FILE.write_text("\n".join(header + sorted(reserved_words() | leaked.keys())) + "\n", encoding="utf-8")
    reserved_words.cache_clear()
    return {}


# --- without the build -----------------------------------------------------------------------------------


@pytest.mark.parametrize("filler", ["fixture", "default"])
def test_train_and_val_never_see_a_test_word(filler):
    source = DEFAULT_FIXTURE if filler == "fixture" else None
    test = generate("test", 100, seed=0, filler=source)
    test_words = nonce(test)
    assert test_words and all(pool_of(w) == "test" for w in test_words)
    assert not test_words & reserved_words()
    exclusion = _filler(source, DEFAULT_TOKENIZER).vocabulary | never_drawn()
    for split, seed in (("train", 0), ("train", 11), ("val", 0)):
        world = generate(split, 100, seed=seed, filler=source)
        assert all(pool_of(w) == split for w in nonce(world)), split
        seen = world_text(world)
        assert not seen & test_words, (split, sorted(seen & test_words)[:5])
        # Any word of the text that the grammar could have drawn for test must be a real word.
        assert {w for w in seen if pool_of(w) == "test"} <= exclusion


def test_reserved_words_are_sorted_test_pool_words():
    entries = [w for line in RESERVED_FILE.read_text(encoding="utf-8").splitlines()
               if (w := line.split("#", 1)[0].strip())]
    assert entries == sorted(set(entries)), "reserved_words.txt: keep one word a line, sorted, no repeats"
    assert set(entries) == reserved_words()
    # Only test-pool words: train and val draws stay what they were.
    assert not [w for w in entries if pool_of(w) != "test"]
    assert set(FOUND_IN_DOCS) <= reserved_words()


def test_the_lexicon_never_draws_a_reserved_word():
    lex, rng = Lexicon("test", frozenset()), random.Random(0)
    drawn = {lex.draw(rng) for _ in range(5000)}
    assert len(drawn) == 5000 and not drawn & reserved_words()


def test_committed_training_text_holds_no_drawable_test_word():
    """The filler fixture is what a fresh clone's train worlds are padded with; a test world padded from
    the corpus does not exclude its words, so its test-pool words must be reserved."""
    files = sorted(p for p in DEFAULT_FIXTURE.rglob("*") if p.is_file())
    assert files
    found = {w: p.relative_to(REPO).as_posix() for p in files for w in words(p.read_text(encoding="utf-8"))
             if pool_of(w) == "test" and w not in never_drawn()}
    found = reserve(found)
    assert not found, f"test-pool words in committed training text, not in {RESERVED_FILE.name}: {found}"


# --- with the build (training/.cache) --------------------------------------------------------------------


def training_files() -> list[Path]:
    """Every built JSON-lines file training reads, and the SKILL.md files of the train / val worlds."""
    corpora, named = {DEFAULT_CORPUS}, set()
    for cfg in sorted(CONFIGS.glob("**/*.json")):
        data = json.loads(cfg.read_text(encoding="utf-8")).get("data", {})
        if data.get("corpus"):
            corpora.add(REPO / data["corpus"])
        named |= {REPO / data[k] for k in ("episodes", "trajectories_train", "trajectories_val") if data.get(k)}
    files = {f for c in corpora for s in CORPUS_SPLITS for f in (c / s).glob("*.jsonl")}
    files |= {f for f in named if f.is_file()}
    files |= set(CACHE.glob("episodes/**/*.jsonl")) | set(CACHE.glob("trajectories/*.jsonl"))
    for m in [*CACHE.glob("*/manifest.json"), *CACHE.glob("*/*/manifest.json")]:
        manifest = json.loads(m.read_text(encoding="utf-8"))
        if isinstance(manifest, dict) and manifest.get("format") == FORMAT and manifest.get("split") != "test":
            files |= {m.parent / "tasks.jsonl", *m.parent.glob("skills/*/SKILL.md")}
    return sorted(files)


def row_texts(row: dict) -> list[str]:
    """What a model reads of a corpus record, an episode, a trajectory or a SkillWorld task."""
    texts = [row[k] for k in READ_FIELDS if isinstance(row.get(k), str)]
    return texts + [m["content"] for m in row.get("messages", ()) if isinstance(m.get("content"), str)]


def screen(files: list[Path]) -> dict[str, Path]:
    """Test-pool word -> the first file it occurs in. Streams the files; a long text repeated across
    rows and files (a skill in each of its tasks' episodes) is read once."""
    found: dict[str, Path] = {}
    checked: set[str] = set()
    seen_texts: set[int] = set()
    for f in files:
        in_file: set[str] = set()
        if f.suffix == ".jsonl":
            with open(f, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    texts = row_texts(json.loads(line))
                    assert texts, f"{f}:{n}: a row with no text field; teach row_texts() what training reads of it"
                    for text in texts:
                        if len(text) > 256:
                            if hash(text) in seen_texts:
                                continue
                            seen_texts.add(hash(text))
                        in_file.update(_WORD.findall(text))
        else:
            in_file.update(_WORD.findall(f.read_text(encoding="utf-8")))
        new = {w.lower() for w in in_file} - checked
        checked |= new
        found.update((w, f) for w in new if pool_of(w) == "test")
    return found


def world_files(root: Path) -> list[Path]:
    """The tasks and SKILL.md files of every SkillWorld train / val folder under `root`."""
    files: set[Path] = set()
    for m in root.glob("**/manifest.json"):
        manifest = json.loads(m.read_text(encoding="utf-8"))
        if isinstance(manifest, dict) and manifest.get("format") == FORMAT and manifest.get("split") != "test":
            files |= {m.parent / "tasks.jsonl", *m.parent.glob("skills/*/SKILL.md")}
    return sorted(files)


def test_training_data_built_here_holds_no_drawable_test_word(tmp_path):
    """The screen on data built now, from the committed filler: what CI checks on a fresh clone."""
    from pskills_train.skillworld.__main__ import main as skillworld
    from pskills_train.train.build_episodes import main as build_episodes

    sw = tmp_path / "sw"
    for split, n in (("train", 24), ("val", 8)):
        assert skillworld(["generate", "--split", split, "--n", str(n), "--seed", "0", "--out", str(sw / split),
                           "--filler", str(DEFAULT_FIXTURE), "--practice-per-skill", "2"]) == 0
    assert build_episodes(["--out-dir", str(tmp_path / "episodes"), "--skillworld", str(sw / "train"),
                           "--skillworld", str(sw / "val")]) == 0
    files = world_files(sw) + sorted((tmp_path / "episodes").glob("*.jsonl"))
    assert len(files) > 30
    assert_no_drawable_test_word(files)


@pytest.mark.needs_data
def test_nothing_training_reads_holds_a_drawable_test_word():
    files = training_files()
    if not files:
        pytest.skip("data-dependent: training/.cache is not built (no corpus, episodes, trajectories or SkillWorld "
                    "train/val folders); test_training_data_built_here_... screens data built at test time")
    assert_no_drawable_test_word(files)


def assert_no_drawable_test_word(files: list[Path]) -> None:
    t0 = time.perf_counter()
    found = screen(files)
    leaked = {w: f for w, f in found.items() if w not in never_drawn()}
    leaked = reserve(leaked)
    shown = ", ".join(f"{w} ({f.relative_to(REPO)})" for w, f in sorted(leaked.items())[:20])
    assert not leaked, (f"{len(leaked)} test-pool words occur in text training reads and could be drawn for a "
                        f"test skill: {shown}. Add them to {RESERVED_FILE.relative_to(REPO)} "
                        "(PSKILLS_UPDATE_RESERVED=1 does it).")
    # The test worlds the evals use (default filler: the corpus when built).
    used = nonce(generate("test", 100, seed=0)) | nonce(generate("test", 100, seed=1))
    assert not used & found.keys(), sorted((w, str(found[w])) for w in used & found.keys())
    print(f"screened {len(files)} files, {len(found)} test-pool words found, all never drawn, "
          f"{time.perf_counter() - t0:.1f} s")
