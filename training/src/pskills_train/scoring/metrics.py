"""Answer metrics and the paired bootstrap.

Token F1 and ROUGE-L use the same word tokens: lower-cased runs of letters/digits (SQuAD-style F1
without article stripping; ROUGE-L = the LCS F-measure with beta 1, as rouge-score's `fmeasure`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def token_f1(pred: str, ref: str) -> float:
    p, r = words(pred), words(ref)
    if not p and not r:
        return 1.0
    common = sum((Counter(p) & Counter(r)).values())
    if common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(r)
    return 2 * prec * rec / (prec + rec)


def lcs_len(a: Sequence[str], b: Sequence[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(pred: str, ref: str) -> float:
    p, r = words(pred), words(ref)
    if not p and not r:
        return 1.0
    lcs = lcs_len(p, r)
    if lcs == 0:
        return 0.0
    prec, rec = lcs / len(p), lcs / len(r)
    return 2 * prec * rec / (prec + rec)


def bits_per_byte(nll_sum_nats: float, text: str) -> float:
    return nll_sum_nats / math.log(2) / max(1, len(text.encode("utf-8")))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n_resamples: int = 2000, seed: int = 0,
                     ) -> tuple[float, tuple[float, float]]:
    """Mean of a[i] - b[i] and its 95 % percentile interval, resampling the paired units (skills)."""
    if len(a) != len(b) or not a:
        raise ValueError("paired bootstrap needs two equally long, non-empty samples")
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    n = len(d)
    idx = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    means = np.sort(d[idx].mean(1))
    lo, hi = means[int(0.025 * (n_resamples - 1))], means[int(math.ceil(0.975 * (n_resamples - 1)))]
    return float(d.mean()), (float(lo), float(hi))
