"""One documentation file -> filtered paragraphs (the unit of work the builder's pool runs)."""

from __future__ import annotations

import gzip

from .files import DocFile
from .html_text import decode_html, html_paragraphs
from .man_text import man_file_paragraphs
from .plain_text import text_paragraphs
from .prose import document_is_english, filter_paragraphs

MAX_FILE_BYTES = 16 << 20  # larger files are generated dumps (API indexes, single-page reprints)


def raw_paragraphs(f: DocFile) -> list[str]:
    raw = f.path.read_bytes()
    if len(raw) > MAX_FILE_BYTES:
        return []
    if f.kind == "man":
        return man_file_paragraphs(raw, f.gzipped)
    if f.gzipped:
        raw = gzip.decompress(raw)
    if b"\0" in raw[:4096]:
        return []
    text = decode_html(raw)
    return html_paragraphs(text) if f.kind == "html" else text_paragraphs(text)


def extract(f: DocFile) -> list[str]:
    """Prose paragraphs of one file; [] when the file is not English prose."""
    try:
        pars = filter_paragraphs(raw_paragraphs(f))
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise RuntimeError(f"{f.path}: cannot read ({e})") from e
    return pars if pars and document_is_english(pars) else []
