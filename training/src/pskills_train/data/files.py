"""Which files of an unpacked package are read, and as what: html, man, text, or nothing.

Translations are recognised by path: a directory named after a language (de, pt_BR, zh-CN,
de.UTF-8) or a language code inside the file name (index.ja.html, faq.de.txt.gz). Plain-text
files that are the sources of a rendered HTML page of the same package (Sphinx `_sources`, git's
asciidoc .txt, the kernel's .rst) are skipped: the HTML is read instead.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# ISO 639-1 codes of languages Debian docs are translated into. Left out on purpose: codes that are
# also common path words in English docs (as, id, in, is, it, ne, no, or, to).
LANGS = frozenset(("de fr es pt ja ru zh ko pl nl sv cs da fi hu nb nn ro tr uk vi ca el ar fa hr sk sl sr bg "
                   "he lt lv et gl eu ta hi bn th ml kn te mr gu pa ur ka hy be mk sq ms tl eo ga cy").split())
_LANG_DIR = re.compile(r"^([a-z]{2})([-_][A-Za-z]{2,4})?(\.utf-?8)?$", re.I)
_LANG_IN_NAME = re.compile(r"\.([a-z]{2})([-_][a-z]{2,4})?(\.utf-?8)?\.(html?|txt|text|md|rst|xhtml)(\.gz)?$", re.I)
_REGION = re.compile(r"^[-_][A-Z]{2}$")  # it_IT, sp_SP: a region makes any two-letter code a language
_MAN_NAME = re.compile(r"\.(\d[a-z]*|n|l)(\.gz)?$")
_HTML = (".html", ".htm", ".xhtml")
_TEXT = (".txt", ".text", ".md", ".markdown", ".rst")
_NOT_PROSE_NAMES = re.compile(r"^(changelog|news|copyright|todo|thanks|authors|credits)\b", re.I)


@dataclass(frozen=True)
class DocFile:
    path: Path  # absolute
    rel: str  # '/'-separated, relative to the unpacked package root
    kind: str  # html | man | text
    gzipped: bool


def translation(rel: str) -> bool:
    parts = rel.split("/")
    for d in parts[:-1]:
        m = _LANG_DIR.match(d)
        if m and (m.group(1).lower() in LANGS or _REGION.match(m.group(2) or "")) and m.group(1).lower() != "en":
            return True
    m = _LANG_IN_NAME.search(parts[-1])
    return bool(m and m.group(1).lower() in LANGS)


def _stem(name: str) -> str:
    name = name[:-3] if name.endswith(".gz") else name
    return name.rsplit(".", 1)[0] if "." in name else name


def kind_of(rel: str) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    base = name[:-3] if name.endswith(".gz") else name
    low = base.lower()
    if low.endswith(_HTML):
        return "html"
    if "/man/" in f"/{rel}" and _MAN_NAME.search(name):
        return "man"
    if _NOT_PROSE_NAMES.match(low):
        return None
    if low.endswith(_TEXT) or low.startswith("readme"):
        return "text"
    return None


def list_doc_files(root: Path, skip: list[re.Pattern[str]], pkg: str) -> tuple[list[DocFile], dict[str, int]]:
    """Files to read under `root` in sorted order, and how many were left out for each reason."""
    found: list[tuple[str, str]] = []
    skipped = {"translation": 0, "skip_paths": 0, "html_source": 0, "symlink": 0}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            kind = kind_of(rel)
            if kind is None:
                continue
            if full.is_symlink():
                skipped["symlink"] += 1
            elif translation(rel):
                skipped["translation"] += 1
            elif any(p.search(f"{pkg}/{rel}") for p in skip):
                skipped["skip_paths"] += 1
            else:
                found.append((rel, kind))
    html_stems = {_stem(r.rsplit("/", 1)[-1]) for r, k in found if k == "html"}
    out = []
    for rel, kind in sorted(found):
        if kind == "text" and _stem(rel.rsplit("/", 1)[-1]) in html_stems:
            skipped["html_source"] += 1
            continue
        out.append(DocFile(root / rel, rel, kind, rel.endswith(".gz")))
    return out, skipped
