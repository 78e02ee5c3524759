"""The training card records the split and seed of every set the base or the hypernetwork saw, and the
eval refuses a SkillWorld seed the card lists (data/data_sets.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pskills_train.data.data_sets import listed, seen_seed, unknown_seeds
from pskills_train.evals.__main__ import main as eval_main
from pskills_train.evals.cli import refuse_seen_seed
from pskills_train.export.default_bundle import base_data_sets
from pskills_train.hyper.export import training_card as hyper_card
from pskills_train.skillworld import generate
from pskills_train.skillworld.filler import DEFAULT_FIXTURE
from pskills_train.train.build_episodes import main as build_episodes

ROOT = Path(__file__).resolve().parents[2]
HYPER = ROOT / "tests/fixtures/bundle-hyper"
DEFAULT = ROOT / "resources/bundles/default/bundle.json"


def _sw(sets, split, seed, skills=None):
    return [r for r in sets if r["kind"] == "skillworld" and r["split"] == split and r["seed"] == seed
            and (skills is None or r["skills"] == skills)]


def test_episodes_carry_their_worlds_into_the_base_and_hypernetwork_cards(tmp_path):
    train = generate("train", 5, 3, filler=DEFAULT_FIXTURE).write(tmp_path / "sw-train")
    val = generate("val", 5, 4, filler=DEFAULT_FIXTURE).write(tmp_path / "sw-val")
    assert build_episodes(["--out-dir", str(tmp_path / "eps"), "--skillworld", str(train)]) == 0
    assert build_episodes(["--out-dir", str(tmp_path / "eps-val"), "--skillworld", str(val)]) == 0
    eps, eps_val = str(tmp_path / "eps/base.jsonl"), str(tmp_path / "eps-val/stage2.jsonl")
    phase1 = {"run": {"out": "runs/b1"}, "data": {"episodes": eps}}
    base = base_data_sets({"run": {"out": "runs/b2"}, "data": {"episodes": eps, "probe_episodes": eps_val}},
                          [{"config": phase1}])
    [t] = _sw(base, "train", 3, 5)
    assert t["used_by"] == ["base runs/b1 data.episodes", "base runs/b2 data.episodes"]
    assert _sw(base, "val", 4, 5) and base[0]["kind"] == "corpus"
    card = hyper_card({"config": {"data": {"trajectories_train": str(tmp_path / "eps/stage2.jsonl"),
                                           "trajectories_val": eps_val}}, "stage": 2})
    assert _sw(card["data_sets"], "train", 3) and _sw(card["data_sets"], "val", 4)
    assert seen_seed({"hypernet": card}, 4) and seen_seed({"hypernet": card}, 5) is None
    # an episodes file built before sources.json existed: its split and seed are unknown, not guessed
    old = base_data_sets({"data": {"episodes": str(tmp_path / "nowhere/base.jsonl")}})
    assert unknown_seeds({"data_sets": old})[0]["via"].endswith("nowhere/base.jsonl")


def test_the_shipped_card_lists_the_worlds_the_default_bundle_was_trained_on():
    card = json.loads(DEFAULT.read_text())["training_card"]
    sets = listed(card)
    assert _sw(sets, "train", 0, 4000) and _sw(sets, "val", 0, 200)  # base phases 4-5b, hypernetwork stage 2
    assert _sw(sets, "train", 0, 900) and _sw(sets, "val", 0, 90)  # distill_meta
    assert [r["used_by"] for r in unknown_seeds(card)] == [
        ["base phases 5 and 5b greedy probe (data.probe_episodes episodes/sw-val)"]]
    assert "seed 0" in (seen_seed(card, 0) or "") and seen_seed(card, 1) is None


def test_an_eval_on_a_listed_seed_is_refused_naming_the_seed(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(HYPER, bundle)
    m = json.loads((bundle / "bundle.json").read_text())
    m["training_card"]["data_sets"] = [{"kind": "skillworld", "split": "train", "seed": 5, "skills": 40,
                                        "used_by": ["hypernetwork"]}]
    (bundle / "bundle.json").write_text(json.dumps(m))
    world = generate("test", 2, 5, tasks_per_skill=1).write(tmp_path / "w5")
    with pytest.raises(SystemExit, match="SkillWorld seed 5 is listed in the bundle's training card"):
        eval_main(["--bundle", str(bundle), "--suite", "skillworld", "--skillworld-dir", str(world), "--out",
                   str(tmp_path / "r.json")])
    with pytest.raises(SystemExit, match="--seed 5: SkillWorld seed 5"):  # refused before generating
        eval_main(["--bundle", str(bundle), "--suite", "skillworld", "--seed", "5", "--n", "2", "--out",
                   str(tmp_path / "r.json")])
    refuse_seen_seed(m, generate("test", 2, 6, tasks_per_skill=1).write(tmp_path / "w6"))  # another seed runs
    assert not (tmp_path / "r.json").exists()
