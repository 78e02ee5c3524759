"""Paragraph filters shared by every document format: keep English prose, drop code and data.

The extractors (html_text, man_text, plain_text) turn a file into paragraphs; this module decides
which survive. The thresholds were set by reading samples of what they keep and drop in the Debian
doc packages: prose is mostly letters and rarely uses the symbols below; code, shell sessions and
tables of numbers are not.
"""

from __future__ import annotations

import regex as re

from .filters import ENGLISH_WORD_SHARE, detect_non_english, english_share, words_of

_CODE_SYMBOLS = frozenset("{}[]<>=;|\\$#@^~")
_SPACE = re.compile(r"\s+")
_SENTENCE_WORDS = 12  # from this length on a paragraph must read as English sentences


def clean(text: str) -> str:
    """Collapse all whitespace (wrapping, tabs, non-breaking spaces) into single spaces; drop soft
    hyphens and the pilcrows that Sphinx and texinfo put after headings as anchors."""
    return _SPACE.sub(" ", text.replace("\u00ad", "").replace("\u00b6", "")).strip()


def is_code_like(par: str) -> bool:
    """Source code, shell sessions, tables of numbers, signatures."""
    chars = [c for c in par if not c.isspace()]
    if not chars:
        return True
    letters = sum(c.isalpha() for c in chars) / len(chars)
    symbols = sum(c in _CODE_SYMBOLS for c in chars) / len(chars)
    if letters < 0.6 or symbols > 0.05:
        return True
    stripped = par.rstrip()
    return stripped.endswith((";", "{", "}")) or stripped.startswith(("$ ", "# ", ">>> ", "% "))


def keep_paragraph(par: str) -> bool:
    if is_code_like(par):
        return False
    words = words_of(par)
    if not words:
        return False
    if len(words) >= _SENTENCE_WORDS and english_share(words) < ENGLISH_WORD_SHARE / 2:
        return False  # a long line of names, identifiers or another language
    return detect_non_english(par, markdown=False) is None


def filter_paragraphs(pars: list[str]) -> list[str]:
    out = []
    for p in pars:
        p = clean(p)
        if p and keep_paragraph(p):
            out.append(p)
    return out


def document_is_english(pars: list[str]) -> bool:
    """The whole-document check of the importer (20+ words, function-word share, scripts)."""
    return detect_non_english("\n\n".join(pars), markdown=False) is None
