"""The recipe is the config files: train_default_bundle.sh reads one file per stage with no `--set`
override, every file loads, and the hypernetworks the default bundle ships were trained with exactly
the files named for them (their training card's config equals the file)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pskills_train.hyper.config import RETIRED, HyperConfig
from pskills_train.train.config import PretrainConfig

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "training/configs"
SCRIPT = (ROOT / "training/scripts/train_default_bundle.sh").read_text()


def test_the_script_reads_config_files_and_overrides_nothing():
    assert "--set" not in SCRIPT
    for path in re.findall(r"training/configs/[\w./-]+\.json", SCRIPT):
        assert (ROOT / path).exists(), path
    for stage, name in re.findall(r"\brun ([12]) (\w+)", SCRIPT):
        cfg = HyperConfig.load(CONFIGS / "hyper" / f"{name}.json")
        assert getattr(cfg, f"run{stage}").out == f"training/.cache/runs/{name}"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("**/*.json")), ids=lambda p: str(p.relative_to(CONFIGS)))
def test_configs_are_settings_only_and_load(path):
    raw = json.loads(path.read_text())
    assert not [k for k in raw if k.startswith("_")], "notes belong in training/configs/README.md"
    if path.name.startswith("pretrain"):
        PretrainConfig.load(path)
    elif path.name.startswith("hyper") or path.parent.name == "hyper":
        HyperConfig.load(path)
        assert not set(raw.get("net", {})) & set(RETIRED["net"]), "a removed experiment's key"


@pytest.mark.parametrize("name,ablation", [("hyper9", None), ("t2l9", "t2l_baseline"), ("hyper1s7", "stage1_only")])
def test_shipped_hypernetworks_are_their_config_files(name, ablation):
    card = json.loads((ROOT / "resources/bundles/default/bundle.json").read_text())["training_card"]["hypernet"]
    card = card["ablations"][ablation] if ablation else card
    stage = card["stage"]
    shipped = HyperConfig.from_dict({**card["config"], f"run{stage}": card["run"]})
    file = HyperConfig.load(CONFIGS / "hyper" / f"{name}.json")
    for section in ("net", "encoder", "data", "stage1", "stage2"):
        assert getattr(file, section) == getattr(shipped, section), section
    assert getattr(file, f"run{stage}") == getattr(shipped, f"run{stage}")


def test_the_training_card_keeps_the_config_file_and_its_hash(tmp_path):
    from pskills_train.config_io import config_record
    from pskills_train.hyper.export import training_card

    path = CONFIGS / "hyper" / "hyper9.json"
    record = config_record(path, ["run2.max_steps=1"])
    assert record["path"] == "training/configs/hyper/hyper9.json" and record["set"] == ["run2.max_steps=1"]
    assert len(record["sha256"]) == 64 and "set" not in config_record(path)
    card = training_card({"config": HyperConfig.load(path).to_dict(), "stage": 2, "config_file": record})
    assert card["config_file"] == record
