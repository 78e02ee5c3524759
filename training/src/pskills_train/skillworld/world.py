"""generate(): a seeded SkillWorld of n skills and their tasks; write() / load() its folder form.

Skill i of a split depends only on (seed, split, i) and the words skills 0..i-1 drew, so a world of
n skills is the first n skills of any larger one with the same seed, split and filler. Family, length
bucket and depth are crossed in a fixed pattern: family = i mod F; with k = i div F, bucket =
LENGTH_BUCKETS[(k div 3) mod 5] and depth = DEPTHS[k mod 3].
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from ..data.config import REPO
from ..synth.template import rng_for
from .document import DEPTHS, LENGTH_BUCKETS, build_document
from .families import BUILDERS, TEST_ONLY_FAMILIES, Ctx, families_for
from .filler import Filler, load_docs
from .lexicon import POOL_RULE, Lexicon, pool_hash
from .templates import all_words

FORMAT = "pskills.skillworld/1"
SPLITS = ("train", "val", "test")
DEFAULT_TOKENIZER = REPO / "resources/bundles/default/tokenizer.json"


@dataclass
class SwSkill:
    name: str
    text: str  # the SKILL.md
    family: str
    variant: str
    length_bucket: int
    depth: str
    tokens: int
    rule_at: float
    words: dict[str, str]  # role -> nonce word
    filler_sources: list[str]


@dataclass
class Task:
    task_id: str
    skill: str
    skill_path: str  # relative to the world folder
    split: str
    family: str
    variant: str
    length_bucket: int
    depth: str
    skill_tokens: int
    rule_at: float
    turns: str  # "single" | "multi" (user, assistant call, tool result)
    messages: list[dict[str, str]]  # the chat up to, not including, the answer to produce
    checker: dict[str, Any]
    reference: str  # an answer that passes checker
    templates: dict[str, str]  # wording ids: description, rule, question
    unseen: dict[str, bool]  # family / rule / question wording never used in train or val
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class World:
    split: str
    seed: int
    skills: list[SwSkill]
    tasks: list[Task]
    manifest: dict[str, Any]
    practice: list[Task] = field(default_factory=list)  # per skill: same rule, instances disjoint from tasks

    def skill(self, name: str) -> SwSkill:
        return next(s for s in self.skills if s.name == name)

    def write(self, out: str | Path) -> Path:
        return write_world(self, Path(out))


_FILLER_CACHE: dict[tuple[str, str], Filler] = {}


def _filler(source: str | Path | None, tokenizer: Path) -> Filler:
    key = (str(source), str(tokenizer))
    if key not in _FILLER_CACHE:
        docs, desc = load_docs(Path(source) if source is not None else None)
        _FILLER_CACHE[key] = Filler(docs, Tokenizer.from_file(str(tokenizer)), desc)
    return _FILLER_CACHE[key]


def generate(split: str, n: int, seed: int = 0, filler: str | Path | None = None, tasks_per_skill: int = 4,
             tokenizer: str | Path | None = None, practice_per_skill: int = 0) -> World:
    """n skills of one split with tasks_per_skill tasks each. filler: see filler.py (None = default).
    practice_per_skill: practice questions per skill (World.practice), drawn from a separate rng after
    the eval tasks, so the skills and tasks are the same with or without them. A rule with fewer
    distinct instances writes fewer; manifest["practice"]["short"] names those skills."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if n < 1 or tasks_per_skill < 1 or practice_per_skill < 0:
        raise ValueError("n and tasks_per_skill must be >= 1, practice_per_skill >= 0")
    tok_path = Path(tokenizer) if tokenizer else DEFAULT_TOKENIZER
    fill = _filler(filler, tok_path)
    lex = Lexicon(split, fill.vocabulary | all_words())
    fams = families_for(split)
    skills: list[SwSkill] = []
    tasks: list[Task] = []
    practice: list[Task] = []
    short: dict[str, int] = {}  # skill -> practice questions written, where its rule had fewer than asked
    for i in range(n):
        rng = rng_for(seed, "skillworld", split, i)
        family, k = fams[i % len(fams)], i // len(fams)
        bucket, depth = LENGTH_BUCKETS[(k // 3) % len(LENGTH_BUCKETS)], DEPTHS[k % len(DEPTHS)]
        team, topic = lex.draw(rng), lex.draw(rng)
        rule = BUILDERS[family](Ctx(rng, split, lex, team, topic, tasks_per_skill, n_practice=practice_per_skill,
                                    practice_rng=rng_for(seed, "skillworld-practice", split, i)))
        doc = build_document(rng, split, team, topic, rule.sections, bucket, depth, fill, fill.tok)
        name = f"{team}-{topic}"
        skills.append(SwSkill(name, doc.text, family, rule.variant, bucket, depth, doc.tokens, doc.rule_at,
                              {"team": team, "topic": topic, **rule.words}, doc.filler_sources))
        if len(rule.drafts) - tasks_per_skill < practice_per_skill:
            short[name] = len(rule.drafts) - tasks_per_skill
        for j, d in enumerate(rule.drafts):
            into, tid = (tasks, f"sw-{split}-s{seed}-{i:05d}-{j}") if j < tasks_per_skill else \
                (practice, f"sw-{split}-s{seed}-{i:05d}-p{j - tasks_per_skill}")
            into.append(Task(
                tid, name, f"skills/{name}/SKILL.md", split, family, rule.variant,
                bucket, depth, doc.tokens, doc.rule_at, d.turns, d.messages, d.checker, d.reference,
                {"description": doc.description_template, "rule": f"{family}.{rule.variant}.{rule.rule_template}",
                 "question": f"{family}.{rule.variant}.{d.question_template}"},
                {"family": family in TEST_ONLY_FAMILIES, "rule": rule.unseen_rule, "question": d.unseen_question},
                d.extra))
    man = _manifest(split, seed, tasks_per_skill, skills, tasks, fill, tok_path)
    man["practice_per_skill"] = practice_per_skill
    # Skills whose rule has fewer distinct instances than asked write fewer (docs/skillworld.md).
    man["practice"] = {"per_skill": practice_per_skill, "written": len(practice), "short": short}
    return World(split, seed, skills, tasks, man, practice)


def _sha256_file(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _manifest(split: str, seed: int, per: int, skills: list[SwSkill], tasks: list[Task], fill: Filler,
              tok: Path) -> dict[str, Any]:
    return {
        "format": FORMAT, "split": split, "seed": seed, "tasks_per_skill": per,
        "counts": {"skills": len(skills), "tasks": len(tasks),
                   "by_family": dict(sorted(Counter(t.family for t in tasks).items())),
                   "by_length": {str(k): v for k, v in sorted(Counter(t.length_bucket for t in tasks).items())},
                   "by_depth": dict(sorted(Counter(t.depth for t in tasks).items())),
                   "by_turns": dict(sorted(Counter(t.turns for t in tasks).items()))},
        "lexicon": {"pool": split, "pool_hash": pool_hash(split), "rule": POOL_RULE},
        "filler": {"source": fill.source, "side": "heldout" if split == "test" else "train", "sha256": fill.digest()},
        "tokenizer": {"path": str(tok), "sha256": _sha256_file(tok)},
        "skills": [{"name": s.name, "family": s.family, "variant": s.variant, "length_bucket": s.length_bucket,
                    "depth": s.depth, "tokens": s.tokens, "rule_at": s.rule_at, "words": s.words,
                    "filler_sources": s.filler_sources} for s in skills],
    }


def write_world(world: World, out: Path) -> Path:
    """DIR/skills/<name>/SKILL.md, DIR/tasks.jsonl, DIR/manifest.json, built beside DIR and renamed in.
    An existing DIR is replaced only when it is empty or an earlier SkillWorld output."""
    out = out.resolve()
    if out.exists():
        if not out.is_dir():
            raise FileExistsError(f"{out}: exists and is not a folder")
        manifest = out / "manifest.json"
        previous = manifest.is_file() and json.loads(manifest.read_text()).get("format") == FORMAT
        if any(out.iterdir()) and not previous:
            raise FileExistsError(f"{out}: folder is not empty and holds no SkillWorld manifest; pick another --out")
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for s in world.skills:
            (tmp / "skills" / s.name).mkdir(parents=True)
            (tmp / "skills" / s.name / "SKILL.md").write_text(s.text, encoding="utf-8", newline="\n")
        with open(tmp / "tasks.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for t in world.tasks:
                f.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")
        if world.practice:  # practice questions: never scored (docs/skillworld.md)
            with open(tmp / "practice.jsonl", "w", encoding="utf-8", newline="\n") as f:
                for t in world.practice:
                    f.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")
        (tmp / "manifest.json").write_text(json.dumps(world.manifest, indent=1, ensure_ascii=False) + "\n")
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def load(folder: str | Path) -> World:
    """A world written by write_world (skills read back from their SKILL.md files)."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{folder}/manifest.json: not a SkillWorld manifest ({FORMAT})")
    tasks = [Task(**json.loads(line)) for line in (folder / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    pf = folder / "practice.jsonl"
    practice = [Task(**json.loads(line)) for line in pf.read_text(encoding="utf-8").splitlines()
                if line.strip()] if pf.is_file() else []
    skills = [SwSkill(text=(folder / "skills" / m["name"] / "SKILL.md").read_text(encoding="utf-8"), **m)
              for m in manifest["skills"]]
    return World(manifest["split"], manifest["seed"], skills, tasks, manifest, practice)
