"""The distillation recipe: one file, training/configs/distill.json (docs/distill.md, "What is built").

Steps, learning rate, batch, top-k, the answer-token cap and the practice sources are read here and
nowhere else: by the distiller, the eval's answer cap, the constants the train-step graph bakes in
(export/train_step.py), and the `distill` object every bundle.json the exporters write carries
(docs/bundle-format.md, "distill"), which is how the studio gets the same recipe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

RECIPE = Path(__file__).resolve().parents[2] / "configs" / "distill.json"
PLAN_FIELDS = ("questions", "sources", "synth_sources")


def recipe_default(name: str) -> Any:
    """One field of the recipe file, as a default."""
    return json.loads(RECIPE.read_text())[name]


def _from_file(name: str) -> Any:
    return field(default_factory=lambda: recipe_default(name))


@dataclass
class Recipe:
    steps: int = _from_file("steps")
    lr: float = _from_file("lr")
    batch: int = _from_file("batch")
    ce_weight: float = _from_file("ce_weight")
    max_norm: float = _from_file("max_norm")
    top_k: int = _from_file("top_k")
    max_answer: int = _from_file("max_answer")  # teacher answer tokens, and the eval's generation cap
    snapshots: tuple[int, ...] = ()  # steps after which the adapter is also returned (curves)


@dataclass
class Plan:
    recipe: Recipe
    questions: int
    sources: tuple[str, ...]
    synth_sources: tuple[str, ...]


def load_recipe(path: Path = RECIPE, **override: Any) -> Plan:
    raw = {**json.loads(Path(path).read_text()), **{k: v for k, v in override.items() if v is not None}}
    known = {f.name for f in fields(Recipe)}
    unknown = set(raw) - known - set(PLAN_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}")
    missing = [k for k in PLAN_FIELDS if k not in raw]
    if missing:
        raise ValueError(f"{path}: missing fields {missing}")
    args: dict[str, Any] = {k: (tuple(v) if k == "snapshots" else v) for k, v in raw.items() if k in known}
    rec = Recipe(**args)
    return Plan(rec, int(raw["questions"]), tuple(raw["sources"]), tuple(raw["synth_sources"]))


def bundle_entry(path: Path = RECIPE) -> dict[str, Any]:
    """bundle.json `distill`: the recipe file's fields, checked, under the file's names."""
    plan = load_recipe(path)
    rec = {k: v for k, v in vars(plan.recipe).items() if k != "snapshots"}
    return {**rec, "questions": plan.questions, "sources": list(plan.sources),
            "synth_sources": list(plan.synth_sources)}
