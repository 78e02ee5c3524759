"""The eval conditions (docs/design.md §5): what each one puts in context and which adapter it uses.

Context limits: `in_context` and `parametric_in_context` cut the skill so the prompt plus the answer
cap and its end-of-turn token fit the base's *trained* context (training card config.data.seq_len),
the room the distil teacher leaves; `in_context_full` and the answer ceiling use the model's
max_positions. Every prompt also leaves room for the whole scored reference within max_positions.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from tokenizers import Tokenizer

from ..scoring.tasks import Task
from .adapters import Provider, Row, random_text

CONDITIONS = ("none", "in_context", "in_context_full", "parametric", "parametric_in_context", "wrong_skill",
              "random_text", "stage1_only", "t2l_baseline", "answer_in_context", "adapter_from_answer")
# docs/distill.md; evals/distilled.py runs them (--distill-steps)
DISTILLED = ("distilled", "distilled_zero", "distilled_synth", "distilled_wrong")
WITH_CONTEXT = ("in_context", "in_context_full", "parametric_in_context", "answer_in_context")
# condition -> the hypernetwork it needs
NEEDS = {"parametric": "parametric", "parametric_in_context": "parametric", "wrong_skill": "parametric",
         "random_text": "parametric", "adapter_from_answer": "parametric", "stage1_only": "stage1",
         "t2l_baseline": "t2l"}


@dataclass
class Providers:
    parametric: Provider | None = None
    stage1: Provider | None = None
    t2l: Provider | None = None
    distill: Any = None  # evals.distilled.DistillSlot: the distilled conditions (--distill-steps)
    why_missing: dict[str, str] = field(default_factory=dict)  # provider slot -> reason


def skipped_conditions(prov: Providers, n_skills: int) -> dict[str, str]:
    why = {c: prov.why_missing.get(src, f"no {src} hypernetwork given")
           for c, src in NEEDS.items() if getattr(prov, src) is None}
    if "wrong_skill" not in why and n_skills < 2:
        why["wrong_skill"] = "needs at least 2 skills"
    if prov.distill is None:
        why.update({c: prov.why_missing.get("distill", "no --distill-steps given") for c in DISTILLED})
    else:
        if prov.parametric is None:
            why["distilled"] = "needs a hypernetwork for its instant init (distilled_zero is the same from zero)"
        if n_skills < 2:
            why["distilled_wrong"] = "needs at least 2 skills"
    return why


def skill_group(package: str | None, source_path: str | None) -> str | None:
    """A real skill's package: its `package`, else the first folder of its path under --skills."""
    if package:
        return package
    parts = PurePosixPath(source_path or "").parts
    return parts[0] if len(parts) > 1 else None


def draw_wrong(groups: list[str | None], seed: int) -> list[int]:
    """For each skill, another skill drawn by the seed: from another group (package / rule family) and
    not a list neighbour when there is one, else any other. Needs at least 2 skills."""
    n = len(groups)
    out = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        pools = [[j for j in others if abs(j - i) > 1 and groups[i] is not None and groups[j] != groups[i]],
                 [j for j in others if groups[i] is not None and groups[j] != groups[i]],
                 [j for j in others if abs(j - i) > 1], others]
        out.append(random.Random(f"{seed}:wrong:{i}").choice(next(p for p in pools if p)))
    return out


def _need(provider: Provider | None, slot: str) -> Provider:
    """The provider of a condition that runs (a condition without one is skipped, skipped_conditions)."""
    if provider is None:
        raise ValueError(f"no {slot} hypernetwork: its conditions should have been skipped")
    return provider


@dataclass
class Plan:
    """Per condition and task: (context text or None, prompt + answer limit, adapter or None)."""
    prov: Providers
    tok: Tokenizer
    texts: list[str]  # each skill's full text
    wrong: list[int] | None
    trained: int
    max_positions: int
    seed: int
    full: dict[int, Row] = field(default_factory=dict)  # skill -> adapter of its full text
    random: dict[int, Row] = field(default_factory=dict)  # skill -> adapter of a random text as long

    def full_adapter(self, i: int) -> Row:
        if i not in self.full:
            self.full[i] = _need(self.prov.parametric, "parametric")(self.texts[i])
        return self.full[i]

    def random_adapter(self, i: int) -> Row:
        if i not in self.random:
            text = self.texts[i]
            n = len(self.tok.encode(text, add_special_tokens=False).ids)
            key = hashlib.sha256(text.encode()).hexdigest()
            self.random[i] = _need(self.prov.parametric, "parametric")(random_text(self.tok, n, f"{self.seed}:{key}"))
        return self.random[i]

    def own(self, task: Task) -> Row:
        if task.source == self.texts[task.skill]:
            return self.full_adapter(task.skill)
        return _need(self.prov.parametric, "parametric")(task.source)

    def spec(self, cond: str, task: Task) -> tuple[str | None, int, Row | None] | None:
        """None: the condition has no row for this task (a distilled adapter of a part of a skill)."""
        full, fit = self.max_positions, self.trained
        if cond.partition("@")[0] in DISTILLED:
            if task.source != self.texts[task.skill]:
                return None
            return None, full, self.prov.distill.adapter(cond, task.skill)
        if cond == "none":
            return None, full, None
        if cond == "in_context":
            return task.source, fit, None
        if cond == "in_context_full":
            return task.source, full, None
        if cond == "parametric":
            return None, full, self.own(task)
        if cond == "parametric_in_context":
            return task.source, fit, self.own(task)
        if cond == "wrong_skill":
            if self.wrong is None:
                raise ValueError("wrong_skill needs at least 2 skills")
            return None, full, self.full_adapter(self.wrong[task.skill])
        if cond == "random_text":
            return None, full, self.random_adapter(task.skill)
        if cond == "stage1_only":
            return None, full, _need(self.prov.stage1, "stage1")(task.source)
        if cond == "t2l_baseline":
            return None, full, _need(self.prov.t2l, "t2l")(task.source)
        if cond == "answer_in_context":
            return task.reference, full, None
        if cond == "adapter_from_answer":
            return None, full, _need(self.prov.parametric, "parametric")(task.reference)
        raise ValueError(f"unknown condition {cond!r}")
