"""The loop both suites share: every condition on every task of one skill (one batched scoring call),
and the retrieval rows (the skill's tasks under other skills' adapters, NLL only)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

from .conditions import Plan
from .score import Item, Scored, score_all
from .tasks import Prompter, Task


@dataclass
class Done:
    task: Task
    cond: str
    item: Item
    scored: Scored
    cut: int  # context tokens cut to fit (0 without context)


def target_ids(prompter: Prompter, task: Task, max_answer: int, max_positions: int) -> list[int]:
    bare = len(prompter.fit(task, None, 1 << 30)[0])  # a very long heading/question leaves less room
    return prompter.ids(task.reference)[:min(max_answer, max_positions - bare)]


def run_conditions(backend, prompter: Prompter, plan: Plan, tasks: list[Task], conds: list[str], st,
                   stop_ids: set[int], gen_len: Callable[[list[int]], int]) -> list[Done]:
    items, keys = [], []
    for task in tasks:
        target = target_ids(prompter, task, st.max_answer_tokens, plan.max_positions)
        if not target:
            continue
        g = gen_len(target)
        for c in conds:
            context, limit, adapter = plan.spec(c, task)
            ids, cut = prompter.fit(task, context, limit - max(len(target), g))
            items.append(Item(ids, target, g, adapter))
            keys.append((task, c, cut))
    return [Done(t, c, it, sc, cut) for (t, c, cut), it, sc in zip(keys, items, score_all(backend, items, stop_ids))]


def candidates(n: int, k: int, seed: int) -> list[list[int]]:
    """For each skill, itself first and then k - 1 others drawn by the seed (k capped at n)."""
    k = min(k, n)
    return [[i] + random.Random(f"{seed}:retrieval:{i}").sample([j for j in range(n) if j != i], k - 1)
            for i in range(n)]


def retrieval_nll(backend, prompter: Prompter, plan: Plan, tasks: list[Task], own: dict[str, float],
                  cands: list[int], st, stop_ids: set[int]) -> list[float]:
    """Mean answer NLL (nats/token) over `tasks` under each candidate's full-text adapter; the skill's
    own slot (cands[0]) takes `own` (task_id -> NLL of the parametric row already scored)."""
    items, keys = [], []
    for task in tasks:
        if task.task_id not in own:
            continue
        target = target_ids(prompter, task, st.max_answer_tokens, plan.max_positions)
        prompt = prompter.fit(task, None, 1 << 30)[0]
        for slot, j in enumerate(cands[1:], 1):
            items.append(Item(prompt, target, 0, plan.full_adapter(j)))
            keys.append(slot)
    sums = [[own[t.task_id] for t in tasks if t.task_id in own]] + [[] for _ in cands[1:]]
    for slot, it, sc in zip(keys, items, score_all(backend, items, stop_ids)):
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
