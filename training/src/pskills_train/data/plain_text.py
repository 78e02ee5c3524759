"""Plain text, Markdown and reStructuredText -> paragraphs.

Paragraphs are runs of non-blank lines. Dropped: fenced code, indented blocks (Markdown code, rST
literal blocks and directive bodies), rST directives and heading underlines, Markdown tables.
Markup that only decorates prose (heading '#', '>' quotes, emphasis, rST roles, a leading YAML
metadata block) is reduced to its text or dropped.
"""

from __future__ import annotations

import re

_FRONTMATTER = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*(\n|\Z)", re.S)  # Markdown metadata block
_TEMPLATE = re.compile(r"^\s*(\{%.*%\}|<!--.*-->)\s*$")  # Jekyll/Liquid tags, one-line HTML comments
_FENCE = re.compile(r"^\s*(```|~~~)")
_QUOTE = re.compile(r"^\s*(>\s?)+")  # Markdown block quote markers
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
    text = _FRONTMATTER.sub("", text, count=1)
    pars: list[str] = []
    block: list[str] = []
    in_fence = False
    literal_next = False  # the previous paragraph ended with '::': an rST literal block follows

    def flush() -> None:
        nonlocal literal_next
        if not block:
            return
        lead = min(len(ln) - len(ln.lstrip()) for ln in block)
        literal = (lead > 0 and literal_next) or (lead >= 4 and not _is_quote(block))
        is_table = all(ln.lstrip().startswith(("|", "+-", "+=")) for ln in block)
        directive = _DIRECTIVE.match(block[0]) is not None
        if not (literal or is_table or directive):
            lines = [_inline(ln) for ln in block if not _UNDERLINE.match(ln)]
            par = " ".join(ln.strip() for ln in lines).strip()
            if par:
                pars.append(par[:-1] if par.endswith("::") else par)
        if lead == 0:  # a literal block (or directive body) follows '::' or a directive
            literal_next = directive or block[-1].rstrip().endswith("::")
        block.clear()

    for ln in text.splitlines():
        if _FENCE.match(ln):
            flush()
            in_fence = not in_fence
        elif in_fence:
            continue
        elif not ln.strip() or _TEMPLATE.match(ln):
            flush()
        else:
            block.append(_QUOTE.sub("", ln.expandtabs(4)))
    flush()
    return pars


def _is_quote(block: list[str]) -> bool:
    """An indented block of plain sentences (an rST block quote, a wrapped list item), not code."""
    text = " ".join(block)
    return text.strip()[:1].isupper() and sum(c in "{}();=<>$" for c in text) == 0 and text.rstrip().endswith(".")
