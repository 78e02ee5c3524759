"""python -m pskills_train.skillworld generate --split test --n N --seed S --out DIR [--filler DIR]

Writes DIR/skills/<name>/SKILL.md, DIR/tasks.jsonl and DIR/manifest.json (docs/skillworld.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .world import SPLITS, generate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.skillworld", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write a SkillWorld split: skill folders, tasks.jsonl, manifest.json")
    g.add_argument("--split", required=True, choices=SPLITS)
    g.add_argument("--n", required=True, type=int, help="number of skills")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True, type=Path)
    g.add_argument("--filler", type=Path, help="folder of SKILL.md files or a built corpus (default: "
                                                 "training/.cache/corpus, else tests/fixtures/skillworld/filler)")
    g.add_argument("--tasks-per-skill", type=int, default=4)
    g.add_argument("--practice-per-skill", type=int, default=32,
                   help="practice questions per skill in practice.jsonl (same rule, instances disjoint from the "
                        "tasks; never scored). 0: none")
    g.add_argument("--tokenizer", type=Path, help="tokenizer.json for the length buckets (default bundle's)")
    a = ap.parse_args(argv)
    if a.n < 1 or a.tasks_per_skill < 1 or a.practice_per_skill < 0:
        ap.error("--n and --tasks-per-skill must be at least 1")
    try:
        world = generate(a.split, a.n, a.seed, a.filler, a.tasks_per_skill, a.tokenizer, a.practice_per_skill)
        out = world.write(a.out)
    except (FileNotFoundError, FileExistsError, ValueError) as e:
        print(f"skillworld: {e}", file=sys.stderr)
        return 2
    c = world.manifest["counts"]
    print(f"skillworld {a.split}: {c['skills']} skills, {c['tasks']} tasks -> {out}")
    print("  by family: " + ", ".join(f"{k} {v}" for k, v in c["by_family"].items()))
    print(f"  filler: {world.manifest['filler']['source']} ({world.manifest['filler']['side']} packages)")
    short = world.manifest["practice"]["short"]
    if short:
        print(f"skillworld: warning: {len(short)} skills have fewer distinct practice instances than "
              f"--practice-per-skill {a.practice_per_skill} and wrote fewer (manifest.json practice.short): "
              + ", ".join(f"{k} {v}" for k, v in list(short.items())[:5]) + (" …" if len(short) > 5 else ""),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
