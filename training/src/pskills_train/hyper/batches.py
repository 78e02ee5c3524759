"""What each training step reads: the examples of stage 1 (skill texts) or stage 2 (chat trajectories).

The examples of step t, micro-batch m are drawn from an RNG seeded by (seed, stage, t, m), so a resumed
run draws the same data without keeping any state.
"""

from __future__ import annotations

import gzip
import json
import lzma
import random
from collections import defaultdict
from typing import Any

from tokenizers import Tokenizer

from ..config_io import repo_path
from ..data.shards import read_skills
from .config import HyperConfig, RunConfig
from .examples import OBJECTIVES, Example, Stage1Builder, chat_example


def source_group(rec: dict[str, Any]) -> str:
    """An episode's source kind: "skillworld:lookup" -> "skillworld", "real:single:about" -> "real"."""
    return str(rec.get("source", "")).split(":")[0]


def read_trajectories(path: str, missing_ok: bool = False) -> list[dict[str, Any]]:
    p = repo_path(path)
    if not p.exists():
        if missing_ok:
            return []
        raise FileNotFoundError(f"{p}: no trajectories (stage 2 needs the synthesizer's JSONL)")
    # .jsonl.xz / .gz: the episodes packed for a lent GPU (scripts/device-pack.sh), a tenth of the size
    unpack = {".xz": lzma.decompress, ".gz": gzip.decompress}.get(p.suffix)
    text = unpack(p.read_bytes()).decode("utf-8") if unpack else p.read_text(encoding="utf-8")
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


class Stage1Data:
    """Skill texts (corpus skills_train / skills_val); an example is one objective drawn by stage1.weights."""

    def __init__(self, cfg: HyperConfig, run: RunConfig, builder: Stage1Builder,
                 train_items: list[str] | None = None, val_items: list[str] | None = None):
        self.run, self.builder = run, builder
        corpus = repo_path(cfg.data.corpus)
        self.train_items = train_items if train_items is not None else \
            [r["text"] for r in read_skills(corpus, "skills_train")]
        val = val_items if val_items is not None else [r["text"] for r in read_skills(corpus, "skills_val")]
        weights = cfg.stage1.weights
        self.objectives = [o for o in OBJECTIVES if weights.get(o, 0) > 0]
        self.weights = [weights[o] for o in self.objectives]
        self.val = {o: self._val(o, val, cfg.data.val_examples) for o in self.objectives}

    def _val(self, objective: str, texts: list[str], n: int) -> list[Example]:
        rng = random.Random(f"val:{objective}")
        order = rng.sample(range(len(texts)), min(len(texts), n))
        return [self.builder.build(objective, texts[i], rng) for i in order]

    def micro_examples(self, step: int, micro: int) -> list[Example]:
        rng = random.Random(f"{self.run.seed}:1:{step}:{micro}")
        out = []  # draws interleaved as before, so runs and resumes keep their data
        for _ in range(self.run.micro_batch):
            item = self.train_items[rng.randrange(len(self.train_items))]
            out.append(self.builder.build(rng.choices(self.objectives, self.weights)[0], item, rng))
        return out


class Stage2Data:
    """Chat trajectories JSONL; a micro-batch is distinct skills (uniform, or by stage2.source_shares)."""

    def __init__(self, cfg: HyperConfig, run: RunConfig, builder: Stage1Builder, tok: Tokenizer, template: str,
                 train_items: list[Any] | None = None, val_items: list[Any] | None = None):
        self.cfg, self.run, self.builder, self.tok, self.template = cfg, run, builder, tok, template
        self.skill_ids: dict[str, list[int]] = {}
        self.train_items = train_items if train_items is not None else \
            read_trajectories(cfg.data.trajectories_train)
        val = val_items if val_items is not None else read_trajectories(cfg.data.trajectories_val, missing_ok=True)
        shares = cfg.stage2.source_shares
        self.val = {"chat": self._distinct_first(val, cfg.data.val_examples)} if val and not shares else {}
        for group in shares:
            part = [r for r in val if source_group(r) == group]
            if part:
                self.val[f"chat_{group}"] = self._distinct_first(part, cfg.data.val_examples)
        self.by_skill: dict[str, list[int]] = defaultdict(list)
        for i, r in enumerate(self.train_items):
            self.by_skill[str(r.get("skill"))].append(i)
        self.skill_names = sorted(self.by_skill)
        self.group_skills: dict[str, list[str]] = defaultdict(list)
        for name in self.skill_names:
            self.group_skills[source_group(self.train_items[self.by_skill[name][0]])].append(name)
        missing = [g for g in shares if not self.group_skills.get(g)]
        if missing:
            raise ValueError(f"stage2.source_shares: no training episodes from {missing} in "
                             f"{cfg.data.trajectories_train} (sources: {sorted(self.group_skills)})")
        shared = sum(len(self.group_skills[g]) for g, w in shares.items() if w > 0)
        if shares and shared < run.micro_batch:
            raise ValueError(f"stage2.source_shares: {shared} skills in the shared sources, fewer than "
                             f"micro_batch {run.micro_batch}")

    def skill_source(self, rec: dict[str, Any]) -> list[int]:
        text = rec.get("skill_text")
        if text is None:
            if not self.skill_ids:
                for split in ("skills_train", "skills_val"):
                    for r in read_skills(repo_path(self.cfg.data.corpus), split):
                        ids = self.builder.ids(r["text"])
                        self.skill_ids[r["id"]] = ids  # corpus id = the synthesizer's source_path
                        self.skill_ids.setdefault(r["name"], ids)  # names repeat across packages: last resort
            key = rec.get("source_path") if rec.get("source_path") in self.skill_ids else rec["skill"]
            if key not in self.skill_ids:
                raise KeyError(f"trajectory skill {rec['skill']!r}: no skill_text and not in the corpus")
            return self.skill_ids[key]
        return self.builder.ids(text)

    def chat(self, rec: dict[str, Any], source: list[int] | None = None) -> Example:
        return chat_example(self.tok, self.template, rec["messages"],
                            self.skill_source(rec) if source is None else source, self.cfg.data.max_seq)

    def chats(self, recs: list[dict[str, Any]]) -> list[Example]:
        """chat of each; the skill texts tokenized in one batch (the tokenizer's threads: most of the
        step's CPU time when a GPU does the rest)."""
        texts = [r["skill_text"] for r in recs if r.get("skill_text") is not None]
        done = {t: e.ids[: self.builder.max_skill]
                for t, e in zip(texts, self.tok.encode_batch(texts, add_special_tokens=False), strict=True)}
        return [self.chat(r, done.get(r.get("skill_text"))) for r in recs]

    def _distinct_first(self, recs: list[dict[str, Any]], n: int) -> list[Example]:
        """Up to n validation examples, one per skill first, so the in-batch negatives are other skills."""
        seen: set[Any] = set()
        first: list[dict[str, Any]] = []
        rest: list[dict[str, Any]] = []
        for r in recs:
            (rest if r.get("skill") in seen else first).append(r)
            seen.add(r.get("skill"))
        return [self.chat(r) for r in (first + rest)[:n]]

    def micro_examples(self, step: int, micro: int) -> list[Example]:
        rng = random.Random(f"{self.run.seed}:2:{step}:{micro}")
        if self.cfg.stage2.distinct_skills and len(self.skill_names) >= self.run.micro_batch:
            recs = []
            for name in self.pick_skills(rng):
                idx = self.by_skill[name]
                recs.append(self.train_items[idx[rng.randrange(len(idx))]])
            return self.chats(recs)
        return self.chats([self.train_items[rng.randrange(len(self.train_items))]
                           for _ in range(self.run.micro_batch)])

    def pick_skills(self, rng: random.Random) -> list[str]:
        """micro_batch distinct skill names: uniform over skills, or by stage2.source_shares per source."""
        shares = self.cfg.stage2.source_shares
        if not shares:
            return rng.sample(self.skill_names, self.run.micro_batch)
        groups = list(shares)
        if self.cfg.stage2.stratify:
            pool = self.group_skills[rng.choices(groups, [shares[g] for g in groups])[0]]
            return rng.sample(pool, min(self.run.micro_batch, len(pool)))
        chosen: list[str] = []
        while len(chosen) < self.run.micro_batch:
            pool = self.group_skills[rng.choices(groups, [shares[g] for g in groups])[0]]
            name = pool[rng.randrange(len(pool))]
            if name not in chosen:
                chosen.append(name)
        return chosen
