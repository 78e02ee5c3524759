"""Man page (roff source) -> paragraphs, through groff.

groff renders with a 2000-column line and hyphenation off, so every filled paragraph comes out as
one line; several lines in a row at the same indent are a no-fill block (code, synopsis, table) and
are dropped. Header and footer lines and the SYNOPSIS / SEE ALSO / COLOPHON sections go too.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from itertools import pairwise

DROP_SECTIONS = frozenset(("SYNOPSIS", "SEE ALSO", "COLOPHON", "AUTHOR", "AUTHORS", "COPYRIGHT",
                           "REPORTING BUGS", "INDEX", "SOURCE", "LICENSE"))
GROFF = ["groff", "-t", "-man", "-Tutf8", "-P-cbou", "-rHY=0", "-rLL=2000n", "-rIN=7n"]
_SECTION = re.compile(r"^[A-Z][A-Z0-9 ,/&()-]*$")


def render_man(roff: bytes, timeout: float = 30.0) -> str:
    """groff's plain-text rendering of a man page; '' when groff fails on it."""
    if shutil.which("groff") is None:
        raise RuntimeError("groff is needed to read man pages (apt-get install groff-base)")
    try:
        out = subprocess.run(GROFF, input=roff, capture_output=True, timeout=timeout, check=False).stdout
    except subprocess.TimeoutExpired:
        return ""
    return out.decode("utf-8", errors="replace")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def man_paragraphs(text: str) -> list[str]:
    lines = [ln.rstrip() for ln in text.splitlines()]
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 3:
        return []
    first, last = body[0], body[-1]  # "LS(1)  User Commands  LS(1)" and the date/version footer
    pars: list[str] = []
    section = ""
    block: list[str] = []

    def flush() -> None:
        if section not in DROP_SECTIONS and block:
            nofill = any(_indent(a) == _indent(b) for a, b in pairwise(block))
            if not nofill:
                pars.extend(ln.strip() for ln in block)
        block.clear()

    for ln in lines:
        if ln in (first, last):
            continue
        if not ln.strip():
            flush()
        elif _indent(ln) == 0 and _SECTION.match(ln):
            flush()
            section = ln.strip()
        else:
            block.append(ln)
    flush()
    return pars


def man_file_paragraphs(raw: bytes, gzipped: bool) -> list[str]:
    roff = gzip.decompress(raw) if gzipped else raw
    if roff.lstrip().startswith(b".so "):  # a link page ("see that other page"): no text of its own
        return []
    return man_paragraphs(render_man(roff))
