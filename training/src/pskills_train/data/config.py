"""CorpusConfig: what the corpus builder fetches, how it splits and filters (configs/corpus.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]  # .../training/src/pskills_train/data -> repository root


@dataclass
class CorpusConfig:
    debian_list: str = "../shared/data/debian-doc-packages.txt"  # relative to the repository root
    skills_list: str = "../shared/data/skill-packages.txt"
    # Held out by package, never by file (docs/design.md §5: near-duplicates leak across files of one package).
    val_debian: list[str] = field(default_factory=list)
    val_skills: list[str] = field(default_factory=list)  # npm names without the version
    # Path fragments (regex, searched in 'pkg/relative/path') that are never text worth keeping:
    # rendered source code, search pages, generated indexes, re-exported API copies.
    skip_paths: list[str] = field(default_factory=list)
    shard_bytes: int = 10_000_000
    min_doc_chars: int = 200  # a document left shorter than this after filtering is dropped
    dedup_min_words: int = 6  # shorter paragraphs (headings, "Parameters") are never deduplicated
    workers: int = 2

    @classmethod
    def load(cls, path: str | Path) -> CorpusConfig:
        raw = json.loads(Path(path).read_text())
        known = {f.name for f in fields(cls)}
        unknown = sorted(k for k in raw if k not in known and not k.startswith("_"))
        if unknown:
            raise ValueError(f"{path}: unknown corpus config fields {unknown}")
        return cls(**{k: v for k, v in raw.items() if k in known})

    def list_path(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else (REPO / p).resolve()


def read_list(path: Path) -> list[str]:
    """Non-empty, non-comment lines of a package list."""
    lines = (ln.strip() for ln in path.read_text().splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]
