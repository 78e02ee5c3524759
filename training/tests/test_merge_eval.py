"""The merge comparison at the task level (`--merge-sizes`, evals/merging.py, docs/distill.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.merging import METHODS, cat, draw_groups, linear, merged, relative_error, svd

ROOT = Path(__file__).resolve().parents[2]
HYPER = ROOT / "tests/fixtures/bundle-hyper"


def _row(seed: int, r: int = 3) -> dict:
    g = torch.Generator().manual_seed(seed)
    return {(0, "q"): (torch.randn(8, r, generator=g), torch.randn(r, 6, generator=g)),
            (1, "v"): (torch.randn(8, r, generator=g), torch.randn(r, 5, generator=g))}


def test_the_merges_match_the_studio_algebra():
    rows = [_row(1), _row(2), _row(3)]
    exact = {k: (sum(r[k][0] @ r[k][1] for r in rows), None) for k in rows[0]}
    for k, (a, b) in cat(rows).items():  # cat is the exact sum at rank Σr
        assert a.shape[1] == 9 and torch.allclose(a @ b, exact[k][0], atol=1e-5)
    ms, ranks = merged(rows)
    assert ranks == {"sum": 9, "single": 3} and ms["svd_sum"] is ms["cat"]
    for k, (a, b) in ms["svd_single"].items():  # the best rank-3 approximation: Eckart–Young
        s = torch.linalg.svdvals(exact[k][0].double())
        assert a.shape[1] == 3
        assert abs(float(torch.linalg.norm(a @ b - exact[k][0])) - float(s[3:].pow(2).sum().sqrt())) < 1e-4
    assert relative_error(ms["cat"], ms["cat"]) == 0 and relative_error(ms["linear"], ms["cat"]) > 0.1
    one = [_row(4)]
    for k, (a, b) in linear(one).items():
        assert torch.equal(a, one[0][k][0]) and torch.equal(b, one[0][k][1])
    for k, (a, _b) in svd(rows, 9).items():
        assert torch.equal(a, cat(rows)[k][0])
    mixed = [_row(1, 2), _row(2, 3)]  # unequal ranks: zero-padded, so a single padded adapter is unchanged
    lin = linear(mixed)
    assert lin[(0, "q")][0].shape == (8, 3)
    pad = linear([mixed[0]])
    assert torch.equal(pad[(0, "q")][0], mixed[0][(0, "q")][0])


def test_groups_take_one_skill_per_rule_family_by_the_seed():
    fams = ["a", "a", "b", "b", "c", "d"]
    gs = draw_groups(fams, 3, 5, 0)
    assert len(gs) == 5 and len({tuple(g) for g in gs}) == 5
    assert all(len({fams[i] for i in g}) == 3 for g in gs)
    assert gs == draw_groups(fams, 3, 5, 0) and draw_groups(fams, 5, 2, 0) == []
    assert draw_groups(fams, 1, 3, 0) == [[0], [1], [2]]


def test_eval_reports_the_merge_comparison(tmp_path):
    sw = pytest.importorskip("pskills_train.skillworld")
    folder = sw.generate("test", 4, 0, tasks_per_skill=2, practice_per_skill=4).write(tmp_path / "w")
    out = tmp_path / "m.json"
    assert eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                      str(out), "--max-answer-tokens", "8", "--max-gen-tokens", "4", "--distill-steps", "3",
                      "--conditions", "distilled", "--merge-sizes", "1,2", "--merge-groups", "4"]) == 0
    res = json.loads(out.read_text())
    m = res["merge"]
    assert m["adapters"] == "distilled_zero"  # members distilled from zero by default, apart from the condition
    for size in ("1", "2"):
        e = m[size]
        assert e["n_groups"] >= 1
        for k in (*METHODS, "own", "in_context_all"):
            assert e[k]["accuracy"] is not None and 0 <= e[k]["accuracy"] <= 1
        assert {(c["a"], c["b"]) for c in e["comparisons"]} >= {("cat", "linear"), ("cat", "own")}
        assert e["cat"]["relative_error"] == 0
    one = m["1"]
    assert one["n_groups"] == 4 and one["cat"]["accuracy"] == one["own"]["accuracy"]
    by = lambda c: {(r["member"], r["task"]): r["accuracy"] for r in one["per_task"] if r["condition"] == c}  # noqa: E731
    assert by("cat") == by("own") == by("linear") == by("cat_mean") and by("own")  # one adapter merged is itself
    assert one["linear"]["relative_error"] < 1e-6
    assert all(len(set(g)) == 2 for g in m["2"]["groups"])
    assert eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                      str(out), "--max-answer-tokens", "8", "--max-gen-tokens", "4", "--distill-steps", "3",
                      "--conditions", "distilled", "--merge-sizes", "1", "--merge-groups", "4",
                      "--merge-init", "instant", "--merge-rehearse", "2"]) == 0
    res = json.loads(out.read_text())
    one = res["merge"]["1"]
    assert res["merge"]["adapters"] == "distilled" and res["merge"]["rehearse_steps"] == 2
    assert 0 <= one["rehearsed"]["accuracy"] <= 1 and one["rehearsed"]["relative_error"] > 0  # it moved
    assert ("rehearsed", "own") in {(c["a"], c["b"]) for c in one["comparisons"]}
    scored = {(r["skill"], r["task"]): r["accuracy"] for r in res["per_task"] if r["condition"] == "distilled"}
    assert by("cat") == {k: scored[k] for k in by("cat")}  # one member merged is the condition's own adapter

    # Only distilled_zero runs: the report's adapter figures and the merge's members are its adapters.
    assert eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                      str(out), "--max-answer-tokens", "8", "--max-gen-tokens", "4", "--distill-steps", "3",
                      "--conditions", "distilled_zero", "--merge-sizes", "1", "--merge-groups", "4"]) == 0
    res = json.loads(out.read_text())
    one = res["merge"]["1"]
    assert res["distilled_adapters"]["condition"] == "distilled_zero"
    assert res["distilled_adapters"]["diversity"]["n"] == 4 and res["merge"]["adapters"] == "distilled_zero"
    scored = {(r["skill"], r["task"]): r["accuracy"] for r in res["per_task"] if r["condition"] == "distilled_zero"}
    assert by("cat") == {k: scored[k] for k in by("cat")}
    with pytest.raises(SystemExit, match="distill-steps"):
        eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                   str(out), "--merge-sizes", "2"])
