"""The evaluation (DESIGN §6): every condition on every task of every skill, then paired bootstrap CIs.

Aggregation unit is the skill: a condition's metric is the mean over skills of the mean over that
skill's tasks, and the bootstrap resamples skills (tasks are clustered by skill), paired across
conditions on the same skills and tasks.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

from tokenizers import Tokenizer

from ..synth.skill import Skill
from .adapters import Provider, derangement, random_text
from .metrics import bits_per_byte, paired_bootstrap, rouge_l, token_f1
from .score import Item, score_all
from .tasks import Prompter, Task, skill_tasks

CONDITIONS = ("none", "in_context", "parametric", "parametric_in_context", "wrong_skill", "random_text",
              "stage1_only", "t2l_baseline")
# (a, b): delta = a - b. For nll/bpb negative favours a; for f1/rougeL positive does.
COMPARISONS = (("parametric", "none"), ("parametric", "wrong_skill"), ("parametric", "random_text"),
               ("parametric", "in_context"), ("parametric_in_context", "in_context"),
               ("stage1_only", "parametric"), ("t2l_baseline", "parametric"))
METRICS = ("nll", "bpb", "f1", "rougeL")


@dataclass
class Settings:
    max_tasks_per_skill: int = 6  # half reconstruction, half template questions
    max_answer_tokens: int = 128
    max_gen_tokens: int = 64
    seed: int = 0
    bootstrap: int = 2000


@dataclass
class Providers:
    parametric: Provider | None = None
    stage1: Provider | None = None
    t2l: Provider | None = None
    why_missing: dict[str, str] = field(default_factory=dict)  # condition -> reason


def plan(cond: str, task: Task, skills: list[Skill], tasks_src: dict[int, str], perm: list[int] | None,
         prov: Providers, tok: Tokenizer, seed: int) -> tuple[bool, Any]:
    """(in_context, adapter) of one condition for one task."""
    if cond == "none":
        return False, None
    if cond == "in_context":
        return True, None
    if cond in ("parametric", "parametric_in_context"):
        return cond.endswith("in_context"), prov.parametric(task.source)
    if cond == "wrong_skill":
        return False, prov.parametric(tasks_src[perm[task.skill]])
    if cond == "random_text":  # one random text per skill, as long as the whole skill (compiles are the cost)
        text = skills[task.skill].text
        n = len(tok.encode(text, add_special_tokens=False).ids)
        return False, prov.parametric(random_text(tok, n, f"{seed}:{hash_text(text)}"))
    return False, (prov.stage1 if cond == "stage1_only" else prov.t2l)(task.source)


def hash_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def skipped_conditions(prov: Providers, n_skills: int) -> dict[str, str]:
    needs = {"parametric": "parametric", "parametric_in_context": "parametric", "wrong_skill": "parametric",
             "random_text": "parametric", "stage1_only": "stage1", "t2l_baseline": "t2l"}
    why = {c: prov.why_missing.get(src, f"no {src} hypernetwork given")
           for c, src in needs.items() if getattr(prov, src) is None}
    if "wrong_skill" not in why and n_skills < 2:
        why["wrong_skill"] = "needs at least 2 skills"
    return why


def evaluate(backend, tok: Tokenizer, chat_template: str, stop_ids: set[int], skills: list[Skill], prov: Providers,
             st: Settings, log=print) -> dict[str, Any]:
    t0 = time.perf_counter()
    prompter = Prompter(tok, chat_template, backend.cfg.max_positions)
    skipped = skipped_conditions(prov, len(skills))
    conds = [c for c in CONDITIONS if c not in skipped]
    perm = derangement(len(skills), st.seed) if len(skills) >= 2 else None
    n_recon = st.max_tasks_per_skill // 2
    per_task: list[dict[str, Any]] = []
    full_text = {i: s.text for i, s in enumerate(skills)}
    for i, skill in enumerate(skills):
        ts = time.perf_counter()
        tasks = skill_tasks(i, skill, tok, n_recon, st.max_tasks_per_skill - n_recon, st.seed)
        items, keys = [], []
        for task in tasks:
            bare = len(prompter.prompt(task, False, 0))  # a very long heading/question leaves less room
            target = prompter.ids(task.reference)[:min(st.max_answer_tokens, backend.cfg.max_positions - bare)]
            if not target:
                continue
            gen_len = min(len(target), st.max_gen_tokens)
            for c in conds:
                in_ctx, adapter = plan(c, task, skills, full_text, perm, prov, tok, st.seed)
                prompt = prompter.prompt(task, in_ctx, len(target))
                items.append(Item(prompt, target, gen_len, adapter))
                keys.append((task, c, len(prompt)))
        for (task, c, plen), it, sc in zip(keys, items, score_all(backend, items, stop_ids)):
            ref = tok.decode(it.target)
            gen_ref = tok.decode(it.target[:it.gen_len])
            pred = tok.decode(sc.generated)
            per_task.append({"skill": skill.name, "skill_index": i, "task": task.task_id, "kind": task.kind,
                             "condition": c, "prompt_tokens": plen, "answer_tokens": sc.n_tokens,
                             "nll": sc.nll_sum / max(1, sc.n_tokens), "bpb": bits_per_byte(sc.nll_sum, ref),
                             "f1": token_f1(pred, gen_ref), "rougeL": rouge_l(pred, gen_ref), "generated": pred})
        log(f"[{i + 1}/{len(skills)}] {skill.name}: {len(tasks)} tasks x {len(conds)} conditions, "
            f"{time.perf_counter() - ts:.1f}s")
    return report(per_task, skills, conds, skipped, st, time.perf_counter() - t0)


def _per_skill(per_task: list[dict[str, Any]], cond: str, metric: str) -> dict[int, float]:
    acc: dict[int, list[float]] = {}
    for r in per_task:
        if r["condition"] == cond:
            acc.setdefault(r["skill_index"], []).append(r[metric])
    return {k: sum(v) / len(v) for k, v in acc.items()}


def report(per_task: list[dict[str, Any]], skills: list[Skill], conds: list[str], skipped: dict[str, str],
           st: Settings, seconds: float) -> dict[str, Any]:
    scored = sorted({r["skill_index"] for r in per_task})
    out: dict[str, Any] = {
        "n_skills": len(scored), "n_tasks": len({r["task"] for r in per_task}),
        "aggregation": "per condition: mean over skills of the mean over the skill's tasks",
        "bootstrap": {"paired": True, "unit": "skill (tasks clustered by skill)", "resamples": st.bootstrap,
                      "interval": "percentile 95%", "delta": "a - b"},
        "settings": vars(st), "seconds": round(seconds, 1),
        "conditions": {}, "skipped": skipped, "comparisons": [],
    }
    for c in conds:
        row = {m: (lambda d: sum(d.values()) / len(d) if d else None)(_per_skill(per_task, c, m)) for m in METRICS}
        out["conditions"][c] = {**row, "n_tasks": sum(r["condition"] == c for r in per_task)}
    for a, b in COMPARISONS:
        if a not in out["conditions"] or b not in out["conditions"]:
            continue
        for m in METRICS:
            da, db = _per_skill(per_task, a, m), _per_skill(per_task, b, m)
            common = sorted(set(da) & set(db))
            if not common:
                continue
            delta, (lo, hi) = paired_bootstrap([da[k] for k in common], [db[k] for k in common], st.bootstrap, st.seed)
            out["comparisons"].append({"a": a, "b": b, "metric": m, "delta": delta, "ci95": [lo, hi],
                                       "excludes_zero": lo > 0 or hi < 0})
    out["per_task"] = per_task
    return out


def table(res: dict[str, Any]) -> str:
    lines = [f"{res['n_skills']} skills, {res['n_tasks']} tasks, {res['seconds']}s",
             f"{'condition':<22}{'nll':>8}{'bpb':>8}{'f1':>8}{'rougeL':>8}"]
    for c, r in res["conditions"].items():
        lines.append(f"{c:<22}" + "".join(f"{r[m]:>8.3f}" if r[m] is not None else f"{'-':>8}" for m in METRICS))
    for c, why in res["skipped"].items():
        lines.append(f"{c:<22}skipped: {why}")
    lines.append("")
    lines.append(f"{'a - b':<40}{'metric':<8}{'delta':>9}  95% CI (paired bootstrap over skills)")
    for cmp in res["comparisons"]:
        star = " *" if cmp["excludes_zero"] else ""
        lines.append(f"{cmp['a'] + ' - ' + cmp['b']:<40}{cmp['metric']:<8}{cmp['delta']:>9.3f}  "
                     f"[{cmp['ci95'][0]:.3f}, {cmp['ci95'][1]:.3f}]{star}")
    return "\n".join(lines)
