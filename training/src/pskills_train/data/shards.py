"""JSON-lines shards of ~10 MB: one document per line, written in a fixed order with no timestamps,
so the same input gives the same bytes. `read_split` is how every later stage reads the corpus."""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

SPLITS = ("docs_train", "skills_train", "docs_val", "skills_val")
TRAIN_SPLITS = ("docs_train", "skills_train")


class ShardWriter:
    def __init__(self, folder: Path, split: str, shard_bytes: int):
        self.folder, self.split, self.shard_bytes = folder / split, split, shard_bytes
        self.folder.mkdir(parents=True, exist_ok=True)
        self.index, self.size = 0, 0
        self.docs, self.bytes = 0, 0  # totals: documents and UTF-8 bytes of their text
        self.files: list[str] = []
        self._fh: TextIO | None = None

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is None or self.size >= self.shard_bytes:
            self._open_next()
        line = json.dumps(record, ensure_ascii=False) + "\n"
        assert self._fh is not None
        self._fh.write(line)
        self.size += len(line.encode("utf-8"))
        self.docs += 1
        self.bytes += len(record["text"].encode("utf-8"))

    def _open_next(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self.index += 1
        name = f"{self.split}-{self.index:05d}.jsonl"
        self.files.append(f"{self.split}/{name}")
        self._fh = open(self.folder / name, "w", encoding="utf-8", newline="\n")
        self.size = 0

    def close(self) -> dict[str, Any]:
        if self._fh is not None:
            self._fh.close()
        return {"documents": self.docs, "text_bytes": self.bytes, "shards": self.files}


def read_split(corpus: str | Path, split: str) -> Iterator[dict[str, Any]]:
    """Records of one split in shard order."""
    folder = Path(corpus) / split
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such split (expected one of {SPLITS}); build the corpus first")
    for shard in sorted(folder.glob(f"{split}-*.jsonl")):
        with open(shard, encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)


def read_texts(corpus: str | Path, splits: tuple[str, ...]) -> Iterator[str]:
    for split in splits:
        for rec in read_split(corpus, split):
            yield rec["text"]


def read_skills(corpus: str | Path, split: str) -> list[dict[str, Any]]:
    """Records of `split` (skills_train / skills_val): {id, package, version, name, text}, shard order."""
    files = sorted(glob.glob(str(Path(corpus) / split / "*.jsonl")))
    if not files:
        raise FileNotFoundError(f"{Path(corpus) / split}: no *.jsonl (run pskills_train.data.build_corpus)")
    return [json.loads(line) for f in files for line in open(f, encoding="utf-8") if line.strip()]
