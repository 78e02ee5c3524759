"""The real-skill suite (DESIGN §6, `--skills DIR`): every condition on every task of every skill, answer
NLL / bpb / greedy F1 / ROUGE-L, paired bootstrap CIs over skills, adapter diversity and retrieval."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tokenizers import Tokenizer

from ..synth.skill import Skill
from .conditions import CONDITIONS, WITH_CONTEXT, Plan, Providers, draw_wrong, skill_group, skipped_conditions
from .core import candidates, rank_metrics, retrieval_nll, run_conditions
from .diversity import diversity
from .metrics import bits_per_byte, rouge_l, token_f1
from .report import SHORT, common_lines, comparisons, conditions, context_cuts, fmt, grouped
from .tasks import Prompter, skill_tasks

__all__ = ["CONDITIONS", "COMPARISONS", "Providers", "Settings", "evaluate", "table", "finish"]

# (a, b): delta = a - b. For nll/bpb negative favours a; for f1/rougeL/accuracy positive does.
COMPARISONS = (("parametric", "none"), ("parametric", "wrong_skill"), ("parametric", "random_text"),
               ("parametric", "in_context"), ("parametric", "in_context_full"), ("in_context", "none"),
               ("in_context_full", "none"), ("parametric_in_context", "in_context"), ("wrong_skill", "none"),
               ("stage1_only", "parametric"), ("t2l_baseline", "parametric"), ("answer_in_context", "none"),
               ("adapter_from_answer", "wrong_skill"), ("adapter_from_answer", "none"))
METRICS = ("nll", "bpb", "f1", "rougeL")


@dataclass
class Settings:
    max_tasks_per_skill: int = 6  # half reconstruction, half template questions
    max_answer_tokens: int = 128
    max_gen_tokens: int = 64
    seed: int = 0
    bootstrap: int = 2000
    trained_context: int | None = None  # None: the model's max_positions
    retrieval_k: int = 20


def prepare(backend, tok: Tokenizer, prov: Providers, texts: list[str], groups: list[str | None], st: Settings,
            log) -> tuple[Plan, dict[str, str], list[str], dict[str, float]]:
    """The plan (wrong-skill draw, every skill's full-text adapter compiled up front) and the conditions run."""
    skipped = skipped_conditions(prov, len(texts))
    conds = [c for c in CONDITIONS if c not in skipped]
    wrong = draw_wrong(groups, st.seed) if len(texts) >= 2 else None
    max_pos = backend.cfg.max_positions
    plan = Plan(prov, tok, texts, wrong, min(st.trained_context or max_pos, max_pos), max_pos, st.seed)
    t0 = time.perf_counter()
    if prov.parametric is not None:
        for i in range(len(texts)):
            plan.full_adapter(i)
        log(f"compiled {len(texts)} skills in {time.perf_counter() - t0:.1f}s")
    return plan, skipped, conds, {"compile_all": time.perf_counter() - t0}


def finish(plan: Plan, prov: Providers, n: int, ranked: list[list[float]], timing: dict[str, float]) -> dict[str, Any]:
    """diversity and retrieval entries of the report."""
    t0 = time.perf_counter()
    div = (diversity([plan.full[i] for i in range(n)], [plan.random[i] for i in sorted(plan.random)])
           if prov.parametric is not None else {"n": 0, "skipped": "no parametric hypernetwork"})
    timing["diversity"] = time.perf_counter() - t0
    ret = rank_metrics(ranked) if ranked else {"k": 0, "top1": None, "mrr": None, "skipped": "needs 2 skills and a hypernet"}
    return {"diversity": div, "retrieval": ret}


def evaluate(backend, tok: Tokenizer, chat_template: str, stop_ids: set[int], skills: list[Skill], prov: Providers,
             st: Settings, log=print) -> dict[str, Any]:
    t0 = time.perf_counter()
    prompter = Prompter(tok, chat_template, backend.cfg.max_positions)
    groups = [skill_group(s.package, s.source_path) for s in skills]
    plan, skipped, conds, timing = prepare(backend, tok, prov, [s.text for s in skills], groups, st, log)
    cands = candidates(len(skills), st.retrieval_k, st.seed) if plan.wrong and prov.parametric else None
    n_recon = st.max_tasks_per_skill // 2
    per_task: list[dict[str, Any]] = []
    ranked: list[list[float]] = []
    timing["retrieval"] = 0.0
    for i, skill in enumerate(skills):
        ts = time.perf_counter()
        tasks = skill_tasks(i, skill, tok, n_recon, st.max_tasks_per_skill - n_recon, st.seed)
        done = run_conditions(backend, prompter, plan, tasks, conds, st, stop_ids,
                              lambda t: min(len(t), st.max_gen_tokens))
        for d in done:
            ref, gen_ref = tok.decode(d.item.target), tok.decode(d.item.target[:d.item.gen_len])
            pred = tok.decode(d.scored.generated)
            n = d.scored.n_tokens
            per_task.append({"skill": skill.name, "skill_index": i, "task": d.task.task_id, "kind": d.task.kind,
                             "task_type": d.task.kind.split(":")[0],
                             "condition": d.cond, "prompt_tokens": len(d.item.prompt), "answer_tokens": n,
                             "context_cut": d.cut if d.cond in WITH_CONTEXT else None,
                             "nll": d.scored.nll_sum / max(1, n), "bpb": bits_per_byte(d.scored.nll_sum, ref),
                             "f1": token_f1(pred, gen_ref), "rougeL": rouge_l(pred, gen_ref), "generated": pred})
        tr = time.perf_counter()
        # retrieval on the held-out sections: the own adapter never saw the answer, the others are other skills
        own = {d.task.task_id: d.scored.nll_sum / max(1, d.scored.n_tokens) for d in done
               if d.cond == "parametric" and d.task.kind == "reconstruction"}
        if cands and own:
            ranked.append(retrieval_nll(backend, prompter, plan, tasks, own, cands[i], st, stop_ids))
        timing["retrieval"] += time.perf_counter() - tr
        log(f"[{i + 1}/{len(skills)}] {skill.name}: {len(tasks)} tasks x {len(conds)} conditions, "
            f"{time.perf_counter() - ts:.1f}s")
    out = report(per_task, conds, skipped, st, time.perf_counter() - t0)
    out.update(finish(plan, prov, len(skills), ranked, timing))
    out["retrieval"]["tasks"] = "reconstruction (held-out sections; the own adapter is compiled without the section)"
    out["wrong_skill"] = wrong_entry(plan, [s.name for s in skills], groups)
    out["timing_seconds"] = {k: round(v, 1) for k, v in timing.items()}
    return out


def wrong_entry(plan: Plan, names: list[str], groups: list[str | None]) -> dict[str, Any]:
    if not plan.wrong:
        return {}
    other = sum(groups[i] is not None and groups[j] != groups[i] for i, j in enumerate(plan.wrong))
    return {"rule": "another group (package / rule family), not a list neighbour, drawn by the seed",
            "share_other_group": other / len(names), "pairs": {names[i]: names[j] for i, j in enumerate(plan.wrong)}}


def report(per_task: list[dict[str, Any]], conds: list[str], skipped: dict[str, str], st: Settings,
           seconds: float) -> dict[str, Any]:
    return {
        "suite": "skills",
        "n_skills": len({r["skill_index"] for r in per_task}), "n_tasks": len({r["task"] for r in per_task}),
        "aggregation": "per condition: mean over skills of the mean over the skill's tasks",
        "bootstrap": {"paired": True, "unit": "skill (tasks clustered by skill)", "resamples": st.bootstrap,
                      "interval": "percentile 95%", "delta": "a - b"},
        "settings": vars(st), "seconds": round(seconds, 1),
        "conditions": conditions(per_task, conds, METRICS), "skipped": skipped,
        "context_cut": context_cuts(per_task, conds),
        "comparisons": comparisons(per_task, COMPARISONS, METRICS, set(conds), st.bootstrap, st.seed),
        # reconstruction (held-out sections, raw text) vs template (chat questions): NLL and delta vs none
        "by_task_type": grouped(per_task, "task_type", conds, "nll", st.bootstrap, st.seed),
        "per_task": per_task,
    }


def table(res: dict[str, Any]) -> str:
    if res.get("suite") == "skillworld":
        from .sw_suite import table as sw_table
        return sw_table(res)
    lines = [f"{res['n_skills']} skills, {res['n_tasks']} tasks, {res['seconds']}s",
             f"{'condition':<22}" + "".join(f"{m:>8}" for m in METRICS)]
    for c, r in res["conditions"].items():
        lines.append(f"{c:<22}" + "".join(fmt(r[m]) for m in METRICS))
    conds = list(res["conditions"])
    lines += ["", f"{'nll by task type':<22}" + "".join(f"{SHORT.get(c, c):>8}" for c in conds)]
    for g, e in (res.get("by_task_type") or {}).items():
        lines.append(f"{g[:16]:<16}{e['n_tasks']:>5} " + "".join(fmt(e["nll"][c]) for c in conds))
    return "\n".join(lines + common_lines(res))
