"""The distilled conditions (`--distill-steps K`, docs/distill.md):

- `distilled`: the instant adapter (the hypernetwork's) as init, K steps;
- `distilled_zero`: zero init, K steps;
- `distilled_synth`: no tests and no Examples, only the synthesizer's questions (template, cloze,
  requests), instant init where there is a hypernetwork;
- `distilled_wrong`: another skill's `distilled` adapter on this skill's tasks (the control);
- `<condition>@<steps>`: the same run's adapter after fewer steps, for the curves.

Only tasks whose adapter is the whole skill get a distilled row (a real skill's reconstruction tasks
compile the skill without a section, which would need one distillation per task).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from ..distill.round_trip import SOURCE
from ..distill.run import Distilled, Distiller
from ..distill.student import distill
from ..distill.teacher import Teacher
from ..distill_recipe import Plan, Recipe, load_recipe
from ..model.from_onnx import load_onnx_lm
from ..scoring.tasks import Prompter, Task
from ..synth.skill import Skill
from . import leaks
from .adapters import Provider, Row
from .diversity import diversity
from .report import mean, per_skill
from .retrieval import candidates, rank_metrics, retrieval_nll

CURVE_OF = ("distilled", "distilled_zero")
CURVE_STEPS = (0, 5, 10, 20, 40)


@dataclass
class DistillSlot:
    """Runs and caches each (condition, skill) distillation of one eval process."""
    distiller: Distiller
    plan: Plan
    skills: list[Skill]
    practice: list[list[dict[str, Any]]]  # per skill: its test rows (a SkillWorld world's practice.jsonl)
    instant: Provider | None
    curve: tuple[int, ...]
    wrong: list[int] | None = None
    wrong_base: str = "distilled"  # distilled_zero where there is no hypernetwork
    merge_base: str = "distilled"  # --merge-init zero: distilled_zero (docs/distill.md "Merging distilled adapters")
    done: dict[tuple[str, int], Distilled] = field(default_factory=dict)
    scored: Callable[[int], list[Task]] | None = None  # skill -> its scored tasks (the suite's), for the leak count


    def run(self, base: str, i: int) -> Distilled:
        key = (base, i)
        if key not in self.done:
            skill = self.skills[i]
            sources = self.plan.synth_sources if base == "distilled_synth" else self.plan.sources
            init = self.instant(skill.text) if self.instant is not None and base != "distilled_zero" else None
            snaps = self.curve if base in CURVE_OF else ()
            d = self.distiller(skill, sources, init, tests=self.practice[i], snapshots=snaps)
            if self.scored is not None:  # what it trained on against what the distilled conditions score
                qs = self.distiller.teacher_rows(skill, sources, tests=self.practice[i])[0]
                d.record["leaks"] = leaks.count(qs, [t for t in self.scored(i) if t.source == skill.text])
            self.done[key] = d
        return self.done[key]

    def rehearse(self, members: list[int], init: Row, steps: int) -> Row:
        """`init` (a merge of the members' adapters) after `steps` more steps over every member's teacher
        rows together, each answered with its own skill in context (docs/distill.md "Merging distilled
        adapters")."""
        rows = [r for i in members for r in self.distiller.teacher_rows(
            self.skills[i], self.plan.sources, tests=self.practice[i])[1]]
        rec = Recipe(**{**vars(self.plan.recipe), "steps": steps, "snapshots": ()})
        return distill(self.distiller.lm, rows, init, rec, self.distiller.seed).adapter

    def adapter(self, cond: str, i: int) -> Row:
        base, _, steps = cond.partition("@")
        if base == "distilled_wrong":
            if self.wrong is None:
                raise ValueError("distilled_wrong needs at least 2 skills")
            return self.run(self.wrong_base, self.wrong[i]).result.adapter
        d = self.run(base, i)
        return d.result.snapshots[int(steps)] if steps else d.result.adapter

    def adapters(self, indices: list[int], convert) -> dict[int, Any]:
        """The distilled adapter (the `wrong_base` condition: instant init where there is a hypernetwork)
        of each skill of `indices` that this process distilled, through `convert`."""
        return {i: convert(self.done[(self.wrong_base, i)].result.adapter) for i in indices
                if (self.wrong_base, i) in self.done}

    def records(self) -> dict[str, dict[str, Any]]:
        return {f"{base}:{self.skills[i].name}": d.record for (base, i), d in sorted(self.done.items())}


def curve_conditions(steps: int, curve: tuple[int, ...]) -> list[str]:
    return [f"{c}@{s}" for c in CURVE_OF for s in curve if s < steps]


def make_slot(backend, tok, chat_template: str, manifest: dict[str, Any], bundle: Path, context: int,
              steps: int, skills: list[Skill], practice: list[list[dict[str, Any]]], instant: Provider | None,
              seed: int, recipe: Path | None = None, curve: tuple[int, ...] = CURVE_STEPS,
              max_answer: int | None = None) -> DistillSlot:
    """max_answer: the teacher's answer cap instead of the recipe's (the eval passes its own, so the
    teacher and in_context reserve the same answer room)."""
    lm = backend.lm if hasattr(backend, "lm") else load_onnx_lm(bundle)
    plan = load_recipe(recipe, steps=steps, max_answer=max_answer) if recipe else \
        load_recipe(steps=steps, max_answer=max_answer)
    rec = plan.recipe
    prompter = Prompter(tok, chat_template, manifest["architecture"]["max_positions"])
    stop = set(manifest["special_tokens"]["stop"])
    teacher = Teacher(backend, prompter, stop, manifest["special_tokens"]["eos"], context, rec.top_k,
                      rec.max_answer, rec.batch)
    distiller = Distiller(lm.eval(), teacher, list(manifest["lora"]["layers"]), manifest["lora"]["default_rank"],
                          plan, seed)
    torch.manual_seed(seed)
    return DistillSlot(distiller, plan, skills, practice, instant, tuple(s for s in curve if s < steps))


def without_round_trip(plan: Plan) -> Plan:
    """`--practice-no-round-trip`: the plan without the round_trip source in either source list."""
    return replace(plan, sources=tuple(s for s in plan.sources if s != SOURCE),
                   synth_sources=tuple(s for s in plan.synth_sources if s != SOURCE))


def read_practice(folder: Path, names: list[str]) -> list[list[dict[str, Any]]]:
    """A SkillWorld folder's practice.jsonl rows per skill (empty lists where there is none)."""
    pf = folder / "practice.jsonl"
    rows = [json.loads(line) for line in pf.read_text().splitlines() if line.strip()] if pf.is_file() else []
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["skill"], []).append(r)
    return [by.get(n, []) for n in names]


def cap_tests(practice: list[list[dict[str, Any]]], names: list[str], n: int | None,
              seed: int) -> list[list[dict[str, Any]]]:
    """`--practice-tests N`: at most N of each skill's own tests, drawn by the seed and the skill's name
    (so a skill's draw does not depend on the others), kept in file order; None keeps them all."""
    if n is None:
        return practice
    if n < 0:
        raise ValueError(f"--practice-tests must be >= 0 or 'all', got {n}")
    out = []
    for rows, name in zip(practice, names, strict=True):
        keep = sorted(random.Random(f"{seed}:practice-tests:{name}").sample(range(len(rows)), min(n, len(rows))))
        out.append([rows[k] for k in keep])
    return out


def extras(rows: list[dict[str, Any]], conds: list[str], records: dict[str, dict[str, Any]], metric: str,
           steps: int | None) -> dict[str, Any]:
    """The report's `curve.<condition>.<steps>` (the metric after each number of steps) and `distill`
    (per condition: mean wall seconds per skill, practice sources; every run's record)."""
    if steps is None:
        return {}
    curve: dict[str, dict[str, float | None]] = {}
    for c in CURVE_OF:
        if c not in conds:
            continue
        pts = sorted({int(x.partition("@")[2]) for x in conds if x.startswith(f"{c}@")})
        curve[c] = {**{str(s): mean(per_skill(rows, f"{c}@{s}", metric)) for s in pts},
                    str(steps): mean(per_skill(rows, c, metric))}
    per: dict[str, dict[str, Any]] = {}
    for key, rec in records.items():
        base = key.partition(":")[0]
        e = per.setdefault(base, {"skills": 0, "seconds": 0.0, "teacher_seconds": 0.0, "sources": {}})
        e["skills"] += 1
        e["seconds"] += rec["seconds"]
        e["teacher_seconds"] += rec["teacher_seconds"]
        for s, n in rec["sources"].items():
            e["sources"][s] = e["sources"].get(s, 0) + n
    summary = {b: {"skills": e["skills"], "seconds_per_skill": round(e["seconds"] / e["skills"], 2),
                   "teacher_seconds_per_skill": round(e["teacher_seconds"] / e["skills"], 2),
                   "questions_per_skill": {s: round(n / e["skills"], 1) for s, n in e["sources"].items()}}
               for b, e in per.items()}
    return {"curve": curve, "distill": {"steps": steps, "by_condition": summary, "records": records}}


def adapter_figures(suite, parts: list) -> dict[str, Any]:
    """Diversity and retrieval of the distilled adapters, as the report gives them for the instant ones:
    ΔW cosines between skills, and per skill the rank of its own adapter among K candidates by the mean
    answer NLL of the skill's distilled-scored tasks (the own NLL is the row already scored)."""
    slot: DistillSlot = suite.prov.distill
    base = slot.wrong_base
    ads = {i: a for p in parts for i, a in p.distilled.items()}
    out: dict[str, Any] = {"condition": base}
    if len(ads) < 2:
        why = "needs 2 skills with a distilled adapter"
        return {**out, "diversity": {"n": len(ads), "skipped": why}, "retrieval": {"k": 0, "skipped": why}}
    out["diversity"] = diversity([ads[i] for i in sorted(ads)])
    idx = sorted(ads)
    own: dict[int, dict[str, float]] = {}
    for r in (r for p in parts for r in p.rows if r["condition"] == base):
        own.setdefault(r["skill_index"], {})[r["task"]] = r["nll"]
    torch_ads = {pos: {k: (torch.from_numpy(a), torch.from_numpy(b)) for k, (a, b) in ads[i].items()}
                 for pos, i in enumerate(idx)}
    ranked = []
    for pos, cands in enumerate(candidates(len(idx), suite.st.retrieval_k, suite.st.seed)):
        i = idx[pos]
        if own.get(i):
            ranked.append(retrieval_nll(suite.backend, suite.prompter, suite.plan, suite.tasks(i), own[i], cands,
                                        suite.st, suite.stop_ids, torch_ads.__getitem__))
    out["retrieval"] = {**rank_metrics(ranked), "tasks": "the tasks scored with the distilled adapter"}
    return out

