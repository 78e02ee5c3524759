"""HTML page -> paragraphs of prose (stdlib html.parser, one pass, no DOM).

Dropped whole: script/style/head, navigation (nav, header, footer, role=navigation, the usual
Sphinx/DocBook/rustdoc navigation classes), code (pre, signatures, highlighted blocks), tables
and forms. A block whose text is mostly link text is a table-of-contents or index entry and is
dropped too. Inline markup (a, em, code inside a sentence) keeps its text.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from .plain_text import text_paragraphs

DROP_TAGS = frozenset(("script", "style", "head", "title", "nav", "header", "footer", "aside", "pre", "table",
                       "form", "button", "select", "textarea", "svg", "math", "noscript", "template", "iframe",
                       "object", "map", "samp", "kbd"))
DROP_ROLES = frozenset(("navigation", "search", "banner", "contentinfo", "toolbar", "menu"))
DROP_CLASSES = frozenset((
    # Sphinx
    "sphinxsidebar", "related", "headerlink", "toctree-wrapper", "contents", "sig", "highlight",
    "footer", "breadcrumbs", "wy-nav-side", "rst-footer-buttons", "prev-next-area", "bd-sidebar",
    "bd-toc", "genindex-jumpbox", "linenodiv", "viewcode-link", "searchbox", "prev-next-bottom",
    # DocBook
    "navheader", "navfooter", "docnav", "toc", "list-of-tables", "list-of-figures", "programlisting",
    "screen", "synopsis", "cmdsynopsis", "funcsynopsis", "indexterm", "index",
    # rustdoc
    "code-header", "srclink", "rightside", "since", "notable-traits", "anchor", "sidebar-elems",
    "item-decl", "out-of-band", "hideme", "example-wrap", "docblock-short", "search-form", "test-arrow",
    # generic
    "navigation", "navbar", "nav", "menu", "breadcrumb", "toc-wrapper", "table-of-contents",
    "copyright", "skip-link",
))
DROP_IDS = frozenset(("toc", "sidebar", "navigation", "nav", "header", "footer", "searchbox", "search",
                      "breadcrumbs", "menu", "TOC", "leftmenu", "quick-summary"))
BLOCK_TAGS = frozenset(("p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
                        "blockquote", "section", "article", "main", "body", "br", "hr", "figure", "figcaption",
                        "caption", "tr", "td", "th", "details", "summary", "center", "address"))
VOID_TAGS = frozenset(("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                       "source", "track", "wbr"))
LINK_SHARE = 0.5  # blocks with more of their text inside <a> are navigation
PRE_PAGE_CHARS = 2000
_VIM_TAGS = re.compile(r"[|*]([^\s|*]+)[|*]")  # Vim help's |link| and *anchor* markers


def _dropped(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    if tag in DROP_TAGS:
        return True
    a = dict(attrs)
    if (a.get("role") or "") in DROP_ROLES or (a.get("id") or "") in DROP_IDS:
        return True
    if tag == "code" and "sig" in (a.get("class") or ""):
        return True
    return any(c in DROP_CLASSES for c in (a.get("class") or "").split())


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, drops its content)
        self.dropping = 0  # open dropped elements
        self.pre_open = 0  # open <pre> elements
        self.pre_text: list[str] = []  # text inside <pre> and nothing else dropped
        self.links = 0  # open <a> elements
        self.buf: list[str] = []
        self.link_chars = 0
        self.blocks: list[str] = []

    def _flush(self) -> None:
        text = " ".join("".join(self.buf).split())
        if text and self.link_chars <= LINK_SHARE * len(text):
            self.blocks.append(text)
        self.buf, self.link_chars = [], 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCK_TAGS:
            self._flush()
        if tag in VOID_TAGS:
            return
        drop = _dropped(tag, attrs)
        self.stack.append((tag, drop))
        self.dropping += drop
        self.links += tag == "a"
        self.pre_open += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCK_TAGS:
            self._flush()
        if not any(t == tag for t, _ in self.stack):
            return  # stray end tag
        while self.stack:  # closing an element closes the unclosed ones inside it
            t, drop = self.stack.pop()
            self.dropping -= drop
            self.links -= t == "a"
            self.pre_open -= t == "pre"
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.dropping:
            if self.dropping == self.pre_open:
                self.pre_text.append(data)
            return
        self.buf.append(data)
        if self.links:
            self.link_chars += len(" ".join(data.split()))

    def close(self) -> None:
        super().close()
        self._flush()


def decode_html(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # old pages in Latin-1 / Windows-1252
        return raw.decode("cp1252", errors="replace")


def html_paragraphs(html: str) -> list[str]:
    """Text blocks of the page in document order, whitespace collapsed, navigation and code dropped.

    A page that is one big <pre> (Vim's help as HTML, some README renderings) is read as plain text
    instead, where code is told apart by indentation.
    """
    p = _Extractor()
    p.feed(html)
    p.close()
    pre = "".join(p.pre_text)
    if len(pre) > PRE_PAGE_CHARS and sum(map(len, p.blocks)) < 0.2 * len(pre):
        return text_paragraphs(_VIM_TAGS.sub(r"\1", pre))
    return p.blocks
