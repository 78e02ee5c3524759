"""Skills for the corpus, chosen by the studio's own importer: no second copy of its rules here.

Each pinned package is imported with `pskills import NAME@VERSION` into one scratch data dir, in
sorted package order, then `pskills skills export --jsonl` lists what the library stored. A skill is
in the corpus when that import keeps it (a valid SKILL.md with a description, a licence that allows
reuse, English, a body not already in the library, a name not taken twice in one package) and its
normalized body (the export's `bodyHash`) is new to the corpus. The last rule is the corpus's own:
a later package's copy of a skill under the same name but other text is a new version to the
library, and a second copy of that body to the corpus, so it is left out.

The scratch dir's npm cache is the corpus cache (`<cache>/npm`, the tarball and sidecar layout of
main/skills/sources/npm.ts), so a warm cache imports without the network.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import REPO

PSKILLS = REPO / "bin/pskills.mjs"


@dataclass
class PackageImport:
    """One package's import: what the studio kept (its export rows) and why it left the rest out."""

    spec: str
    package: str
    version: str | None
    imported: int  # versions the library stored
    unchanged: int  # same name and text as a skill an earlier package brought: not stored twice
    skipped: list[dict[str, str]]  # [{"path", "reason"}] as `pskills import --json` prints them
    kept: list[dict[str, Any]] = field(default_factory=list)  # `skills export` rows, by path

    @property
    def skill_files(self) -> int:
        return self.unchanged + len(self.kept) + len(self.skipped)

    def reasons(self) -> Counter:
        """Skip reasons by their first two words ('not English: 54% …' -> 'not English')."""
        out = Counter(" ".join(s["reason"].split()[:2]).rstrip(":") for s in self.skipped)
        if self.unchanged:
            out["unchanged"] += self.unchanged
        return out


def split_spec(spec: str) -> tuple[str, str | None]:
    """'@scope/name@1.2.3' -> ('@scope/name', '1.2.3')."""
    at = spec.rfind("@")
    return (spec[:at], spec[at + 1:]) if at > 0 else (spec, None)


def pskills(args: list[str], data_dir: Path) -> str:
    """stdout of `node bin/pskills.mjs ARGS --data-dir DATA_DIR`; its one-line error when it fails."""
    if not (REPO / "node_modules/tsx").exists():
        raise RuntimeError("node_modules missing: run `npm ci` in the repository root (pskills runs the importer)")
    env = {k: v for k, v in os.environ.items() if k != "PSKILLS_DATA_DIR"}
    res = subprocess.run(["node", str(PSKILLS), *args, "--data-dir", str(data_dir)], cwd=REPO, env=env,
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"pskills {' '.join(args)} failed ({res.returncode}): {res.stderr.strip()[-500:]}")
    return res.stdout


def import_packages(specs: Iterable[str], npm_cache: Path, work: Path) -> list[PackageImport]:
    """Imports `specs` in the given order into a new library under `work`; one PackageImport each."""
    data_dir = work / "studio"
    (data_dir / "cache").mkdir(parents=True)
    npm_cache.mkdir(parents=True, exist_ok=True)
    (data_dir / "cache/npm").symlink_to(npm_cache.resolve(), target_is_directory=True)
    runs = []
    for spec in specs:
        res = json.loads(pskills(["import", spec, "--json"], data_dir))
        name, version = split_spec(spec)
        runs.append(PackageImport(spec, name, version, res["imported"], res["unchanged"], res["skipped"]))
    by_package: dict[str, list[dict[str, Any]]] = {}
    for line in pskills(["skills", "export", "--jsonl"], data_dir).splitlines():
        row = json.loads(line)
        by_package.setdefault(row["package"], []).append(row)
    stray = set(by_package) - {r.package for r in runs}
    if stray:
        raise RuntimeError(f"the export lists packages that were not imported: {sorted(stray, key=str)}")
    seen: dict[str, str] = {}  # body hash -> id of the first record with it
    for run in runs:
        rows = sorted(by_package.get(run.package, []), key=lambda r: r["path"])
        if len(rows) != run.imported:
            raise RuntimeError(f"{run.spec}: import stored {run.imported} versions, the export lists {len(rows)}")
        for row in rows:
            # The library keeps a body twice when a later package brings it under the same name with
            # other text (a new version of that skill); the corpus keeps the first package's copy.
            first = seen.setdefault(row["bodyHash"], f"{run.package}/{row['path']}")
            if first == f"{run.package}/{row['path']}":
                run.kept.append(row)
            else:
                why = f"same body as {first}, a new version of that skill"
                run.skipped.append({"path": row["path"], "reason": why})
        if rows:
            run.version = rows[0]["packageVersion"]
    return runs


def corpus_text(content: str) -> str:
    """SKILL.md text as the corpus stores it: '\\n' line ends (the studio keeps the file's own)."""
    return content.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
