"""Self-written practice against the shared cases (tests/fixtures/practice-cases.json `self_written`, which
tests/unit/distill-self-written.test.ts also runs): the writer's prompts, its sampling (the studio
engine's processors and generator: scoring/sample.py) and the filter give what the studio gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pskills_train.distill import practice as P
from pskills_train.model.backend import OrtBackend
from pskills_train.scoring import sample as S
from pskills_train.scoring.score import Item, score_all
from pskills_train.synth.skill import skill_from_text

ROOT = Path(__file__).resolve().parents[2]
W = json.loads((ROOT / "tests" / "fixtures" / "practice-cases.json").read_text())["self_written"]
TINY = ROOT / "tests/fixtures/bundle-tiny"


def test_the_writer_takes_the_same_tokens_sampling_and_prompts():
    assert P.WRITE_TOKENS == W["tokens"] and P.WRITE_SAMPLING == W["sampling"]
    for c in W["prompts"]:
        headings = P.write_headings(skill_from_text(c["skill"]))
        assert headings == c["headings"] and P.write_prompts(headings) == c["prompts"]
    # Sections with text of their own, not the Examples, a fenced line or an empty section.
    assert W["prompts"][2]["headings"] == ["Datei-Prüfer", "Schritte", "Sonderfälle"]
    assert len(W["prompts"][4]["prompts"]) == 8  # one general, then seven headings


def test_the_generator_and_the_draws_are_the_engines():
    for r in W["rng"]:
        g = S.mulberry32(r["seed"])
        assert [g() for _ in r["values"]] == r["values"]
    for d in W["draws"]:
        s = S.Sampling(**d["sampling"])
        g = S.mulberry32(d["seed"]) if s.temperature else None
        logits = np.asarray(d["logits"], dtype=np.float32)
        assert [S.draw(S.process(logits, d["context"], s), g) for _ in d["draws"]] == d["draws"]


def test_top_p_keeps_the_smallest_set_that_reaches_p():
    logits = np.log(np.asarray([0.5, 0.3, 0.15, 0.05], dtype=np.float32))
    kept = np.isfinite(S.process(logits, [], S.Sampling(1.0, 0.75, 1.0)))
    assert kept.tolist() == [True, True, False, False]
    kept = np.isfinite(S.process(logits, [], S.Sampling(1.0, 0.85, 1.0)))
    assert kept.tolist() == [True, True, True, False]


def test_the_filter_drops_and_keeps_the_same_requests():
    for f in W["filter"]:
        assert P.filter_written(f["replies"], f["skill"]) == (f["kept"], f["dropped"])
    kept = W["filter"][0]["kept"]
    # Other scripts' spaces and a BOM are spaces; another script's digits are not numbering.
    assert "Notes for the billing fix" in kept and "Notes for the export fix" in kept
    assert "\u0663. Notes for the cache fix" in kept and "\U0001f44d\U0001f44d\U0001f44d" in kept
    assert not any("\U0001f44d\U0001f44d" == k for k in kept)  # two characters: empty


def test_sampled_writing_reproduces_its_seed_and_greedy_is_the_scorers():
    m = json.loads((TINY / "bundle.json").read_text())
    backend, stop = OrtBackend(TINY), set(m["special_tokens"]["stop"])
    prompts = [[1, 5, 9, 14, 2], [1, 7, 7, 3 + 5], [1, 30]]
    greedy = S.sample_batch(backend, prompts, stop, 10, S.Sampling(), [0, 1, 2])
    scored = score_all(backend, [Item(p, [m["special_tokens"]["eos"]], 10, None) for p in prompts], stop)
    assert greedy == [s.generated for s in scored]
    s = S.Sampling(**P.WRITE_SAMPLING)
    a = S.sample_batch(backend, prompts, stop, 10, s, [0, 1, 2])
    # Alone or in a batch, a row draws the same tokens from its seed; another seed draws others.
    assert a == [S.sample_batch(backend, [p], stop, 10, s, [i])[0] for i, p in enumerate(prompts)]
    assert a != S.sample_batch(backend, prompts, stop, 10, s, [5, 6, 7])


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
