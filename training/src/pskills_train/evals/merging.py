"""The merge comparison at the task level (`--merge-sizes 2,3,4`, docs/distill.md "Merging distilled
adapters"): groups of distilled SkillWorld adapters, each from a different rule family, merged the
studio's ways (docs/api.md `adapters.merge`, main/adapters/merge.ts and svd.ts), and every member
skill's tasks scored greedily and checked under the merged adapter, under the skill's own adapter and
with all the group's skills in context together.

Methods (every weight 1, the studio's default, so each merge is meant to carry Σ ΔWᵢ):
- `cat`: rank concatenation, A = [A₁ … A_k] along r, B = [B₁; …; B_k]: exactly Σ ΔWᵢ, rank Σrᵢ;
- `linear`: the factor-wise baseline, A = Σ Aᵢ, B = Σ Bᵢ (equal ranks; ΔW has the cross terms AᵢBⱼ);
- `svd_sum` / `svd_single`: the best approximation of Σ ΔWᵢ at rank Σrᵢ / at one adapter's rank (the
  largest member's, where they differ).
- `cat_mean`: `cat` with weights 1/k (the mean Σ ΔWᵢ / k, the studio's weights option): tells
  interference apart from the sum's size.
- `rehearsed` (`--merge-rehearse K`): the studio's merge with rehearsal: `cat` cut by svd to one
  adapter's rank (the train-step graph's: the engine cuts a larger init so), then K distillation steps
  over every member's teacher rows together, each answered with its own skill in context.
  At the sum rank nothing is cut and the studio returns `cat` itself (svd.ts), so `svd_sum` is `cat`.
"""

from __future__ import annotations

import random
from typing import Any

import torch

from ..model.lora import Row
from ..scoring.score import Item, score_all
from ..scoring.tasks import target_ids
from .core import prompt_limit
from .report import delta, mean, per_skill

METHODS = ("cat", "cat_mean", "linear", "svd_sum", "svd_single")
REHEARSED = "rehearsed"
PAIRS = (("cat", "linear"), (REHEARSED, "own"), (REHEARSED, "cat"),
         ("cat_mean", "cat"), ("cat_mean", "own"), ("cat", "own"), ("cat", "in_context_all"),
         ("svd_single", "cat"),
         ("linear", "own"), ("svd_single", "own"), ("own", "in_context_all"), ("linear", "in_context_all"))


def cat(rows: list[Row]) -> Row:
    return {k: (torch.cat([r[k][0] for r in rows], 1), torch.cat([r[k][1] for r in rows], 0)) for k in rows[0]}


def linear(rows: list[Row]) -> Row:
    """The studio's linear merge needs equal ranks; instant-init distilled adapters differ in rank where
    the skill was compiled by chunks (docs/bundle-format.md), so each is zero-padded to the largest rank
    first: padding leaves each ΔWᵢ as it was, and the cross terms are what they would be at that rank."""
    r = max(a.shape[1] for row in rows for a, _ in row.values())
    pad = [{k: (torch.nn.functional.pad(a, (0, r - a.shape[1])), torch.nn.functional.pad(b, (0, 0, 0, r - b.shape[0])))
            for k, (a, b) in row.items()} for row in rows]
    return {k: (torch.stack([p[k][0] for p in pad]).sum(0), torch.stack([p[k][1] for p in pad]).sum(0))
            for k in rows[0]}


def truncate(a: torch.Tensor, b: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Best rank-k factors of a @ b (a [d_in, R], b [R, d_out]) by QR of each factor and an SVD of the
    R × R core, as main/adapters/factors.ts does: no d_in × d_out matrix is formed."""
    if k >= a.shape[1]:
        return a, b
    qa, ra = torch.linalg.qr(a.double())
    qb, rb = torch.linalg.qr(b.double().T)
    u, s, vh = torch.linalg.svd(ra @ rb.T, full_matrices=False)
    k = min(k, s.shape[0])  # ΔW has rank at most min(d_in, d_out)
    root = s[:k].sqrt()
    return ((qa @ u[:, :k]) * root).to(a.dtype), (root[:, None] * (vh[:k] @ qb.T)).to(b.dtype)


def svd(rows: list[Row], k: int) -> Row:
    return {key: truncate(a, b, k) for key, (a, b) in cat(rows).items()}


def merged(rows: list[Row]) -> tuple[dict[str, Row], dict[str, int]]:
    single = max(a.shape[1] for a, _ in rows[0].values())
    total = sum(max(a.shape[1] for a, _ in r.values()) for r in rows)
    c = cat(rows)
    w = 1 / len(rows)
    mean_ = {k: (a * w, b) for k, (a, b) in c.items()}  # the weight folded into A, as merge.ts's scale does
    return {"cat": c, "cat_mean": mean_, "linear": linear(rows), "svd_sum": c, "svd_single": svd(rows, single)}, \
        {"sum": total, "single": single}


def relative_error(m: Row, exact: Row) -> float:
    """‖ΔW_m − Σ ΔWᵢ‖_F / ‖Σ ΔWᵢ‖_F over all targets stacked (dense: the eval's bases are small)."""
    num = den = 0.0
    for key, (a, b) in exact.items():
        w = a.double() @ b.double()
        num += float(((m[key][0].double() @ m[key][1].double()) - w).pow(2).sum())
        den += float(w.pow(2).sum())
    return (num / den) ** 0.5 if den else 0.0


def draw_groups(groups: list[str | None], size: int, n_groups: int, seed: int) -> list[list[int]]:
    """`n_groups` distinct groups of `size` skills from `size` different rule families, drawn by the seed
    (fewer when the skills allow fewer); a size of 1 is each skill alone."""
    n = len(groups)
    if size == 1:
        return [[i] for i in range(n)][:n_groups]
    fams: dict[str, list[int]] = {}
    for i, fam in enumerate(groups):
        fams.setdefault(str(fam), []).append(i)
    names = sorted(fams)
    if len(names) < size:
        return []
    out: list[list[int]] = []
    seen: set[tuple[int, ...]] = set()
    for attempt in range(50 * n_groups):
        rng = random.Random(f"{seed}:merge:{size}:{attempt}")
        pick = sorted(rng.choice(fams[f]) for f in rng.sample(names, size))
        if tuple(pick) not in seen:
            seen.add(tuple(pick))
            out.append(pick)
            if len(out) == n_groups:
                break
    return out


def merge_figures(suite, parts: list, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's `merge` entry: per size, accuracy of each method, of the own adapters and of all the
    group's skills in context; paired CIs between them over groups."""
    slot = suite.prov.distill
    st, prompter, plan = suite.st, suite.prompter, suite.plan
    base = slot.merge_base
    ads: dict[int, Row] = {}
    for p in parts if base == slot.wrong_base else ():  # the workers hand back their wrong_base adapters
        for i, a in p.distilled.items():
            ads[i] = {k: (torch.from_numpy(x), torch.from_numpy(y)) for k, (x, y) in a.items()}
    scored_own = {(r["skill_index"], r["task"]): r["accuracy"] for r in rows if r["condition"] == base}
    out: dict[str, Any] = {
        "adapters": base, "weights": "1 (cat_mean: 1/k)",
        "unit": "group (a member's tasks under the group's merge)",
        "rule": "each group: skills of different rule families, drawn by the seed",
        "rehearse_steps": st.merge_rehearse,
        "methods": {"cat": "rank concatenation, exact sum of ΔW, rank Σr",
                    "cat_mean": "rank concatenation with weights 1/k: the mean of ΔW",
                    "linear": "factor-wise: A = ΣAᵢ, B = ΣBᵢ (studio weights 1; ranks zero-padded to the "
                              "largest), cross terms",
                    "svd_sum": "sum truncated to rank Σr: nothing cut, the studio returns cat",
                    "svd_single": "sum truncated to one adapter's rank (the largest member's)",
                    REHEARSED: "svd_single, then rehearse_steps distillation steps over every member's practice "
                               "rows (the studio's merge with rehearsal)"}}
    methods = (*METHODS, REHEARSED) if st.merge_rehearse else METHODS
    for size in st.merge_sizes:
        want = st.merge_groups or max(1, len(suite.names) // size)
        groups = draw_groups(suite.groups, size, want, st.seed)
        if not groups:
            out[str(size)] = {"n_groups": 0, "skipped": f"fewer than {size} rule families among the skills"}
            continue
        task_rows: list[dict[str, Any]] = []
        errors: dict[str, list[float]] = {m: [] for m in methods}
        ranks: dict[str, int] = {}
        for gi, members in enumerate(groups):
            for i in members:
                if i not in ads:
                    ads[i] = slot.run(base, i).result.adapter
            ms, ranks = merged([ads[i] for i in members])
            exact = ms["cat"]
            if st.merge_rehearse:
                ms[REHEARSED] = slot.rehearse(members, ms["svd_single"], st.merge_rehearse)
            for m in methods:
                errors[m].append(relative_error(ms[m], exact))
            context = "\n\n".join(suite.skills[i].text for i in members)
            items, keys = [], []
            for i in members:
                for t in suite.tasks(i):
                    target = target_ids(prompter, t, st.max_answer_tokens, plan.max_positions)
                    if not target:
                        continue
                    g = st.max_gen_tokens
                    bare = prompter.fit(t, None, 1 << 30)[0]
                    for m in methods:
                        if m == "svd_sum":  # it is cat: scored once, reported under both names
                            continue
                        items.append(Item(bare, target, g, ms[m]))
                        keys.append((i, t, m, 0))
                    if (i, t.task_id) not in scored_own:
                        items.append(Item(bare, target, g, ads[i]))
                        keys.append((i, t, "own", 0))
                    ids, cut = prompter.fit(t, context, prompt_limit(plan.trained, plan.max_positions, target, g))
                    items.append(Item(ids, target, g, None))
                    keys.append((i, t, "in_context_all", cut))
            for (i, t, m, cut), sc in zip(keys, score_all(suite.backend, items, suite.stop_ids), strict=True):
                pred = suite.tok.decode(sc.generated)
                ok = float(bool(suite.check(t.meta["checker"], pred)))
                for name in (("cat", "svd_sum") if m == "cat" else (m,)):
                    task_rows.append({"skill_index": gi, "member": suite.names[i], "task": t.task_id,
                                      "condition": name, "accuracy": ok, "context_cut": cut, "generated": pred})
                if m == "cat" and (i, t.task_id) in scored_own:
                    task_rows.append({"skill_index": gi, "member": suite.names[i], "task": t.task_id,
                                      "condition": "own", "accuracy": scored_own[(i, t.task_id)], "context_cut": 0})
        entry: dict[str, Any] = {"n_groups": len(groups), "groups": [[suite.names[i] for i in g] for g in groups],
                                 "rank": ranks}
        for m in (*methods, "own", "in_context_all"):
            entry[m] = {"accuracy": mean(per_skill(task_rows, m, "accuracy")),
                        "n_tasks": sum(r["condition"] == m for r in task_rows)}
            if m in errors:
                entry[m]["relative_error"] = sum(errors[m]) / len(errors[m])
        cuts = [r["context_cut"] for r in task_rows if r["condition"] == "in_context_all"]
        entry["in_context_all"]["mean_cut_tokens"] = sum(cuts) / len(cuts) if cuts else 0.0
        entry["comparisons"] = [d for a, b in PAIRS
                                if (d := delta(task_rows, a, b, "accuracy", st.bootstrap, st.seed))]
        entry["per_task"] = task_rows
        out[str(size)] = entry
    return out


def merge_lines(res: dict[str, Any]) -> list[str]:
    m = res.get("merge")
    if not m:
        return []
    cols = (*METHODS, *((REHEARSED,) if m.get("rehearse_steps") else ()), "own", "in_context_all")
    lines = ["", f"merge of {m['adapters']} adapters: accuracy (mean over groups)",
             f"{'size':<6}{'groups':>7}" + "".join(f"{c[:10]:>11}" for c in cols)]
    for k, e in m.items():
        if not isinstance(e, dict) or "n_groups" not in e:
            continue
        if e.get("skipped"):
            lines.append(f"{k:<6}{0:>7}  skipped: {e['skipped']}")
            continue
        lines.append(f"{k:<6}{e['n_groups']:>7}" + "".join(
            f"{e[c]['accuracy']:>11.3f}" if e[c]["accuracy"] is not None else f"{'-':>11}" for c in cols))
        for d in e["comparisons"]:
            if d["a"] in ("cat", REHEARSED) and d["b"] in ("linear", "own"):
                lines.append(f"      {d['a']} - {d['b']}: {d['delta']:+.3f} [{d['ci95'][0]:.3f}, {d['ci95'][1]:.3f}]"
                             f" over {d['n_skills']} groups")
    return lines
