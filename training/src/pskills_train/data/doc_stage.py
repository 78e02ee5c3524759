"""Debian packages -> deduplicated documents.

Extraction (the slow part: ~1.6 GB of HTML, ~2,000 man pages) runs in a process pool and is cached
per package under `<cache>/text/`, keyed by the .deb file, the files chosen from it and the code
(not the comments) of the extractor modules; a warm re-run only deduplicates and writes. Deduplication is exact, on the
normalized text of each paragraph of `dedup_min_words` words or more, across all packages in
sorted order, so no paragraph appears twice in the corpus nor in both splits.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import Any, cast

from tqdm import tqdm

from . import extract as extract_mod
from . import files as files_mod
from . import filters, html_text, man_text, plain_text, prose
from .debian import DebPackage
from .extract import extract
from .files import DocFile, list_doc_files
from .filters import normalize_body

_EXTRACTOR_SOURCES = (extract_mod, files_mod, filters, html_text, man_text, plain_text, prose)

Paragraph = tuple[str, str, int]  # (text, normalized-text hash, words)


@dataclass
class Extracted:
    pkg: DebPackage
    files_seen: int
    skipped: dict[str, int]
    docs: list[tuple[str, list[Paragraph]]]  # (relative path, paragraphs) of files with any prose


def _extractor_key(pkg: DebPackage, files: list[DocFile]) -> str:
    """Changes with the .deb, the files chosen from it (so a new skip rule redoes only the packages
    it touches) and the extractor's code."""
    h = hashlib.sha256(pkg.deb.name.encode())
    h.update("\n".join(f"{f.rel}:{f.kind}" for f in files).encode())
    for mod in _EXTRACTOR_SOURCES:
        h.update(_code_of(Path(str(mod.__file__))).encode())
    return h.hexdigest()[:16]


def _code_of(path: Path) -> str:
    """The module's syntax tree without docstrings: editing prose about the code keeps the cache."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            cast(Any, node).body = body[1:]  # any node kind with a body
    return ast.dump(tree)


def _paragraph(text: str) -> Paragraph:
    digest = hashlib.blake2b(normalize_body(text).encode("utf-8"), digest_size=8).hexdigest()
    return text, digest, len(text.split())


def _work(f: DocFile) -> list[Paragraph]:
    return [_paragraph(p) for p in extract(f)]


def extract_packages(pkgs: list[DebPackage], skip: list[str], cache: Path, workers: int) -> Iterator[Extracted]:
    """Extracted text of each package, in the given order, from the cache where it is current."""
    patterns = [re.compile(s) for s in skip]
    cache.mkdir(parents=True, exist_ok=True)
    plan = []
    for pkg in pkgs:
        files, skipped = list_doc_files(pkg.root, patterns, pkg.name)
        path = cache / f"{pkg.name}.{_extractor_key(pkg, files)}.jsonl.gz"
        plan.append((pkg, files, skipped, path))
    todo = sum(len(files) for _, files, _, path in plan if not path.exists())
    bar = tqdm(total=todo, desc="extract", unit="file", disable=todo == 0)
    with Pool(workers) as pool:
        for pkg, files, skipped, path in plan:
            if path.exists():
                docs = _load(path)
            else:
                docs = []
                for f, pars in zip(files, pool.imap(_work, files, chunksize=8), strict=True):
                    bar.update(1)
                    if pars:
                        docs.append((f.rel, pars))
                _save(path, docs)
                for stale in cache.glob(f"{pkg.name}.*.jsonl.gz"):
                    if stale != path:
                        stale.unlink()
            yield Extracted(pkg, len(files), skipped, docs)
    bar.close()


def _save(path: Path, docs: list[tuple[str, list[Paragraph]]]) -> None:
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=3) as fh:
        for rel, pars in docs:
            fh.write(json.dumps([rel, pars], ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def _load(path: Path) -> list[tuple[str, list[Paragraph]]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [(rel, [tuple(p) for p in pars]) for rel, pars in map(json.loads, fh)]


class Deduper:
    """Keeps the first occurrence of every long-enough paragraph, corpus-wide."""

    def __init__(self, min_words: int, min_doc_chars: int):
        self.min_words, self.min_doc_chars = min_words, min_doc_chars
        self.seen: set[str] = set()
        self.dropped_paragraphs = 0

    def document(self, pars: list[Paragraph]) -> str | None:
        """The document's text with repeats removed, or None when too little new prose is left."""
        kept, new = [], set()
        for text, digest, words in pars:
            if words >= self.min_words:
                if digest in self.seen or digest in new:
                    self.dropped_paragraphs += 1
                    continue
                new.add(digest)
            kept.append(text)
        doc = "\n\n".join(kept)
        if not new or len(doc) < self.min_doc_chars:
            return None  # its paragraphs stay unseen: a later document may keep them
        self.seen |= new
        return doc
