"""Distil one skill from given practice questions and print what happened (docs/distill.md, "Parity with
the studio"): the teacher rows, the loss of every step, the seconds, the in-context prefill seconds of the
same skill, and, with --tasks, the distilled adapter's greedy answers and SkillWorld checker outcomes.

The studio's engine distils the same rows the same way (main/engine/distill.ts); its parity test and
bench:distill call this module and compare.

    python -m pskills_train.distill --bundle DIR --skill SKILL.md --practice practice.jsonl \
        [--questions N] [--tasks tasks.jsonl] [--steps K] [--seed S] [--threads T] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from ..distill_recipe import RECIPE, load_recipe
from ..model.backend import OrtBackend
from ..model.from_onnx import load_onnx_lm
from ..scoring.score import Item, score_all
from ..scoring.tasks import Prompter, Task, trained_context
from ..skillworld.check import check
from .practice import Question
from .student import distill, zero_init
from .teacher import Teacher


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.distill", description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, required=True)
    ap.add_argument("--skill", type=Path, required=True, help="SKILL.md; its whole text is the teacher's context")
    ap.add_argument("--practice", type=Path, required=True,
                    help="JSONL rows with `messages` (a SkillWorld practice.jsonl, a user's tests)")
    ap.add_argument("--questions", type=int, help="the first N practice rows (default all)")
    ap.add_argument("--tasks", type=Path, help="JSONL rows with `messages` and `checker`: answered by the result")
    ap.add_argument("--steps", type=int, help="default: the recipe's")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--recipe", type=Path, default=RECIPE)
    ap.add_argument("--max-new-tokens", type=int, default=32, help="greedy tokens per task answer")
    ap.add_argument("--no-chunks", action="store_true",
                    help="cut a skill longer than the context (as in_context and the studio do) instead of reading "
                         "the sections each question needs")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    return ap


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    torch.set_num_threads(a.threads)
    manifest = json.loads((a.bundle / "bundle.json").read_text())
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(a.bundle / manifest["tokenizer"]["file"]))
    chat_template = json.loads((a.bundle / manifest["tokenizer"]["config"]).read_text())["chat_template"]
    plan = load_recipe(a.recipe, steps=a.steps)
    rec = plan.recipe
    backend = OrtBackend(a.bundle, a.threads)
    lm = load_onnx_lm(a.bundle).eval()
    context, _ = trained_context(manifest, None)
    prompter = Prompter(tok, chat_template, manifest["architecture"]["max_positions"])
    stop = set(manifest["special_tokens"]["stop"])
    teacher = Teacher(backend, prompter, stop, manifest["special_tokens"]["eos"], context, rec.top_k,
                      rec.max_answer, rec.batch)
    skill = a.skill.read_text(encoding="utf-8")
    practice = _rows(a.practice)[:a.questions]
    questions = [Question(messages=[m for m in r["messages"] if m["role"] != "assistant"], source="tests")
                 for r in practice]

    t0 = time.perf_counter()
    rows = teacher.rows(skill, questions, by_sections=not a.no_chunks)
    t_teacher = time.perf_counter() - t0
    init = zero_init(lm, list(manifest["lora"]["layers"]), manifest["lora"]["default_rank"], a.seed)
    res = distill(lm, rows, init, rec, a.seed)
    seconds = time.perf_counter() - t0

    # The same skill in context: one prefill of the teacher's prompt for the first question.
    task0 = Task(0, "prefill", "prefill", "", "", messages=questions[0].messages)
    prompt = prompter.fit(task0, skill, context - rec.max_answer - 1)[0]
    ids = torch.tensor([prompt])
    times = []
    for _ in range(3):
        t1 = time.perf_counter()
        backend.forward(ids, torch.ones_like(ids), torch.arange(len(prompt))[None], None, None)
        times.append(time.perf_counter() - t1)

    out: dict[str, Any] = {
        "steps": rec.steps, "seed": a.seed, "threads": a.threads, "questions": len(questions),
        "skill_tokens": len(prompter.ids(skill)), "context": context, "focused": sum(r.context != skill for r in rows),
        "rows": [{"ids": r.student, "answer_from": r.answer_from, "answer": tok.decode(r.answer)} for r in rows],
        "losses": res.losses, "teacher_seconds": t_teacher, "train_seconds": res.seconds,
        "seconds_per_step": res.seconds / max(1, rec.steps), "seconds": seconds,
        "prefill_tokens": len(prompt), "prefill_seconds": statistics.median(times),
    }
    if a.tasks:
        tasks = _rows(a.tasks)
        eos = [manifest["special_tokens"]["eos"]]
        items = [Item(prompter.fit(Task(0, str(t["task_id"]), "task", "", "", messages=t["messages"]), None,
                                   1 << 30)[0], eos, a.max_new_tokens, res.adapter) for t in tasks]
        scored = score_all(backend, items, stop)
        out["tasks"] = []
        for t, sc in zip(tasks, scored, strict=True):
            text = tok.decode(sc.generated)
            out["tasks"].append({"task_id": t["task_id"], "generated": text, "pass": bool(check(t["checker"], text))})
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{len(rows)} rows, {len(res.losses)} steps: loss {res.losses[0]:.4f} → {res.losses[-1]:.4f}; "
              f"teacher {t_teacher:.1f} s, train {res.seconds:.1f} s")
        for t in out.get("tasks", []):
            print(f"{'pass' if t['pass'] else 'FAIL'} {t['task_id']}: {t['generated']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
