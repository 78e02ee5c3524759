"""One skill distilled: practice questions -> teacher rows -> K student steps from an init adapter.

The recipe (steps, learning rate, batch, top-k, sources) is one file, training/configs/distill.json,
read by distill_recipe.py; docs/distill.md describes the method and what each field means.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from ..distill_recipe import Plan, Recipe
from ..model.llama import LlamaLM
from ..model.lora import Row
from ..synth.skill import Skill
from . import round_trip
from .practice import counts, gather
from .student import Result, distill, zero_init
from .teacher import Teacher, TeacherRow

RowsKey = tuple[str, tuple[str, ...], str]


def rows_key(skill: Skill, sources: tuple[str, ...], tests: list[dict] | None,
             trajectories: list[dict] | None) -> RowsKey:
    """Everything a skill's teacher rows depend on within one Distiller (its plan, seed and teacher are
    fixed): the skill, the sources, and the tests and trajectories practice is gathered from."""
    given = json.dumps([tests or [], trajectories or []], sort_keys=True, ensure_ascii=False)
    return skill.sha256, sources, hashlib.sha256(given.encode()).hexdigest()


@dataclass
class Distilled:
    result: Result
    record: dict[str, Any]  # what a distilled adapter records: sources and counts, steps, loss, seconds


class Distiller:
    def __init__(self, lm: LlamaLM, teacher: Teacher, layers: list[int], rank: int, plan: Plan, seed: int = 0):
        self.lm, self.teacher, self.layers, self.rank, self.plan, self.seed = lm, teacher, layers, rank, plan, seed
        # The teacher's rows depend on the skill and its practice only (rows_key): both inits share them.
        self.rows: dict[RowsKey, tuple[list, list[TeacherRow], float]] = {}
        self.dropped: dict[RowsKey, dict[str, int] | None] = {}  # self-written, by kind

    def teacher_rows(self, skill: Skill, sources: tuple[str, ...], tests: list[dict] | None = None,
                     trajectories: list[dict] | None = None) -> tuple[list, list[TeacherRow], float]:
        """The skill's practice questions, their teacher rows and the teacher pass's seconds (cached).
        `round_trip` among the sources adds follow-ups to the teacher's tool calls (round_trip.py)."""
        key = rows_key(skill, sources, tests, trajectories)
        if key not in self.rows:
            t0 = time.perf_counter()
            report: dict = {}
            gathered = tuple(s for s in sources if s != round_trip.SOURCE)
            qs = gather(skill, gathered, tests=tests, trajectories=trajectories, seed=self.seed,
                        limit=self.plan.questions, writer=self.teacher.write, report=report)
            self.dropped[key] = report.get("dropped")
            rows = self.teacher.rows(skill.text, qs)
            if round_trip.SOURCE in sources:  # the teacher's tool calls, followed by a made-up result
                said = [(qs[r.question], self.teacher.said(r)) for r in rows]
                more = round_trip.follow_ups(said, self.seed, skill.text)
                if more:
                    rows += self.teacher.rows(skill.text, more)
                    qs = [*qs, *more]
            self.rows[key] = (qs, rows, time.perf_counter() - t0)
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
        return Distilled(res, {
            "kind": "distilled", "init": "instant" if init is not None else "zero", "sources": counts(qs),
            "self_written_dropped": self.dropped.get(rows_key(skill, sources, tests, trajectories)),
            "rows": len(rows), "focused": sum(r.context != skill.text for r in rows), "steps": rec.steps,
            "lr": rec.lr, "batch": rec.batch,
            "final_loss": res.losses[-1], "first_loss": res.losses[0],
            "teacher_seconds": round(t_teacher, 2), "train_seconds": round(res.seconds, 2),
            "seconds": round(time.perf_counter() - t0, 2)})
