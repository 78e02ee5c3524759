"""The loop both suites share: every condition on every task of one skill (one batched scoring call),
and the retrieval rows (the skill's tasks under other skills' adapters, NLL only)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..distill_recipe import load_recipe
from ..scoring.score import Item, Scored, score_all
from ..scoring.tasks import Prompter, Task, target_ids
from . import leaks
from .conditions import CONDITIONS, DISTILLED, Plan, draw_wrong, skipped_conditions
from .distilled import adapter_figures, curve_conditions
from .diversity import diversity
from .retrieval import candidates, rank_metrics, retrieval_nll


def answer_cap() -> int:
    """Greedy answer tokens in every condition and in the distil teacher: the distil recipe's
    max_answer (training/configs/distill.json). Generation stops there or at a stop token, never at a
    length taken from the reference, which a user does not have."""
    return load_recipe().recipe.max_answer


def prompt_limit(limit: int, max_positions: int, target: list[int], gen: int) -> int:
    """Prompt tokens a condition may use: `limit` (the trained context for in_context, else
    max_positions) less the answer cap and its end-of-turn token, the room the teacher leaves
    (distill/teacher.py), and never so many that the scored reference overruns max_positions."""
    return min(limit - gen - 1, max_positions - len(target))


@dataclass
class Settings:
    """How much of each suite to run and how to compare (`pskills eval` flags)."""

    max_tasks_per_skill: int = 6  # half reconstruction, half template questions
    max_answer_tokens: int = 128
    max_gen_tokens: int = field(default_factory=answer_cap)  # the one cap on generation (answer_cap)
    seed: int = 0
    bootstrap: int = 2000
    trained_context: int | None = None  # None: the model's max_positions
    retrieval_k: int = 20
    merge_sizes: tuple[int, ...] = ()  # --merge-sizes: the merge comparison (evals/merging.py)
    merge_groups: int | None = None  # groups per size; None: skills // size
    merge_rehearse: int = 0  # --merge-rehearse K: also rehearsed (evals/merging.py)
    practice_tests: int | None = None  # --practice-tests N: each skill's own tests capped at N (None: all)
    practice_round_trip: bool = True  # the recipe's round_trip source (off: --practice-no-round-trip)


@dataclass
class Done:
    task: Task
    cond: str
    item: Item
    scored: Scored
    cut: int  # context tokens cut to fit (0 without context)


def run_conditions(backend, prompter: Prompter, plan: Plan, tasks: list[Task], conds: list[str], st,
                   stop_ids: set[int]) -> list[Done]:
    items, keys = [], []
    g = st.max_gen_tokens
    for task in tasks:
        target = target_ids(prompter, task, st.max_answer_tokens, plan.max_positions)
        if not target:
            continue
        for c in conds:
            spec = plan.spec(c, task)
            if spec is None:
                continue
            context, limit, adapter = spec
            ids, cut = prompter.fit(task, context, prompt_limit(limit, plan.max_positions, target, g))
            items.append(Item(ids, target, g, adapter))
            keys.append((task, c, cut))
    scored = score_all(backend, items, stop_ids)  # one per item
    return [Done(t, c, it, sc, cut) for (t, c, cut), it, sc in zip(keys, items, scored, strict=True)]


@dataclass
class Part:
    """What one worker returns for its skills: rows, retrieval NLLs, the adapters diversity needs (numpy)."""
    rows: list[dict[str, Any]]
    ranked: dict[int, list[float]]
    full: dict[int, dict]
    random: dict[int, dict]
    seconds: dict[str, float]
    compile_seconds: dict[str, float]
    distill: dict[str, dict[str, Any]] = field(default_factory=dict)  # "<condition>:<skill>" -> its record
    distilled: dict[int, dict] = field(default_factory=dict)  # skill -> its distilled adapter (numpy)
    use: list[dict[str, Any]] = field(default_factory=list)  # real skills: per skill its use entry (evals/use.py)


def _numpy(row) -> dict:
    return {k: (a.numpy(), b.numpy()) for k, (a, b) in row.items()}


class Suite:
    """The per-skill loop both suites share; a subclass says what a skill's tasks are, what a per-task
    row holds, and which tasks retrieval scores. Every condition generates at most st.max_gen_tokens."""
    retrieval_tasks = ""

    def __init__(self, backend, tok, chat_template: str, stop_ids: set[int], prov, st, texts: list[str],
                 groups: list[str | None], names: list[str], log=print):
        self.backend, self.tok, self.stop_ids, self.prov, self.st, self.log = backend, tok, stop_ids, prov, st, log
        self.names, self.groups = names, groups
        self.skipped = skipped_conditions(prov, len(texts))
        self.conds = [c for c in CONDITIONS + DISTILLED if c not in self.skipped]
        max_pos = backend.cfg.max_positions
        wrong = draw_wrong(groups, st.seed) if len(texts) >= 2 else None
        if prov.distill is not None:
            prov.distill.wrong = wrong
            if prov.parametric is None:
                prov.distill.wrong_base = "distilled_zero"
            self.curve = curve_conditions(prov.distill.plan.recipe.steps, prov.distill.curve)
            prov.distill.scored = self.tasks
            self.conds += [c for c in self.curve if c.partition("@")[0] not in self.skipped]
        self.plan = Plan(prov, tok, texts, wrong, min(st.trained_context or max_pos, max_pos), max_pos, st.seed)
        self.prompter = Prompter(tok, chat_template, max_pos)
        self.cands = candidates(len(texts), st.retrieval_k, st.seed) if wrong and prov.parametric else None

    def tasks(self, i: int) -> list[Task]:
        raise NotImplementedError

    def row(self, i: int, d: Done) -> dict[str, Any]:
        raise NotImplementedError

    def assemble(self, parts: list[Part], seconds: float) -> dict[str, Any]:
        """The report (JSON) from the workers' parts; `seconds` is the wall time of the runs."""
        raise NotImplementedError

    def own_nll(self, done: list[Done]) -> dict[str, float]:
        """task_id -> NLL under the skill's own adapter, for the tasks retrieval ranks."""
        return {d.task.task_id: d.scored.nll_sum / max(1, d.scored.n_tokens) for d in done if d.cond == "parametric"}

    def run(self, indices: list[int]) -> Part:
        t0 = time.perf_counter()
        if self.prov.parametric is not None:
            for i in indices:
                self.plan.full_adapter(i)
        secs = {"compile_all": time.perf_counter() - t0, "conditions": 0.0, "retrieval": 0.0}
        rows, ranked = [], {}
        for n, i in enumerate(indices):
            ts = time.perf_counter()
            tasks = self.tasks(i)
            done = run_conditions(self.backend, self.prompter, self.plan, tasks, self.conds, self.st, self.stop_ids)
            rows += [self.row(i, d) for d in done]
            tr = time.perf_counter()
            own = self.own_nll(done)
            if self.cands and own:
                ranked[i] = retrieval_nll(self.backend, self.prompter, self.plan, tasks, own, self.cands[i], self.st,
                                          self.stop_ids)
            secs["conditions"] += tr - ts
            secs["retrieval"] += time.perf_counter() - tr
            self.log(f"[{n + 1}/{len(indices)}] {self.names[i]}: {len(tasks)} tasks x {len(self.conds)} conditions, "
                     f"{time.perf_counter() - ts:.1f}s")
        has = self.prov.parametric is not None
        return Part(rows, ranked, {i: _numpy(self.plan.full[i]) for i in indices} if has else {},
                    {i: _numpy(self.plan.random[i]) for i in indices if i in self.plan.random}, secs,
                    {p.label: p.seconds for p in (self.prov.parametric, self.prov.stage1, self.prov.t2l) if p},
                    self.prov.distill.records() if self.prov.distill is not None else {},
                    self.prov.distill.adapters(indices, _numpy) if self.prov.distill is not None else {})

    def merge(self, parts: list[Part]) -> dict[str, Any]:
        """The entries every report has: diversity, retrieval, wrong_skill, timing (summed over workers)."""
        t0 = time.perf_counter()
        full = {i: a for p in parts for i, a in p.full.items()}
        rand = {i: a for p in parts for i, a in p.random.items()}
        div = (diversity([full[i] for i in sorted(full)], [rand[i] for i in sorted(rand)]) if len(full) >= 2
               else {"n": len(full), "cos_mean": None, "skipped": "needs 2 skills and a parametric hypernetwork"})
        by_skill = {i: r for p in parts for i, r in p.ranked.items()}
        ranked = [by_skill[i] for i in sorted(by_skill)]
        ret = rank_metrics(ranked) if ranked else {"k": 0, "top1": None, "mrr": None,
                                                   "skipped": "needs 2 skills and a parametric hypernetwork"}
        ret["tasks"] = self.retrieval_tasks
        secs = {k: sum(p.seconds.get(k, 0.0) for p in parts) for k in ("compile_all", "conditions", "retrieval")}
        secs["diversity"] = time.perf_counter() - t0
        comp = {k: sum(p.compile_seconds.get(k, 0.0) for p in parts) for k in parts[0].compile_seconds} if parts else {}
        w = self.plan.wrong
        wrong = ({"rule": "another group (package / rule family), not a list neighbour, drawn by the seed",
                  "share_other_group": sum(self.groups[i] is not None and self.groups[j] != self.groups[i]
                                           for i, j in enumerate(w)) / len(w),
                  "pairs": {self.names[i]: self.names[j] for i, j in enumerate(w)}} if w else {})
        extra = {}
        if self.prov.distill is not None:
            extra["distilled_adapters"] = adapter_figures(self, parts)
        records = {k: v for p in parts for k, v in p.distill.items()}
        return {**extra, "leaks": leaks.total(records), "diversity": div, "retrieval": ret, "wrong_skill": wrong,
                "timing_seconds": {k: round(v, 1) for k, v in secs.items()},
                "compile_seconds": {k: round(v, 1) for k, v in comp.items()}}
