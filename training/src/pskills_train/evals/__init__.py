"""Evaluation of compiled skills against in-context skills (docs/design.md §5); `python -m pskills_train.evals`."""

from .conditions import CONDITIONS, Providers
from .metrics import paired_bootstrap, rouge_l, token_f1
from .run import COMPARISONS, Settings, evaluate, table

__all__ = ["paired_bootstrap", "rouge_l", "token_f1", "COMPARISONS", "CONDITIONS", "Providers", "Settings",
           "evaluate", "table"]
