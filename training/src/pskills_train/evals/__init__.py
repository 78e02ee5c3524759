"""Evaluation of compiled skills against in-context skills (docs/design.md); `python -m pskills_train.evals`.

Layers, each importing only those above it: metrics, tasks, score, conditions, core (the loop and its
Settings), report; then the suites, run (skills) and sw_suite (SkillWorld); cli last. distill/ imports
evals.score, so nothing this file imports at its top may import distill (sw_suite and distilled do).
"""

from typing import Any

from .conditions import CONDITIONS, Providers
from .core import Settings
from .metrics import paired_bootstrap, rouge_l, token_f1
from .run import COMPARISONS, evaluate
from .run import table as skills_table

__all__ = ["paired_bootstrap", "rouge_l", "token_f1", "COMPARISONS", "CONDITIONS", "Providers", "Settings",
           "evaluate", "table"]


def table(res: dict[str, Any]) -> str:
    """Either suite's result as text."""
    if res.get("suite") == "skillworld":
        from .sw_suite import table as sw_table  # not at the top: sw_suite -> distilled -> distill -> evals

        return sw_table(res)
    return skills_table(res)
