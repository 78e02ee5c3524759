"""One skill distilled: practice questions -> teacher rows -> K student steps from an init adapter.

The recipe (steps, learning rate, batch, top-k, sources) is one file, training/configs/distill.json;
docs/distill.md describes the method and what each field means.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..model.llama import LlamaLM
from ..synth.skill import Skill
from .practice import counts, gather
from .student import Recipe, Result, Row, distill, zero_init
from .teacher import Teacher, TeacherRow

RECIPE = Path(__file__).resolve().parents[3] / "configs" / "distill.json"


@dataclass
class Plan:
    recipe: Recipe
    questions: int
    sources: tuple[str, ...]
    synth_sources: tuple[str, ...]


def load_recipe(path: Path = RECIPE, **override: Any) -> Plan:
    raw = {**json.loads(Path(path).read_text()), **{k: v for k, v in override.items() if v is not None}}
    known = {f.name for f in fields(Recipe)}
    unknown = set(raw) - known - {"questions", "sources", "synth_sources"}
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}")
    args: dict[str, Any] = {k: (tuple(v) if k == "snapshots" else v) for k, v in raw.items() if k in known}
    rec = Recipe(**args)
    return Plan(rec, int(raw["questions"]), tuple(raw["sources"]), tuple(raw["synth_sources"]))


@dataclass
class Distilled:
    result: Result
    record: dict[str, Any]  # what a distilled adapter records: sources and counts, steps, loss, seconds


class Distiller:
    def __init__(self, lm: LlamaLM, teacher: Teacher, layers: list[int], rank: int, plan: Plan, seed: int = 0):
        self.lm, self.teacher, self.layers, self.rank, self.plan, self.seed = lm, teacher, layers, rank, plan, seed
        # The teacher's rows depend on the skill and the questions only: both inits share them.
        self.rows: dict[tuple[str, tuple[str, ...]], tuple[list, list[TeacherRow], float]] = {}
        self.dropped: dict[tuple[str, tuple[str, ...]], dict[str, int] | None] = {}  # self-written, by kind

    def teacher_rows(self, skill: Skill, sources: tuple[str, ...], tests: list[dict] | None = None,
                     trajectories: list[dict] | None = None) -> tuple[list, list[TeacherRow], float]:
        """The skill's practice questions, their teacher rows and the teacher pass's seconds (cached)."""
        key = (skill.sha256, sources)
        if key not in self.rows:
            t0 = time.perf_counter()
            report: dict = {}
            qs = gather(skill, sources, tests=tests, trajectories=trajectories, seed=self.seed,
                        limit=self.plan.questions, writer=self.teacher.write, report=report)
            self.dropped[key] = report.get("dropped")
            self.rows[key] = (qs, self.teacher.rows(skill.text, qs), time.perf_counter() - t0)
        return self.rows[key]

    def __call__(self, skill: Skill, sources: tuple[str, ...], init: Row | None, tests: list[dict] | None = None,
                 trajectories: list[dict] | None = None, snapshots: tuple[int, ...] = ()) -> Distilled:
        qs, rows, t_teacher = self.teacher_rows(skill, sources, tests, trajectories)
        t0 = time.perf_counter() - t_teacher  # a run's seconds include its teacher pass, shared or not
        start = init if init is not None else zero_init(self.lm, self.layers, self.rank, self.seed)
        rec = Recipe(**{**vars(self.plan.recipe), "snapshots": snapshots})
        res = distill(self.lm, rows, start, rec, self.seed)
        if 0 in snapshots:
            res.snapshots[0] = start
        chunks = sorted({r.chunk for r in rows if r.chunk is not None})
        return Distilled(res, {
            "kind": "distilled", "init": "instant" if init is not None else "zero", "sources": counts(qs),
            "self_written_dropped": self.dropped.get((skill.sha256, sources)),
            "rows": len(rows), "chunks": len(chunks) or 1, "steps": rec.steps, "lr": rec.lr, "batch": rec.batch,
            "final_loss": res.losses[-1], "first_loss": res.losses[0],
            "teacher_seconds": round(t_teacher, 2), "train_seconds": round(res.seconds, 2),
            "seconds": round(time.perf_counter() - t0, 2)})
