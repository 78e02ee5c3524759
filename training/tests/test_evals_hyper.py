"""The eval's compile path against pskills_train.hyper (skipped while that package is absent):
a checkpoint provider gives the same adapter as hyper.compile.compile_skill, and the ONNX provider on
the fixture bundle matches the same network run in PyTorch."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from pskills_train.evals.adapters import checkpoint_provider
from pskills_train.export.bundle import random_model
from pskills_train.model.backend import TorchBackend

torch.set_num_threads(1)
hyper_compile = pytest.importorskip("pskills_train.hyper.compile")
hyper_net = pytest.importorskip("pskills_train.hyper.net")
hyper_config = pytest.importorskip("pskills_train.hyper.config")

TEXT = "## Steps\n\n1. Open the file.\n2. Run the build command and check the output.\n3. Review the test.\n" * 3


def save_ckpt(folder, lm, kind: str):
    net_cfg = hyper_config.NetConfig(kind=kind, rank=2, width=16, heads=2, blocks=1, seed=3)
    net = hyper_net.build_hypernet(lm.cfg, net_cfg)
    hyper_net.perturb(net, 4)
    enc = {"token_budget": 24, "chunk_overlap": 4}
    ckpt = {"model": net.state_dict(), "config": {"net": asdict(net_cfg), "encoder": enc},
            "lm_config": lm.cfg.to_dict(), "stage": 1}
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, folder / "ckpt.pt")
    return net


@pytest.mark.parametrize("kind", ["perceiver", "t2l"])
def test_checkpoint_provider_equals_compile_skill(tmp_path, kind):
    lm, tok = random_model("tiny", 0, 7.0)
    net = save_ckpt(tmp_path, lm, kind)
    prov = checkpoint_provider(TorchBackend(lm), tok, tmp_path, None, "stage1_only")
    ours = prov(TEXT)
    ref = hyper_compile.compile_skill(lm, net.eval(), tok, TEXT, 24, 4)
    assert set(ours) == set(ref)
    for key, (a, b) in ref.items():
        assert a.shape[-1] > 2  # several chunks, rank-concatenated
        torch.testing.assert_close(ours[key][0], a, rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(ours[key][1], b, rtol=1e-4, atol=1e-6)
    assert prov(TEXT) is ours  # cached per text


def test_cli_all_eight_conditions(tmp_path):
    from pskills_train.evals.__main__ import main as eval_main
    from pskills_train.evals.conditions import DISTILLED
    from pskills_train.evals.run import CONDITIONS

    lm, _ = random_model("tiny", 0, 7.0)
    save_ckpt(tmp_path / "s1", lm, "perceiver")
    save_ckpt(tmp_path / "t2l", lm, "t2l")
    skills = tmp_path / "skills"
    for i in range(2):
        (skills / f"s{i}").mkdir(parents=True)
        (skills / f"s{i}" / "SKILL.md").write_text(f"---\nname: s{i}\ndescription: Check file {i}.\n---\n"
                                                   f"## Steps\n\n1. Open file {i} and check the output.\n")
    out = tmp_path / "e.json"
    repo = Path(__file__).resolve().parents[2]
    assert eval_main(["--bundle", str(repo / "tests/fixtures/bundle-hyper"), "--skills", str(skills), "--out", str(out),
                      "--stage1-checkpoint", str(tmp_path / "s1"),
                      "--t2l-checkpoint", str(tmp_path / "t2l" / "ckpt.pt"),
                      "--max-answer-tokens", "8", "--max-gen-tokens", "4", "--no-per-task"]) == 0
    res = json.loads(out.read_text())
    assert list(res["conditions"]) == list(CONDITIONS)
    assert set(res["skipped"]) == set(DISTILLED)  # no --distill-steps
    pairs = {(c["a"], c["b"]) for c in res["comparisons"]}
    assert {("stage1_only", "parametric"), ("t2l_baseline", "parametric")} <= pairs
    assert "per_task" not in res
