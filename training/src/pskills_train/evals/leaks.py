"""Leaks between practice and the scored tasks, counted at run time (docs/results.md "Leaks").

For each distillation of a skill, on the practice questions it actually trained on:
- `practice_equals_task`: a question whose chat equals one of the skill's scored prompts;
- `forced_scored_answer`: a question whose forced answer (Examples reply, template or cloze answer,
  trajectory) equals a scored reference, or holds it / is held by it when the shorter side has at least
  `MIN_CONTAINED` characters (a cloze body forces the section a template task's reference is).
Text compares with whitespace collapsed and case folded. Only the tasks the distilled conditions score
count (those whose adapter is the whole skill). The eval refuses to report when either count is non-zero.
"""

from __future__ import annotations

from typing import Any

from ..distill.practice import Question
from ..scoring.tasks import Task

KEYS = ("practice_equals_task", "forced_scored_answer")
MIN_CONTAINED = 24  # characters: a shorter reference ("yes") inside a long cloze body is no leak
SHOWN = 5


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def _prompt(messages: list[dict[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((m.get("role", ""), _norm(m.get("content", ""))) for m in messages)


def task_prompt(task: Task) -> list[dict[str, str]] | None:
    if task.messages is not None:
        return list(task.messages)
    return [{"role": "user", "content": task.question}] if task.question else None


def forced_match(answer: str, reference: str) -> bool:
    a, r = _norm(answer), _norm(reference)
    if not a or not r:
        return False
    if a == r:
        return True
    short, long = (a, r) if len(a) <= len(r) else (r, a)
    return len(short) >= MIN_CONTAINED and short in long


def count(questions: list[Question], scored: list[Task]) -> dict[str, Any]:
    """The leak counts of one skill's practice against its scored tasks, with the first few leaks shown."""
    prompts = {_prompt(p) for t in scored if (p := task_prompt(t))}
    equal = [q for q in questions if _prompt(q.messages) in prompts]
    forced = [(q, t) for q in questions if q.answer is not None
              for t in scored if forced_match(q.answer, t.reference)]
    forced_qs = list({id(q): q for q, _ in forced}.values())
    return {"practice_equals_task": len(equal), "forced_scored_answer": len(forced_qs),
            "shown": [{"leak": "practice_equals_task", "source": q.source, "prompt": q.messages[-1]["content"][:160]}
                      for q in equal[:SHOWN]]
            + [{"leak": "forced_scored_answer", "source": q.source, "task": t.task_id, "answer": q.answer[:160]}
               for q, t in forced[:SHOWN] if q.answer is not None]}


def total(records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report's `leaks`: summed over every distillation run (records keyed "<condition>:<skill>")."""
    out: dict[str, Any] = {k: 0 for k in KEYS}
    out["runs_checked"] = 0
    shown: list[dict[str, Any]] = []
    for key, rec in sorted(records.items()):
        lk = rec.get("leaks")
        if lk is None:
            continue
        out["runs_checked"] += 1
        for k in KEYS:
            out[k] += lk[k]
        shown += [{"run": key, **s} for s in lk.get("shown", [])]
    out["shown"] = shown[:2 * SHOWN]
    return out


def refusal(leaks: dict[str, Any]) -> str | None:
    """The message the eval exits with when practice leaked into the scored tasks, else None."""
    if not any(leaks.get(k) for k in KEYS):
        return None
    lines = [f"refusing to report: practice leaks into the scored tasks: practice_equals_task "
             f"{leaks['practice_equals_task']}, forced_scored_answer {leaks['forced_scored_answer']} "
             f"(over {leaks['runs_checked']} distillation runs; docs/results.md \"Leaks\")"]
    lines += [f"  {s['run']}: {s['leak']} ({s['source']}): "
              + (f"task {s['task']} answer {s['answer']!r}" if "task" in s else f"prompt {s['prompt']!r}")
              for s in leaks["shown"]]
    return "\n".join(lines)
