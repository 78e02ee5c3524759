"""Aggregation shared by both suites: per-skill means, paired bootstrap comparisons, grouped tables.

A condition's metric is the mean over skills of the mean over that skill's tasks; the bootstrap
resamples skills (tasks are clustered by skill), paired across conditions on the same skills and tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..scoring.metrics import paired_bootstrap

Row = dict[str, Any]


def per_skill(rows: list[Row], cond: str, metric: str, where: Callable[[Row], bool] | None = None) -> dict[int, float]:
    acc: dict[int, list[float]] = {}
    for r in rows:
        if r["condition"] == cond and r.get(metric) is not None and (where is None or where(r)):
            acc.setdefault(r["skill_index"], []).append(float(r[metric]))
    return {k: sum(v) / len(v) for k, v in acc.items()}


def mean(d: dict[int, float]) -> float | None:
    return sum(d.values()) / len(d) if d else None


def conditions(rows: list[Row], conds: Iterable[str], metrics: Iterable[str]) -> dict[str, dict[str, Any]]:
    return {c: {**{m: mean(per_skill(rows, c, m)) for m in metrics},
                "n_tasks": sum(r["condition"] == c for r in rows)} for c in conds}


def delta(rows: list[Row], a: str, b: str, metric: str, resamples: int, seed: int,
          where: Callable[[Row], bool] | None = None) -> dict[str, Any] | None:
    da, db = per_skill(rows, a, metric, where), per_skill(rows, b, metric, where)
    common = sorted(set(da) & set(db))
    if not common:
        return None
    d, (lo, hi) = paired_bootstrap([da[k] for k in common], [db[k] for k in common], resamples, seed)
    return {"a": a, "b": b, "metric": metric, "delta": d, "ci95": [lo, hi], "excludes_zero": lo > 0 or hi < 0,
            "n_skills": len(common)}


def comparisons(rows: list[Row], pairs: Iterable[tuple[str, str]], metrics: Iterable[str], present: set[str],
                resamples: int, seed: int) -> list[dict[str, Any]]:
    out = []
    for a, b in pairs:
        if a in present and b in present:
            out += [x for m in metrics if (x := delta(rows, a, b, m, resamples, seed))]
    return out


def grouped(rows: list[Row], key: str, conds: list[str], metric: str, resamples: int, seed: int,
            base: str = "none") -> dict[str, dict[str, Any]]:
    """Per value of rows[key]: the metric per condition and each condition minus `base` with its CI."""
    out: dict[str, dict[str, Any]] = {}
    for g in sorted({str(r[key]) for r in rows if r.get(key) is not None}):
        sel = [r for r in rows if str(r.get(key)) == g]
        entry: dict[str, Any] = {"n_skills": len({r["skill_index"] for r in sel}),
                                 "n_tasks": len({r["task"] for r in sel}),
                                 metric: {c: mean(per_skill(sel, c, metric)) for c in conds}, f"vs_{base}": {}}
        for c in conds:
            if c != base and (d := delta(sel, c, base, metric, resamples, seed)):
                entry[f"vs_{base}"][c] = {"delta": d["delta"], "ci95": d["ci95"]}
        out[g] = entry
    return out


def context_cuts(rows: list[Row], conds: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per condition with a context: mean tokens of it cut per task, and the share of tasks cut at all."""
    out = {}
    for c in conds:
        cuts = [r["context_cut"] for r in rows if r["condition"] == c and r.get("context_cut") is not None]
        if cuts:
            out[c] = {"mean_cut_tokens": sum(cuts) / len(cuts), "max_cut_tokens": max(cuts),
                      "share_tasks_cut": sum(x > 0 for x in cuts) / len(cuts), "n_tasks": len(cuts)}
    return out


SHORT = {"none": "none", "in_context": "ic", "in_context_full": "ic_full", "parametric": "param",
         "parametric_in_context": "p+ic", "wrong_skill": "wrong", "random_text": "random", "stage1_only": "stage1",
         "t2l_baseline": "t2l", "answer_in_context": "ans_ic", "adapter_from_answer": "ans_ad"}


def fmt(x: Any, w: int = 8, p: int = 3) -> str:
    return f"{x:>{w}.{p}f}" if isinstance(x, (int, float)) else f"{'-':>{w}}"


def common_lines(res: dict[str, Any]) -> list[str]:
    """Diversity, retrieval, cuts, skipped conditions and the comparisons, as printed by both suites."""
    lines = []
    dist = res.get("distilled_adapters") or {}
    for label, part in (("", res), (f" of {dist.get('condition')} adapters", dist)):
        d = part.get("diversity") or {}
        if d.get("cos_mean") is not None:
            extra = (f", random-text adapter vs mean {d['others_cos_to_mean']:.3f}" if "others_cos_to_mean" in d
                     else "")
            lines.append(f"diversity{label} ({d['n']} adapters): pairwise cos mean {d['cos_mean']:.3f}, p95 "
                         f"{d['cos_p95']:.3f}; specific share {d['specific_share']:.3f}; cos to mean "
                         f"{d['cos_to_mean']:.3f}{extra}")
        r = part.get("retrieval") or {}
        if r.get("top1") is not None:
            lines.append(f"retrieval{label} ({r['n_skills']} skills, K={r['k']}, chance {r['chance_top1']:.3f}): "
                         f"top1 {r['top1']:.3f}, MRR {r['mrr']:.3f}")
    for c, cut in (res.get("context_cut") or {}).items():
        lines.append(f"{c}: {cut['mean_cut_tokens']:.0f} context tokens cut per task on average "
                     f"({cut['share_tasks_cut']:.0%} of tasks cut)")
    for c, why in res["skipped"].items():
        lines.append(f"{c:<22}skipped: {why}")
    lines.append("")
    lines.append(f"{'a - b':<44}{'metric':<9}{'delta':>9}  95% CI (paired bootstrap over skills)")
    for cmp in res["comparisons"]:
        star = " *" if cmp["excludes_zero"] else ""
        lines.append(f"{cmp['a'] + ' - ' + cmp['b']:<44}{cmp['metric']:<9}{cmp['delta']:>9.3f}  "
                     f"[{cmp['ci95'][0]:.3f}, {cmp['ci95'][1]:.3f}]{star}")
    return lines
