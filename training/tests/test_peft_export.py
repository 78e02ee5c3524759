"""An adapter exported by the studio (TypeScript) loads with peft.PeftModel.from_pretrained onto the HF
LlamaForCausalLM of the fixture bundle and gives the TS engine's logits (max abs diff < 1e-4).

tests/int/adapters/peft-logits.ts imports two PEFT folders into a temporary studio, merges them with
`cat`, exports the result and prints the engine's logits; the HF model is rebuilt from the fixture
bundle's training card (training/scripts/make_fixture_bundle.py makes it the same way).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "tests/fixtures/bundle-tiny"
SCRIPT = ROOT / "tests/int/adapters/peft-logits.ts"
TOL = 1e-4


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, dict]:
    """(PEFT folder written by the studio, {ids, vocab, rank, base, adapted} from the TS engine)."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules/tsx").exists():
        pytest.skip("needs node and the repository's node_modules (npm ci)")
    out = tmp_path_factory.mktemp("studio-export") / "peft"
    run = subprocess.run([node, "--import", "tsx", str(SCRIPT), str(out)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return out, json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    """The fixture bundle's base model as an HF checkpoint folder."""
    from pskills_train.export.bundle import random_model
    from pskills_train.model import save_hf

    card = json.loads((BUNDLE / "bundle.json").read_text())["training_card"]
    lm, _ = random_model(card["config"], seed=card["seed"], sharpen=card["sharpen"])
    folder = tmp_path_factory.mktemp("hf-tiny")
    save_hf(lm, folder)
    return folder


def hf_model(folder: Path):
    from transformers import LlamaForCausalLM

    return LlamaForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()


def engine_logits(result: dict, key: str) -> torch.Tensor:
    return torch.tensor(result[key], dtype=torch.float32).view(len(result["ids"]), result["vocab"])  # [s, V]


@torch.no_grad()
def test_hf_base_model_is_the_fixture_bundle(exported, hf_folder):
    _, result = exported
    logits = hf_model(hf_folder)(torch.tensor([result["ids"]])).logits[0]  # [s, V]
    assert (logits - engine_logits(result, "base")).abs().max().item() < TOL


@torch.no_grad()
def test_studio_export_loads_with_peft_and_matches_the_engine(exported, hf_folder):
    from peft import PeftModel

    folder, result = exported
    model = PeftModel.from_pretrained(hf_model(hf_folder), str(folder)).eval()
    logits = model(input_ids=torch.tensor([result["ids"]])).logits[0]  # [s, V]
    adapted = engine_logits(result, "adapted")
    assert (logits - adapted).abs().max().item() < TOL
    # The adapter matters: a no-op export would pass the check above only by accident of scale.
    assert (adapted - engine_logits(result, "base")).abs().max().item() > 0.05


def test_export_files_name_the_bundle_and_the_recipe(exported):
    folder, result = exported
    config = json.loads((folder / "adapter_config.json").read_text())
    assert (config["peft_type"], config["r"], config["lora_alpha"]) == ("LORA", result["rank"], result["rank"])
    assert sorted(config["target_modules"]) == sorted(f"{m}_proj" for m in ["q", "k", "v", "o", "gate", "up", "down"])
    sidecar = json.loads((folder / "pskills.json").read_text())
    assert sidecar["bundle"]["sha256"] == hashlib.sha256((BUNDLE / "bundle.json").read_bytes()).hexdigest()
    assert sidecar["recipe"]["kind"] == "merge" and sidecar["recipe"]["method"] == "cat"
    assert [entry["weight"] for entry in sidecar["lineage"]] == [1, -0.5]
