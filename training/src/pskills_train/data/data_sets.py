"""The training card's `data_sets`: the split and seed of every set the base or the hypernetwork saw
(docs/bundle-format.md "Training card"), and the eval's check against them.

A record is {"kind", "split", "seed", "skills"?, "used_by": [...], "via"?}: `kind` "skillworld" (a
generated world: its manifest's split and seed), "corpus" (named package lists, no seed) or
"trajectories" (the template synthesizer's seed). A seed nobody recorded is "unknown", never guessed.
Writers put a `data_sets` list where they write (the base card, the hypernetwork card, a history
entry); `listed` collects every one in the card.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SOURCES = "sources.json"  # beside an episodes file: what build_episodes read (train/build_episodes.py)


def skillworld_set(folder: str | Path, used_by: str) -> dict[str, Any]:
    """A SkillWorld folder as a data set, from its manifest."""
    m = json.loads((Path(folder) / "manifest.json").read_text())
    return {"kind": "skillworld", "split": m.get("split", "unknown"), "seed": m.get("seed", "unknown"),
            "skills": (m.get("counts") or {}).get("skills", "unknown"), "used_by": [used_by]}


def episodes_sets(path: str | Path, used_by: str) -> list[dict[str, Any]]:
    """The sets an episodes file was built from (its folder's sources.json), or one record saying the
    split and seed are unknown when the file predates sources.json."""
    src = Path(path).parent / SOURCES
    if not src.is_file():
        return [{"kind": "episodes", "split": "unknown", "seed": "unknown", "used_by": [used_by], "via": str(path)}]
    return [{**r, "used_by": [used_by], "via": str(path)} for r in json.loads(src.read_text())["sets"]]


def merged(sets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (kind, split, seed, skills, via), its users joined in order."""
    out: dict[str, dict[str, Any]] = {}
    for r in sets:
        key = json.dumps({k: r.get(k) for k in ("kind", "split", "seed", "skills", "via")}, sort_keys=True)
        if key in out:
            out[key]["used_by"] += [u for u in r["used_by"] if u not in out[key]["used_by"]]
        else:
            out[key] = {**r, "used_by": list(r["used_by"])}
    return list(out.values())


def listed(card: Any) -> list[dict[str, Any]]:
    """Every record of every `data_sets` list anywhere in the card."""
    found: list[dict[str, Any]] = []
    if isinstance(card, dict):
        for k, v in card.items():
            if k == "data_sets" and isinstance(v, list):
                found += [r for r in v if isinstance(r, dict)]
            else:
                found += listed(v)
    elif isinstance(card, list):
        for v in card:
            found += listed(v)
    return found


def seen_seed(card: dict[str, Any], seed: int) -> str | None:
    """Why an eval on SkillWorld seed `seed` is refused (the card lists a world of that seed, any
    split), else None."""
    hits = [r for r in listed(card) if r.get("kind") == "skillworld" and r.get("seed") == seed]
    if not hits:
        return None
    shown = "; ".join(f"{r.get('split')} seed {r.get('seed')} ({r.get('skills')} skills) used by "
                      f"{', '.join(r.get('used_by', []))}" for r in hits[:4])
    return (f"SkillWorld seed {seed} is listed in the bundle's training card (training_card data_sets: {shown}); "
            "evaluate on a seed the card does not list")


def unknown_seeds(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in listed(card) if r.get("seed") == "unknown"]
