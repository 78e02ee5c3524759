"""Eval plumbing: the trained-context cut, the wrong-skill draw, retrieval, both suites' schema."""

from __future__ import annotations

import json
import math

import pytest
import torch

from pskills_train.evals import sw_suite
from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.cli import table
from pskills_train.evals.conditions import CONDITIONS, Plan, Providers, draw_wrong, skill_group
from pskills_train.evals.core import Settings
from pskills_train.evals.retrieval import candidates, rank_metrics, retrieval_nll
from pskills_train.evals.run import evaluate
from pskills_train.export.bundle import random_model
from pskills_train.model.backend import TorchBackend
from pskills_train.scoring.score import Item, score_batch
from pskills_train.scoring.tasks import Prompter, Task, target_ids, trained_context
from pskills_train.synth import skill_from_text
from pskills_train.tokenizer.chat import CHAT_TEMPLATE
from test_evals import FIXTURES, StubProvider, skill_md

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny():
    lm, tok = random_model("tiny", 0, 7.0)  # the fixture bundles' weights, as test_evals.tiny
    return TorchBackend(lm), tok


def test_trained_context_from_card_flag_or_positions():
    m = {"architecture": {"max_positions": 1024}, "training_card": {"config": {"data": {"seq_len": 256}}}}
    assert trained_context(m, None) == (256, "training_card.config.data.seq_len")
    assert trained_context(m, 128) == (128, "--trained-context")
    assert trained_context({**m, "training_card": {"config": "tiny"}}, None)[0] == 1024


def test_wrong_skill_is_another_group_and_never_a_neighbour():
    groups = ["a"] * 5 + ["b"] * 3 + ["c"] * 4
    for seed in range(6):
        w = draw_wrong(groups, seed)
        assert w == draw_wrong(groups, seed)
        assert all(groups[j] != groups[i] and abs(i - j) > 1 for i, j in enumerate(w))
    assert len({tuple(draw_wrong(groups, s)) for s in range(6)}) > 1  # the seed draws
    same = draw_wrong([None] * 6, 0)  # no groups: still never itself nor a neighbour
    assert all(abs(i - j) > 1 for i, j in enumerate(same))
    assert draw_wrong([None, None], 0) == [1, 0]
    assert skill_group(None, "pkg/skills/x/SKILL.md") == "pkg" and skill_group(None, "SKILL.md") is None
    assert skill_group("@a/b", "x/SKILL.md") == "@a/b"


def test_candidates_and_rank_metrics():
    c = candidates(30, 20, 3)
    assert all(row[0] == i and len(row) == 20 == len(set(row)) for i, row in enumerate(c))
    assert c == candidates(30, 20, 3) and c != candidates(30, 20, 4)
    assert all(len(r) == 4 for r in candidates(4, 20, 0))
    # own first: ranks 1, 3 (two lower), 2
    m = rank_metrics([[1.0, 2.0, 3.0], [2.0, 1.0, 1.5], [2.0, 2.5, 1.0]])
    assert m["ranks"] == [1, 3, 2] and m["top1"] == pytest.approx(1 / 3)
    assert m["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3) and m["k"] == 3


def long_skill(i: int) -> str:
    return skill_md(i) + "\n## Notes\n\n" + " ".join([f"Always review output {i} before the commit."] * 40)


def test_in_context_fits_the_trained_context(tiny):
    backend, tok = tiny
    skills = [skill_from_text(long_skill(i), f"p{i % 2}/s{i}/SKILL.md") for i in range(3)]
    st = Settings(max_tasks_per_skill=2, max_answer_tokens=16, max_gen_tokens=6, bootstrap=100, trained_context=96)
    res = evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, Providers(), st, log=lambda s: None)
    rows = res["per_task"]
    for r in rows:  # in_context: the prompt, the answer cap and its end token fit the trained context
        if r["condition"] == "in_context":
            assert r["prompt_tokens"] + st.max_gen_tokens + 1 <= 96
        assert r["prompt_tokens"] + max(r["answer_tokens"], st.max_gen_tokens + 1) <= backend.cfg.max_positions
    cut = res["context_cut"]
    assert cut["in_context"]["mean_cut_tokens"] > cut["in_context_full"]["mean_cut_tokens"] >= 0
    assert cut["in_context"]["share_tasks_cut"] == 1.0
    by = {(r["task"], r["condition"]): r for r in rows}
    for (t, c), r in by.items():
        if c == "in_context":  # the skill is cut further than in_context_full, and longer than none
            assert by[(t, "none")]["prompt_tokens"] < r["prompt_tokens"] < by[(t, "in_context_full")]["prompt_tokens"]
    assert "context tokens cut" in table(res)


def test_report_has_diversity_retrieval_and_ceilings(tiny):
    backend, tok = tiny
    skills = [skill_from_text(skill_md(i), f"p{i % 3}/s{i}/SKILL.md") for i in range(6)]
    prov = Providers(parametric=StubProvider(backend.cfg, 0))
    st = Settings(max_tasks_per_skill=2, max_answer_tokens=12, max_gen_tokens=4, bootstrap=100, retrieval_k=4)
    res = evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, prov, st, log=lambda s: None)
    json.dumps(res)
    assert res["suite"] == "skills"
    assert {"answer_in_context", "adapter_from_answer", "in_context_full"} <= set(res["conditions"])
    refs = {r["task"]: r for r in res["per_task"] if r["condition"] == "answer_in_context"}
    assert refs and all(r["context_cut"] == 0 for r in refs.values())
    d = res["diversity"]
    assert d["n"] == 6 and -1 <= d["cos_mean"] <= d["cos_p95"] <= 1 and 0 < d["specific_share"]
    assert d["n_others"] == 6  # the random-text adapters, against the mean adapter
    r = res["retrieval"]
    assert r["k"] == 4 and r["n_skills"] >= 1 and 0 <= r["top1"] <= r["mrr"] <= 1 and len(r["ranks"]) == r["n_skills"]
    w = res["wrong_skill"]
    assert w["share_other_group"] == 1.0 and all(a != b for a, b in w["pairs"].items())
    for key in ("compile_all", "retrieval", "diversity"):
        assert res["timing_seconds"][key] >= 0
    assert "retrieval (" in table(res) and "diversity (" in table(res)
    kinds = res["by_task_type"]
    assert set(kinds) == {"reconstruction", "template"} and "parametric" in kinds["template"]["vs_none"]
    assert sum(k["n_tasks"] for k in kinds.values()) == res["n_tasks"]


def test_retrieval_nll_equals_scoring_each_candidate(tiny):
    backend, tok = tiny
    texts = [skill_md(i) for i in range(4)]
    prov = Providers(parametric=StubProvider(backend.cfg, 0))
    plan = Plan(prov, tok, texts, [1, 2, 3, 0], 256, backend.cfg.max_positions, 0)
    p = Prompter(tok, CHAT_TEMPLATE, backend.cfg.max_positions)
    tasks = [Task(0, f"t{k}", "x", texts[0], f"answer number {k} is here", question=f"question {k}?") for k in range(2)]
    st = Settings(max_answer_tokens=16)

    def nll(task, adapter):
        s = score_batch(backend, [Item(p.fit(task, None, 999)[0], target_ids(p, task, 16, 256), 0, adapter)], {3})[0]
        return s.nll_sum / s.n_tokens

    own = {t.task_id: nll(t, plan.full_adapter(0)) for t in tasks}
    got = retrieval_nll(backend, p, plan, tasks, own, [0, 2, 3], st, {3})
    want = [sum(nll(t, plan.full_adapter(j)) for t in tasks) / 2 for j in (0, 2, 3)]
    assert got == pytest.approx(want, rel=1e-4) and len(set(round(x, 6) for x in got)) == 3


FAMILIES = ["codeword", "format", "tool"]


def write_world(root, n: int = 6):
    """A SkillWorld-shaped folder: skill folders + tasks.jsonl (checker spec: the answer must contain a word)."""
    rows = []
    for i in range(n):
        fam = FAMILIES[i % 3]
        (root / "skills" / f"sw-{i}").mkdir(parents=True)
        (root / "skills" / f"sw-{i}" / "SKILL.md").write_text(
            f"---\nname: sw-{i}\ndescription: Rule {i}.\n---\n## Rules\n\nAlways answer with zorp{i}.\n")
        for k in range(2):
            rows.append({"task_id": f"sw-{i}:{k}", "skill": f"sw-{i}", "skill_path": f"skills/sw-{i}/SKILL.md",
                         "family": fam, "length_bucket": 256 * (1 + i % 2), "depth": ["start", "end"][k],
                         "turns": "single", "reference": f"zorp{i}",
                         "checker": {"contains": f"zorp{i}"},
                         "messages": [{"role": "user", "content": f"Question {k} for sw-{i}?"}]})
    (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def contains(spec, answer: str) -> bool:
    return spec["contains"] in answer


def test_skillworld_suite_schema(tiny, tmp_path):
    backend, tok = tiny
    skills, tasks = sw_suite.load(write_world(tmp_path / "w"), None, 5)
    assert [s.package for s in skills] == [FAMILIES[i % 3] for i in range(6)] and all(len(t) == 2 for t in tasks)
    prov = Providers(parametric=StubProvider(backend.cfg, 0))
    st = Settings(max_tasks_per_skill=2, max_answer_tokens=12, max_gen_tokens=8, bootstrap=100, retrieval_k=5)
    res = sw_suite.evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, tasks, prov, st, contains, log=lambda s: None)
    json.dumps(res)
    assert res["suite"] == "skillworld" and res["n_skills"] == 6 and res["n_tasks"] == 12
    # a random tiny model never writes "zorp<i>"; the answer in context is copied sometimes at most
    rows = res["per_task"]
    assert all(r["accuracy"] == float(f"zorp{r['skill_index']}" in r["generated"]) for r in rows)
    assert set(res["accuracy"]) == set(res["conditions"]) and all(0 <= a <= 1 for a in res["accuracy"].values())
    assert set(res["by_family"]) == set(FAMILIES) and set(res["by_length"]) == {"256", "512"}
    assert set(res["by_depth"]) == {"start", "end"} and set(res["by_turns"]) == {"single"}
    fam = res["by_family"]["tool"]
    assert fam["n_skills"] == 2 and set(fam["accuracy"]) == set(res["conditions"]) and "parametric" in fam["vs_none"]
    assert res["wrong_skill"]["share_other_group"] == 1.0
    assert {("parametric", "wrong_skill"), ("parametric", "none")} <= {(c["a"], c["b"]) for c in res["comparisons"]}
    assert res["retrieval"]["k"] == 5 and res["diversity"]["n"] == 6
    assert all(math.isfinite(r["nll"]) for r in rows)
    out = table(res)
    assert "accuracy family" in out and "tool" in out


def test_skillworld_accuracy_follows_the_checker(tiny, tmp_path):
    backend, tok = tiny
    skills, tasks = sw_suite.load(write_world(tmp_path / "w", 3), None, 1)
    st = Settings(max_answer_tokens=8, max_gen_tokens=4, bootstrap=50)
    yes = sw_suite.evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, tasks, Providers(), st, lambda s, a: True,
                            log=lambda s: None)
    no = sw_suite.evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, tasks, Providers(), st, lambda s, a: False,
                           log=lambda s: None)
    assert set(yes["accuracy"].values()) == {1.0} and set(no["accuracy"].values()) == {0.0}


def test_cli_skillworld_dir(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sw_suite, "default_check", lambda: contains)
    out = tmp_path / "sw.json"
    assert eval_main(["--bundle", str(FIXTURES / "bundle-hyper"), "--suite", "skillworld", "--skillworld-dir",
                      str(write_world(tmp_path / "w", 4)), "--out", str(out), "--max-answer-tokens", "8",
                      "--max-gen-tokens", "4", "--no-per-task"]) == 0
    res = json.loads(out.read_text())
    assert res["suite"] == "skillworld" and res["n_skills"] == 4 and "per_task" not in res
    assert res["trained_context"]["tokens"] == 256 and res["wall_seconds"] >= res["seconds"]
    assert set(res["conditions"]) == set(CONDITIONS) - {"stage1_only", "t2l_baseline"}
    assert "SkillWorld: 4 skills" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        eval_main(["--bundle", str(FIXTURES / "bundle-hyper"), "--out", str(out)])  # skills suite needs --skills


def test_default_check_is_skillworlds():
    check = sw_suite.default_check()
    assert check({"kind": "contains", "value": "zorp"}, "say zorp") and not check({"kind": "exact", "value": "a"}, "b")


def test_generated_world_loads_with_its_checkers(tiny, tmp_path):
    """The SkillWorld generator's own folder: every loaded reference passes its row's checker, and the
    suite runs on it."""
    backend, tok = tiny
    sw = pytest.importorskip("pskills_train.skillworld")
    folder = sw.generate("test", 6, 0, tasks_per_skill=2).write(tmp_path / "w")
    skills, tasks = sw_suite.load(folder, None, 2)
    assert len(skills) == 6 and all(len(t) == 2 for t in tasks)
    assert len({s.package for s in skills}) > 1  # rule families are the wrong-skill groups
    check = sw_suite.default_check()
    for ts in tasks:
        for t in ts:
            assert check(t.meta["checker"], t.reference) and t.messages and t.meta["turns"] in ("single", "multi")
            assert not check(t.meta["checker"], "")
    st = Settings(max_tasks_per_skill=2, max_answer_tokens=12, max_gen_tokens=4, bootstrap=50, retrieval_k=3)
    res = sw_suite.evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, tasks, Providers(StubProvider(backend.cfg, 0)),
                            st, check, log=lambda s: None)
    assert res["n_tasks"] == 12 and set(res["by_family"]) == {s.package for s in skills}


def test_workers_give_the_same_numbers(tmp_path):
    skills = tmp_path / "skills"
    for i in range(4):
        (skills / f"p{i % 2}" / f"s{i}").mkdir(parents=True)
        (skills / f"p{i % 2}" / f"s{i}" / "SKILL.md").write_text(skill_md(i))
    common = ["--bundle", str(FIXTURES / "bundle-hyper"), "--skills", str(skills), "--max-tasks-per-skill", "2",
              "--max-answer-tokens", "8", "--max-gen-tokens", "3", "--retrieval-k", "3"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert eval_main(common + ["--out", str(one)]) == 0
    assert eval_main(common + ["--out", str(two), "--workers", "2"]) == 0
    a, b = json.loads(one.read_text()), json.loads(two.read_text())
    assert b["workers"] == 2 and b["cpu_seconds"] > 0
    key = lambda r: (r["task"], r["condition"])  # noqa: E731
    ra, rb = sorted(a["per_task"], key=key), sorted(b["per_task"], key=key)
    assert [key(r) for r in ra] == [key(r) for r in rb]
    assert [r["nll"] for r in ra] == pytest.approx([r["nll"] for r in rb], rel=1e-6)
    assert [r["generated"] for r in ra] == [r["generated"] for r in rb]
    assert a["retrieval"]["ranks"] == b["retrieval"]["ranks"]
    assert a["diversity"]["cos_mean"] == pytest.approx(b["diversity"]["cos_mean"], rel=1e-9)
