"""`--practice-tests N`: each skill's own tests capped at N, drawn by the seed (0, 4, all)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.distilled import cap_tests
from pskills_train.skillworld import generate

HYPER = Path(__file__).resolve().parents[2] / "tests/fixtures/bundle-hyper"


def test_cap_draws_n_per_skill_by_the_seed_in_file_order():
    practice = [[{"id": f"{s}-{k}"} for k in range(10)] for s in "ab"] + [[{"id": "c-0"}]]
    names = ["a", "b", "c"]
    assert cap_tests(practice, names, None, 0) is practice
    assert cap_tests(practice, names, 0, 0) == [[], [], []]
    four = cap_tests(practice, names, 4, 0)
    assert [len(r) for r in four] == [4, 4, 1]
    ids = [r["id"] for r in four[0]]
    assert ids == sorted(ids, key=lambda i: int(i.split("-")[1])) and len(set(ids)) == 4
    assert four == cap_tests(practice, names, 4, 0)
    assert any(cap_tests(practice, names, 4, s)[0] != four[0] for s in range(1, 6))  # the seed draws
    assert cap_tests(practice[:1], names[:1], 4, 0) == four[:1]  # a skill's draw does not depend on the others
    with pytest.raises(ValueError, match="practice-tests"):
        cap_tests(practice, names, -1, 0)


@pytest.mark.parametrize("n,expect", [("0", None), ("2", 2), ("all", 4)])
def test_the_eval_trains_on_n_tests_a_skill(tmp_path, n, expect):
    folder = generate("test", 4, 0, tasks_per_skill=2, practice_per_skill=4).write(tmp_path / "w")
    out = tmp_path / "r.json"
    assert eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--skillworld-dir", str(folder), "--out",
                      str(out), "--max-answer-tokens", "8", "--max-gen-tokens", "4", "--distill-steps", "1",
                      "--conditions", "distilled_zero", "--practice-tests", n]) == 0
    res = json.loads(out.read_text())
    assert res["settings"]["practice_tests"] == (None if n == "all" else int(n))
    for rec in res["distill"]["records"].values():
        assert rec["sources"].get("tests") == expect


def test_a_bad_count_is_refused(capsys):
    with pytest.raises(SystemExit):
        eval_main(["--bundle", str(HYPER), "--suite", "skillworld", "--out", "x.json", "--practice-tests", "-1"])
    assert "expected a count >= 0 or 'all'" in capsys.readouterr().err
