"""Evaluation (docs/design.md §5): metrics, bootstrap, truncation, batched scoring, the report schema."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
import torch

from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.adapters import random_text
from pskills_train.evals.cli import table
from pskills_train.evals.conditions import CONDITIONS, DISTILLED, Providers
from pskills_train.evals.core import Settings
from pskills_train.evals.run import evaluate
from pskills_train.export.bundle import random_model
from pskills_train.model.backend import OrtBackend, TorchBackend
from pskills_train.scoring.metrics import paired_bootstrap, rouge_l, token_f1
from pskills_train.scoring.score import Item, score_all, score_batch
from pskills_train.scoring.tasks import Prompter, skill_tasks
from pskills_train.synth import skill_from_text
from pskills_train.tokenizer.chat import CHAT_TEMPLATE

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="module")
def tiny():
    lm, tok = random_model("tiny", 0, 7.0)  # the fixture bundles' weights
    return TorchBackend(lm), tok


def skill_md(i: int) -> str:
    words = ["check", "build", "test", "merge", "review", "commit", "branch", "token", "adapter", "prompt"]
    w = words[i % len(words)]
    return (f"---\nname: skill-{i}\ndescription: Use this skill to {w} the {words[(i + 3) % 10]} files.\n---\n"
            f"# Skill {i}\n\n## When to use\n\nWhen you must {w} a file before the next step.\n\n"
            f"## Steps\n\n1. Open the {w} file.\n2. Run the {words[(i + 5) % 10]} command.\n3. Check the output.\n\n"
            f"## Pitfalls\n\nNever {w} twice; always read the output first.\n")


def test_token_f1_and_rouge_l_by_hand():
    assert token_f1("the cat sat", "the cat sat") == 1.0
    assert token_f1("", "") == 1.0 and token_f1("a", "") == 0.0 and token_f1("dog", "cat") == 0.0
    # pred {the, cat, sat, down}, ref {the, cat, ran}: common 2 -> P 2/4, R 2/3, F1 = 4/7
    assert token_f1("The cat sat down.", "the cat ran") == pytest.approx(4 / 7)
    # counts are clipped: pred "a a a", ref "a b": common 1 -> P 1/3, R 1/2 -> F1 0.4
    assert token_f1("a a a", "a b") == pytest.approx(0.4)
    # LCS("a b c d e", "a c e x") = a c e = 3 -> P 3/5, R 3/4 -> F = 2/3
    assert rouge_l("a b c d e", "a c e x") == pytest.approx(2 / 3)
    # word order matters for ROUGE-L, not for F1
    assert rouge_l("c b a", "a b c") == pytest.approx(1 / 3) and token_f1("c b a", "a b c") == 1.0


def test_paired_bootstrap_ci():
    rng = random.Random(0)
    base = [rng.gauss(3.0, 1.0) for _ in range(60)]  # skills differ a lot; the pairing removes that
    better = [x - 0.2 + rng.gauss(0, 0.05) for x in base]
    delta, (lo, hi) = paired_bootstrap(better, base, 2000, seed=1)
    assert lo <= -0.2 <= hi and hi < 0 and delta == pytest.approx(-0.2, abs=0.03)
    same = [x + rng.gauss(0, 0.05) for x in base]
    _, (lo, hi) = paired_bootstrap(same, base, 2000, seed=1)
    assert lo < 0 < hi
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 2.0])


def test_random_text_has_about_the_same_length(tiny):
    _, tok = tiny
    t = random_text(tok, 80, "s")
    n = len(tok.encode(t, add_special_tokens=False).ids)
    assert 40 <= n <= 80 and t == random_text(tok, 80, "s") and t != random_text(tok, 80, "other")


def test_tasks_and_in_context_truncation(tiny):
    backend, tok = tiny
    long = skill_md(1) + "\n## Notes\n\n" + " ".join(["Always check the adapter output and review the prompt."] * 60)
    skill = skill_from_text(long)
    tasks = skill_tasks(0, skill, tok, max_recon=3, max_template=3, seed=0)
    recon = [t for t in tasks if t.kind == "reconstruction"]
    assert len(recon) == 3 and all(t.heading.startswith("## ") for t in recon)
    for t in recon:  # the held-out section is neither in the adapter source nor in the context
        assert t.heading not in t.source and t.reference not in t.source
    assert {t.kind for t in tasks} - {"reconstruction"} and all(t.source == skill.text for t in tasks
                                                                 if t.kind != "reconstruction")
    p = Prompter(tok, CHAT_TEMPLATE, backend.cfg.max_positions)
    for t in tasks:
        for room in (0, 64, 128):
            ids = p.prompt(t, True, room)
            assert len(ids) + room <= backend.cfg.max_positions
            assert len(ids) > len(p.prompt(t, False, room))  # some of the skill made it in
        text = tok.decode(p.prompt(t, True, 64), skip_special_tokens=False)
        assert text.endswith(t.heading + "\n") if t.heading else text.endswith("<|im_start|>assistant\n")


def _adapter(cfg, seed: int, rank: int = 2, scale: float = 0.5):
    g = torch.Generator().manual_seed(seed)
    return {(i, m): (torch.randn(cfg.lora_dims(m)[0], rank, generator=g) * scale,
                     torch.randn(rank, cfg.lora_dims(m)[1], generator=g) * scale)
            for i in range(cfg.num_layers) for m in cfg.lora_targets}


def test_batched_scoring_equals_one_row_at_a_time(tiny):
    backend, tok = tiny
    rng = random.Random(0)
    items = [Item([rng.randrange(4, 384) for _ in range(n)], [rng.randrange(4, 384) for _ in range(t)], g, a)
             for n, t, g, a in [(5, 7, 4, None), (30, 3, 3, _adapter(backend.cfg, 1)),
                                (12, 12, 6, _adapter(backend.cfg, 2, 3)), (1, 1, 1, None)]]
    together = score_batch(backend, items, stop_ids={3})
    for it, s in zip(items, together, strict=True):
        alone = score_batch(backend, [it], stop_ids={3})[0]
        assert s.nll_sum == pytest.approx(alone.nll_sum, rel=1e-4) and s.generated == alone.generated
        # teacher forcing by hand, no cache
        ids = torch.tensor([it.prompt + it.target])
        from pskills_train.model.lora import stack_rows
        lora = stack_rows(backend.cfg, [it.adapter]) if it.adapter else None
        logits = backend.forward(ids, torch.ones_like(ids), torch.arange(ids.shape[1])[None], None, lora)[0]
        lp = torch.log_softmax(logits[0, len(it.prompt) - 1:-1], -1)
        assert s.nll_sum == pytest.approx(float(-lp.gather(-1, torch.tensor(it.target)[:, None]).sum()), rel=1e-4)
        assert len(s.generated) <= it.gen_len
    capped = score_all(backend, items, {3}, max_rows=2)
    assert [s.nll_sum for s in capped] == pytest.approx([s.nll_sum for s in together], rel=1e-4)


def test_shared_prefix_scoring_equals_plain(tiny):
    backend, tok = tiny
    rng = random.Random(2)
    prefix = [rng.randrange(4, 384) for _ in range(40)]
    ad = _adapter(backend.cfg, 7)
    items = [Item(prefix + [rng.randrange(4, 384) for _ in range(n)], [rng.randrange(4, 384) for _ in range(t)], g, a)
             for n, t, g, a in [(1, 5, 3, None), (9, 2, 2, None), (4, 6, 5, None), (3, 4, 4, ad), (6, 3, 3, ad),
                                (2, 2, 2, _adapter(backend.cfg, 8))]]
    items.append(Item([5] * 50, [6, 7], 2, None))  # long, but shares nothing
    shared = score_all(backend, items, {3}, min_shared=16)
    for it, s in zip(items, shared, strict=True):
        alone = score_batch(backend, [it], {3})[0]
        assert s.nll_sum == pytest.approx(alone.nll_sum, rel=1e-4) and s.generated == alone.generated


class StubProvider:
    """text -> a deterministic random adapter per text (stands in for a hypernetwork)."""

    def __init__(self, cfg, salt: int):
        self.cfg, self.salt = cfg, salt
        self.calls: list[str] = []
        self.label, self.seconds = f"stub{salt}", 0.0

    def __call__(self, text: str):
        self.calls.append(text)
        return _adapter(self.cfg, (hash(text) % 10_000) + self.salt, 2, 0.3)


def test_evaluate_report_schema(tiny):
    backend, tok = tiny
    skills = [skill_from_text(skill_md(i), f"s{i}/SKILL.md") for i in range(4)]
    prov = Providers(parametric=StubProvider(backend.cfg, 0), stage1=StubProvider(backend.cfg, 1),
                     why_missing={"t2l": "no --t2l-checkpoint given"})
    st = Settings(max_tasks_per_skill=2, max_answer_tokens=16, max_gen_tokens=6, seed=0, bootstrap=200)
    res = evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills, prov, st, log=lambda s: None)
    json.dumps(res)
    assert res["n_skills"] == 4
    assert list(res["conditions"]) == [c for c in CONDITIONS if c != "t2l_baseline"]
    assert res["skipped"] == {"t2l_baseline": "no --t2l-checkpoint given",
                              **{c: "no --distill-steps given" for c in DISTILLED}}
    for row in res["conditions"].values():
        assert set(row) >= {"nll", "bpb", "f1", "rougeL"} and all(math.isfinite(row[m]) for m in ("nll", "bpb"))
        assert row["n_tasks"] == 8
    pairs = {(c["a"], c["b"]) for c in res["comparisons"]}
    assert {("parametric", "none"), ("parametric", "wrong_skill"), ("parametric", "random_text"),
            ("parametric", "in_context"), ("stage1_only", "parametric")} <= pairs
    for c in res["comparisons"]:
        assert c["metric"] in ("nll", "bpb", "f1", "rougeL") and c["ci95"][0] <= c["delta"] <= c["ci95"][1]
    # none has no adapter; parametric differs from it; wrong_skill reuses other skills' adapters
    rows = {(r["task"], r["condition"]): r for r in res["per_task"]}
    assert all(rows[(t, "none")]["nll"] != rows[(t, "parametric")]["nll"] for t, c in rows if c == "none")
    assert "parametric - none" in table(res) and "skipped" in table(res)
    empty = evaluate(backend, tok, CHAT_TEMPLATE, {3}, skills[:1], Providers(), st, log=lambda s: None)
    assert list(empty["conditions"]) == ["none", "in_context", "in_context_full", "answer_in_context"]
    assert "wrong_skill" in empty["skipped"] and "adapter_from_answer" in empty["skipped"]


def test_ort_backend_matches_torch(tiny):
    backend, tok = tiny
    ort = OrtBackend(FIXTURES / "bundle-tiny")
    rng = random.Random(1)
    items = [Item([rng.randrange(4, 384) for _ in range(n)], [rng.randrange(4, 384) for _ in range(5)], 4,
                  _adapter(backend.cfg, n) if n % 2 else None) for n in (3, 9, 20)]
    a, b = score_batch(backend, items, {3}), score_batch(ort, items, {3})
    for x, y in zip(a, b, strict=True):
        assert x.nll_sum == pytest.approx(y.nll_sum, rel=1e-4) and x.generated == y.generated


def test_cli_on_hyper_fixture(tmp_path, capsys):
    skills = tmp_path / "skills"
    for i in range(3):
        (skills / f"s{i}").mkdir(parents=True)
        (skills / f"s{i}" / "SKILL.md").write_text(skill_md(i))
    out = tmp_path / "eval.json"
    assert eval_main(["--bundle", str(FIXTURES / "bundle-hyper"), "--skills", str(skills), "--out", str(out),
                      "--max-tasks-per-skill", "2", "--max-answer-tokens", "12", "--max-gen-tokens", "4",
                      "--stage1-checkpoint", str(tmp_path / "missing.pt")]) == 0
    res = json.loads(out.read_text())
    assert res["n_skills"] == 3 and res["bundle"]["backend"] == "onnxruntime"
    assert set(res["conditions"]) == {"none", "in_context", "in_context_full", "parametric", "parametric_in_context",
                                      "wrong_skill", "random_text", "answer_in_context", "adapter_from_answer"}
    assert "missing.pt" in res["skipped"]["stage1_only"] and "t2l" in res["skipped"]["t2l_baseline"]
    assert res["compile_seconds"]["parametric"] >= 0
    assert "parametric - none" in capsys.readouterr().out
