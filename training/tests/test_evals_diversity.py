"""Adapter diversity from the factors equals the same statistics on dense ΔW = A·B."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pskills_train.evals.diversity import cross_gram, diversity

KEYS = [(0, "q"), (0, "v"), (1, "q"), (1, "v")]
DIMS = {"q": (6, 5), "v": (6, 3)}


def adapters(n: int, seed: int, shared: float = 0.0):
    g = torch.Generator().manual_seed(seed)
    base = {k: (torch.randn(DIMS[k[1]][0], 2, generator=g), torch.randn(2, DIMS[k[1]][1], generator=g)) for k in KEYS}
    out = []
    for i in range(n):
        r = 1 + i % 3  # ranks differ
        ad = {}
        for k in KEYS:
            if i == 1 and k == (1, "v"):
                continue  # a missing module is ΔW = 0 there
            a = torch.randn(DIMS[k[1]][0], r, generator=g)
            b = torch.randn(r, DIMS[k[1]][1], generator=g)
            # a common part (concatenated rank) makes the adapters alike, as a generic adapter does
            ad[k] = (torch.cat([a, shared * base[k][0]], 1), torch.cat([b, base[k][1]], 0))
        out.append(ad)
    return out


def dense(ad) -> np.ndarray:
    return np.concatenate([(ad[k][0].double() @ ad[k][1].double()).numpy().ravel() if k in ad
                           else np.zeros(DIMS[k[1]][0] * DIMS[k[1]][1]) for k in KEYS])


@pytest.mark.parametrize("shared", [0.0, 3.0])
def test_diversity_matches_dense(shared):
    ads = adapters(5, 1, shared)
    w = np.stack([dense(a) for a in ads])  # [n, all entries]
    np.testing.assert_allclose(cross_gram(ads, ads), w @ w.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cross_gram(ads, ads, symmetric=True), w @ w.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cross_gram(ads[:2], ads[1:]), w[:2] @ w[1:].T, rtol=1e-5, atol=1e-5)
    d = diversity(ads)
    unit = w / np.linalg.norm(w, axis=1, keepdims=True)
    cos = unit @ unit.T
    pairs = cos[np.triu_indices(5, 1)]
    m = w.mean(0)
    assert d["cos_mean"] == pytest.approx(pairs.mean(), abs=1e-6)
    assert d["cos_p95"] == pytest.approx(np.percentile(pairs, 95), abs=1e-6)
    spec = np.mean([np.linalg.norm(x - m) / np.linalg.norm(x) for x in w])
    assert d["specific_share"] == pytest.approx(spec, abs=1e-6)
    assert d["cos_to_mean"] == pytest.approx(np.mean(unit @ m / np.linalg.norm(m)), abs=1e-6)
    others = adapters(2, 9, shared)
    wo = np.stack([dense(a) for a in others])
    d2 = diversity(ads, others)
    want = np.mean(wo @ m / (np.linalg.norm(wo, axis=1) * np.linalg.norm(m)))
    assert d2["others_cos_to_mean"] == pytest.approx(want, abs=1e-6)


def test_generic_adapters_read_as_alike():
    apart, alike = diversity(adapters(6, 2, 0.0)), diversity(adapters(6, 2, 20.0))
    assert alike["cos_mean"] > 0.9 > apart["cos_mean"] + 0.5
    assert alike["specific_share"] < 0.4 < apart["specific_share"]
    same = adapters(1, 3) * 3  # identical adapters: cosine 1, nothing specific
    d = diversity(same)
    assert d["cos_mean"] == pytest.approx(1.0) and d["specific_share"] == pytest.approx(0.0, abs=1e-6)
    assert diversity(same[:1])["cos_mean"] is None
