"""Plain text, Markdown and reStructuredText -> paragraphs.

Paragraphs are runs of non-blank lines. Dropped: fenced code, indented blocks (Markdown code, rST
literal blocks and directive bodies), rST directives and heading underlines, Markdown tables.
Markup that only decorates prose (heading '#', emphasis, rST roles) is reduced to its text.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+.:_])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\s*\.\.(\s|$)")
_ROLE = re.compile(r":[a-zA-Z:+-]+:`([^`<]*?)\s*(<[^>]*>)?`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|``)(?=\S)(.+?)(?<=\S)\1")


def _inline(line: str) -> str:
    line = _ROLE.sub(r"\1", line)
    line = _LINK.sub(r"\1", line)
    line = _EMPHASIS.sub(r"\2", line)
    return re.sub(r"^\s*#{1,6}\s+", "", line)


def text_paragraphs(text: str) -> list[str]:
    pars: list[str] = []
    block: list[str] = []
    in_fence = False
    literal_next = False  # the previous paragraph ended with '::': an rST literal block follows

    def flush() -> None:
        nonlocal literal_next
        if not block:
            return
        indented = all(ln.startswith(("    ", "\t")) for ln in block)
        is_table = all(ln.lstrip().startswith(("|", "+-", "+=")) for ln in block)
        directive = _DIRECTIVE.match(block[0]) is not None
        if not (indented or is_table or directive) or (indented and not literal_next and _is_quote(block)):
            lines = [_inline(ln) for ln in block if not _UNDERLINE.match(ln)]
            par = " ".join(ln.strip() for ln in lines).strip()
            if par:
                pars.append(par[:-1] if par.endswith("::") else par)
        if not indented:
            literal_next = block[-1].rstrip().endswith("::")
        block.clear()

    for ln in text.splitlines():
        if _FENCE.match(ln):
            flush()
            in_fence = not in_fence
        elif in_fence:
            continue
        elif not ln.strip():
            flush()
        else:
            block.append(ln.expandtabs(4))
    flush()
    return pars


def _is_quote(block: list[str]) -> bool:
    """An indented block of plain sentences (an rST block quote, a wrapped list item), not code."""
    text = " ".join(block)
    return text.strip()[:1].isupper() and sum(c in "{}();=<>$" for c in text) == 0 and text.rstrip().endswith(".")
