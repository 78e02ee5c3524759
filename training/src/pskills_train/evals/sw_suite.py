"""The SkillWorld suite (`--suite skillworld`): generated skills whose use a checker verifies exactly.

A SkillWorld folder (pskills_train.skillworld: skills/<name>/SKILL.md and tasks.jsonl) has rows with
`messages` (the turns before the answer), a declarative `checker` spec, the `reference` answer,
`family`, `length_bucket`, `depth` and `turns`. Every condition's greedy answer is checked (accuracy)
and the reference's NLL is scored; accuracy is reported per condition, rule family, length bucket,
depth and turns with paired bootstrap CIs over skills. The wrong skill comes from another rule family.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from ..scoring.metrics import bits_per_byte
from ..scoring.tasks import Task
from ..skillworld import generate as sw_generate
from ..skillworld.check import check  # the SkillWorld checker interpreter
from ..synth.skill import Skill, skill_from_text
from .conditions import WITH_CONTEXT, Providers
from .core import Done, Part, Settings, Suite
from .distilled import extras
from .merging import merge_figures, merge_lines
from .report import SHORT, common_lines, comparisons, conditions, context_cuts, fmt, grouped

METRICS = ("accuracy", "nll", "bpb")
PRACTICE = 32  # practice questions per world (practice.jsonl): the distilled conditions' tests
GROUPS = (("by_family", "family"), ("by_length", "length_bucket"), ("by_depth", "depth"), ("by_turns", "turns"))
META = ("family", "length_bucket", "depth", "turns")
CMP_EXTRA = (("parametric", "wrong_skill"), ("parametric", "random_text"), ("parametric", "in_context"),
             ("parametric_in_context", "in_context"), ("adapter_from_answer", "wrong_skill"),
             ("stage1_only", "parametric"), ("t2l_baseline", "parametric"), ("distilled", "in_context"),
             ("distilled", "distilled_wrong"), ("distilled", "wrong_skill"), ("distilled_zero", "in_context"),
             ("distilled_zero", "distilled_wrong"), ("distilled", "distilled_zero"), ("distilled", "parametric"))


def generate(out: Path, n: int, seed: int, split: str = "test") -> Path:
    """A SkillWorld split written to `out` (skills/<name>/SKILL.md, tasks.jsonl, manifest.json)."""

    return sw_generate(split, n, seed, practice_per_skill=PRACTICE).write(out)


def load(folder: Path, max_skills: int | None, max_tasks: int,
         buckets: set[int] | None = None) -> tuple[list[Skill], list[list[Task]]]:
    """Skills (sorted by name) and their tasks, at most `max_tasks` each in file order; `buckets`:
    only skills of these length buckets."""
    rows = [json.loads(line) for line in (folder / "tasks.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if buckets is None or r["length_bucket"] in buckets]
    by_skill: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_skill.setdefault(r["skill"], []).append(r)
    skills: list[Skill] = []
    tasks: list[list[Task]] = []
    for name in sorted(by_skill)[:max_skills]:
        first, i = by_skill[name][0], len(skills)
        path = first.get("skill_path") or f"skills/{name}/SKILL.md"
        skill = skill_from_text((folder / path).read_text(encoding="utf-8"), path, package=str(first["family"]))
        skills.append(skill)
        tasks.append([Task(i, str(r["task_id"]), str(r["family"]), skill.text, r["reference"], messages=r["messages"],
                           meta={**{k: r.get(k) for k in META}, "checker": r["checker"]})
                      for r in by_skill[name][:max_tasks]])
    return skills, tasks


def default_check() -> Callable[[Any, str], bool]:

    return check


class SkillWorldSuite(Suite):
    retrieval_tasks = "every task of the skill (reference answer NLL); the own adapter is the skill's"

    def __init__(self, backend, tok: Tokenizer, chat_template: str, stop_ids: set[int], skills: list[Skill],
                 tasks: list[list[Task]], prov: Providers, st: Settings, check: Callable[[Any, str], bool], log=print):
        self.skills, self.task_lists, self.check = skills, tasks, check
        super().__init__(backend, tok, chat_template, stop_ids, prov, st, [s.text for s in skills],
                         [s.package for s in skills], [s.name for s in skills], log)  # package = rule family

    def tasks(self, i: int) -> list[Task]:
        return self.task_lists[i]

    def row(self, i: int, d: Done) -> dict[str, Any]:
        pred, n = self.tok.decode(d.scored.generated), d.scored.n_tokens
        return {"skill": self.skills[i].name, "skill_index": i, "task": d.task.task_id,
                **{k: d.task.meta[k] for k in META}, "condition": d.cond, "prompt_tokens": len(d.item.prompt),
                "answer_tokens": n, "context_cut": d.cut if d.cond in WITH_CONTEXT else None,
                "nll": d.scored.nll_sum / max(1, n),
                "bpb": bits_per_byte(d.scored.nll_sum, self.tok.decode(d.item.target)),
                "accuracy": float(bool(self.check(d.task.meta["checker"], pred))), "generated": pred}

    def assemble(self, parts: list[Part], seconds: float) -> dict[str, Any]:
        rows, st, conds = [r for p in parts for r in p.rows], self.st, self.conds
        pairs = [(c, "none") for c in conds if c != "none" and "@" not in c] + list(CMP_EXTRA)
        out: dict[str, Any] = {
            "suite": "skillworld",
            "n_skills": len({r["skill_index"] for r in rows}), "n_tasks": len({r["task"] for r in rows}),
            "aggregation": "per condition: mean over skills of the mean over the skill's tasks",
            "bootstrap": {"paired": True, "unit": "skill (tasks clustered by skill)", "resamples": st.bootstrap,
                          "interval": "percentile 95%", "delta": "a - b"},
            "settings": vars(st), "seconds": round(seconds, 1), "conditions": conditions(rows, conds, METRICS),
            "skipped": self.skipped, "context_cut": context_cuts(rows, conds),
            "comparisons": comparisons(rows, pairs, ("accuracy", "nll"), set(conds), st.bootstrap, st.seed),
        }
        out["accuracy"] = {c: r["accuracy"] for c, r in out["conditions"].items()}
        for name, key in GROUPS:
            out[name] = grouped(rows, key, [c for c in conds if "@" not in c], "accuracy", st.bootstrap, st.seed)
        steps = self.prov.distill.plan.recipe.steps if self.prov.distill is not None else None
        records = {k: v for p in parts for k, v in p.distill.items()}
        if st.merge_sizes and self.prov.distill is not None:
            out["merge"] = merge_figures(self, parts, rows)
        return {**out, **extras(rows, conds, records, "accuracy", steps), **self.merge(parts), "per_task": rows}


def evaluate(backend, tok: Tokenizer, chat_template: str, stop_ids: set[int], skills: list[Skill],
             tasks: list[list[Task]], prov: Providers, st: Settings, check: Callable[[Any, str], bool],
             log=print) -> dict[str, Any]:
    t0 = time.perf_counter()
    suite = SkillWorldSuite(backend, tok, chat_template, stop_ids, skills, tasks, prov, st, check, log)
    return suite.assemble([suite.run(list(range(len(skills))))], time.perf_counter() - t0)


def table(res: dict[str, Any]) -> str:
    conds = [c for c in res["conditions"] if "@" not in c]  # curve points: the conditions table and `curve`
    lines = [f"SkillWorld: {res['n_skills']} skills, {res['n_tasks']} tasks, {res['seconds']}s",
             f"{'condition':<22}" + "".join(f"{m:>9}" for m in METRICS)]
    for c, r in res["conditions"].items():
        lines.append(f"{c:<22}" + "".join(fmt(r[m], 9) for m in METRICS))
    for name, _ in GROUPS:
        lines += ["", f"accuracy {name[3:]:<13}" + "".join(f"{SHORT.get(c, c):>8}" for c in conds)]
        for g, e in res[name].items():
            lines.append(f"{g[:16]:<16}{e['n_skills']:>5} " + "".join(fmt(e["accuracy"][c]) for c in conds))
    return "\n".join(lines + [""] + common_lines(res) + merge_lines(res))
