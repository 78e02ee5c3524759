"""Retrieval: does a skill's own adapter explain its tasks best? Each skill against K candidates (itself
and K - 1 others drawn by the seed), ranked by the mean answer NLL of its tasks under each one.
The skills and SkillWorld suites rank the instant adapters (core.py), distilled.py the distilled ones."""

from __future__ import annotations

import random
from typing import Any

from ..scoring.score import Item, score_all
from ..scoring.tasks import Prompter, Task, target_ids
from .conditions import Plan


def candidates(n: int, k: int, seed: int) -> list[list[int]]:
    """For each skill, itself first and then k - 1 others drawn by the seed (k capped at n)."""
    k = min(k, n)
    return [[i] + random.Random(f"{seed}:retrieval:{i}").sample([j for j in range(n) if j != i], k - 1)
            for i in range(n)]


def retrieval_nll(backend, prompter: Prompter, plan: Plan, tasks: list[Task], own: dict[str, float],
                  cands: list[int], st, stop_ids: set[int], adapter_of=None) -> list[float]:
    """Mean answer NLL (nats/token) over `tasks` under each candidate's full-text adapter; the skill's
    own slot (cands[0]) takes `own` (task_id -> NLL of the own row already scored). `adapter_of`: candidate
    -> adapter (default the plan's full-text instant adapter)."""
    adapter_of = adapter_of or plan.full_adapter
    items, keys = [], []
    for task in tasks:
        if task.task_id not in own:
            continue
        target = target_ids(prompter, task, st.max_answer_tokens, plan.max_positions)
        prompt = prompter.fit(task, None, 1 << 30)[0]
        for slot, j in enumerate(cands[1:], 1):
            items.append(Item(prompt, target, 0, adapter_of(j)))
            keys.append(slot)
    sums = [[own[t.task_id] for t in tasks if t.task_id in own]] + [[] for _ in cands[1:]]
    for slot, sc in zip(keys, score_all(backend, items, stop_ids), strict=True):  # one score per item, per key
        sums[slot].append(sc.nll_sum / max(1, sc.n_tokens))
    return [sum(v) / len(v) for v in sums]


def rank_metrics(nlls: list[list[float]]) -> dict[str, Any]:
    """nlls[s] = mean NLL of skill s's tasks per candidate, own first: rank = 1 + others strictly lower."""
    ranks = [1 + sum(x < row[0] for x in row[1:]) for row in nlls]
    k = max((len(r) for r in nlls), default=0)
    n = len(ranks)
    return {"k": k, "n_skills": n, "chance_top1": 1 / k if k else None,
            "top1": sum(r == 1 for r in ranks) / n if n else None,
            "mrr": sum(1 / r for r in ranks) / n if n else None, "ranks": ranks}
