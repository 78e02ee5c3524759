"""Episodes that need the skill: for the base LM (skill in the system turn) and for stage 2 (skill_text).

    python -m pskills_train.train.build_episodes --out-dir training/.cache/episodes \
        [--skillworld DIR …] [--trajectories F.jsonl --corpus training/.cache/corpus] [--max-chars 3000]

Sources:
- SkillWorld folders (`pskills skillworld generate --split train|val`): DIR/tasks.jsonl rows with
  messages, reference and the skill's name; DIR/skills/<name>/SKILL.md. The episode is the task's
  messages with the reference as the assistant turn.
- Real-skill trajectories (pskills_train.synth): the skill text comes from the corpus record whose id
  is the trajectory's source_path. A skill longer than --max-chars is cut there, and the episode is
  kept only when its answer still comes from the kept text (its first 60 characters occur in it), so
  the base learns to read the context, not to guess.

Writes base.jsonl ({"messages": [system: skill, …, assistant]}) and stage2.jsonl ({skill, skill_text,
messages, source}) — the same episodes, once with the skill in context and once for the hypernetwork.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..data.data_sets import SOURCES, skillworld_set
from ..data.shards import read_skills


def skillworld_episodes(folder: Path) -> Iterator[dict[str, Any]]:
    tasks = folder / "tasks.jsonl"
    if not tasks.exists():
        raise FileNotFoundError(f"{tasks}: not a SkillWorld folder (pskills skillworld generate --out DIR)")
    texts: dict[str, str] = {}
    for n, line in enumerate(tasks.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        t = json.loads(line)
        for key in ("skill", "messages", "reference"):
            if key not in t:
                raise ValueError(f"{tasks}: line {n}: no {key!r}")
        if t["skill"] not in texts:
            texts[t["skill"]] = (folder / "skills" / t["skill"] / "SKILL.md").read_text(encoding="utf-8")
        yield {"skill": t["skill"], "skill_text": texts[t["skill"]], "source": f"skillworld:{t.get('family', '')}",
               "messages": list(t["messages"]) + [{"role": "assistant", "content": t["reference"]}]}


def real_episodes(traj: Path, corpus: Path, max_chars: int) -> Iterator[dict[str, Any]]:
    by_id = {r["id"]: r["text"] for split in ("skills_train", "skills_val") for r in read_skills(corpus, split)}
    for line in traj.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        t = json.loads(line)
        text = by_id.get(t.get("source_path", ""))
        if text is None:
            continue
        kept = text[:max_chars]
        answers = [m["content"] for m in t["messages"] if m["role"] == "assistant"]
        if len(kept) < len(text) and not all(a[:60].strip() in kept for a in answers):
            continue
        yield {"skill": t["skill"], "skill_text": kept, "source": f"real:{t.get('kind', '')}",
               "messages": t["messages"]}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.train.build_episodes",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, type=Path)
    ap.add_argument("--skillworld", action="append", default=[], type=Path)
    ap.add_argument("--trajectories", type=Path)
    ap.add_argument("--corpus", type=Path, default=Path("training/.cache/corpus"))
    ap.add_argument("--max-chars", type=int, default=3000)
    a = ap.parse_args(argv)
    eps: list[dict[str, Any]] = []
    for folder in a.skillworld:
        eps.extend(skillworld_episodes(folder))
    if a.trajectories:
        eps.extend(real_episodes(a.trajectories, a.corpus, a.max_chars))
    if not eps:
        ap.error("no episodes: give --skillworld DIR and/or --trajectories F")
    a.out_dir.mkdir(parents=True, exist_ok=True)
    write_jsonl(a.out_dir / "base.jsonl",
                [{"messages": [{"role": "system", "content": e["skill_text"]}] + e["messages"]} for e in eps])
    write_jsonl(a.out_dir / "stage2.jsonl", eps)
    # What the episodes were built from, for the training cards of what trains on them (data/data_sets.py)
    sets = [skillworld_set(f, "episodes") for f in a.skillworld]
    if a.trajectories:
        sets.append({"kind": "trajectories", "split": a.trajectories.stem, "seed": "unknown", "used_by": ["episodes"],
                     "file": str(a.trajectories)})
    (a.out_dir / SOURCES).write_text(json.dumps({"sets": sets}, indent=1) + "\n")
    kinds: dict[str, int] = {}
    for e in eps:
        kinds[e["source"].split(":")[0]] = kinds.get(e["source"].split(":")[0], 0) + 1
    print(f"{len(eps)} episodes {kinds} -> {a.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
