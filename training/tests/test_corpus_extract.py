"""Corpus extraction on small synthetic inputs: HTML, man pages, plain text, paths, prose filters."""

from __future__ import annotations

import gzip
import re
import shutil

import pytest

from pskills_train.data.files import list_doc_files, translation
from pskills_train.data.html_text import html_paragraphs
from pskills_train.data.man_text import man_file_paragraphs
from pskills_train.data.plain_text import text_paragraphs
from pskills_train.data.prose import filter_paragraphs, is_code_like

PROSE = ("The package manager keeps a list of the files that each package installed, so that removing "
         "a package never leaves files behind on the system.")

PAGE = f"""<!DOCTYPE html><html><head><title>Title only in head</title>
<style>body {{ color: red }}</style><script>var navScript = 1;</script></head>
<body><nav><a href="/">Home</a> <a href="/next">Next page</a></nav>
<div class="sphinxsidebar"><p>Sidebar search box text</p></div>
<div role="navigation">Breadcrumb trail text</div>
<h1>Package files</h1>
<p>{PROSE}</p>
<p>Call <code>dpkg -L</code> with the name of a package to see its files.</p>
<div class="highlight"><pre>for f in $(dpkg -L bash); do echo "$f"; done</pre></div>
<ul class="simple"><li><a href="a.html">Chapter one</a></li><li><a href="b.html">Chapter two</a></li></ul>
<table><tr><td>cell 1</td><td>cell 2</td></tr></table>
<p>Unclosed paragraph that ends the page
</body></html>"""


def test_html_keeps_prose_and_drops_navigation_code_and_tables():
    pars = html_paragraphs(PAGE)
    text = "\n".join(pars)
    assert PROSE in pars
    assert "Call dpkg -L with the name of a package to see its files." in pars  # inline code stays
    assert "Package files" in pars
    assert "Unclosed paragraph that ends the page" in pars
    for gone in ("Title only", "navScript", "color: red", "Next page", "Sidebar search", "Breadcrumb",
                 "echo", "Chapter one", "cell 1"):
        assert gone not in text, gone


MAN = rb""".TH DEMO 1 "2024-01-01" "demo 1.0" "User Commands"
.SH NAME
demo \- show what a man page extractor keeps
.SH SYNOPSIS
.B demo
[\fB\-v\fR] \fIfile\fR
.SH DESCRIPTION
.B demo
reads the named file and prints a summary of its contents to the standard output, one line for every
section that it finds in the file.
.PP
The following example prints the summary of a file:
.PP
.nf
.RS
demo \-v /etc/passwd | sort
grep root /etc/passwd
.RE
.fi
.SH OPTIONS
.TP
.B \-v
Print every line of the summary together with the number of the line it came from.
.SH SEE ALSO
.BR cat (1),
.BR sort (1)
"""


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff not installed")
def test_man_page_keeps_description_drops_synopsis_code_and_see_also():
    pars = man_file_paragraphs(gzip.compress(MAN), gzipped=True)
    text = "\n".join(pars)
    assert "demo - show what a man page extractor keeps" in pars
    assert any(p.startswith("demo reads the named file and prints a summary") for p in pars)
    # a tag shorter than the indent shares its line with the body, as `man` shows it
    assert "-v Print every line of the summary together with the number of the line it came from." in \
        filter_paragraphs(pars)
    for gone in ("[-v]", "/etc/passwd", "cat(1)", "User Commands", "2024-01-01"):
        assert gone not in text, gone
    assert man_file_paragraphs(b".so man1/other.1\n", gzipped=False) == []


def test_plain_text_drops_code_blocks_directives_and_frontmatter():
    src = ("---\ntitle: x\n---\n\nUsage\n=====\n\nRun it like this::\n\n  make install\n\n"
           ".. code-block:: sh\n\n   ./configure\n\n```\nrm -rf /\n```\n\n"
           "Use **make** to build, see :ref:`the guide <guide>`.\n\n    int main(void) { return 0; }\n")
    assert text_paragraphs(src) == ["Usage", "Run it like this:", "Use make to build, see the guide."]


@pytest.mark.parametrize("path,expected", [
    ("usr/share/doc/debian-handbook/html/de-DE/index.html", True),
    ("usr/share/doc/linux-doc/html/translations/it_IT/index.html", True),
    ("usr/share/man/fr/man1/ls.1.gz", True),
    ("usr/share/doc/maint-guide/html/index.ja.html", True),
    ("usr/share/doc/debian/FAQ/faq.zh-cn.txt.gz", True),
    ("usr/share/doc/debian-handbook/html/en-US/index.html", False),
    ("usr/share/doc/maint-guide/html/index.en.html", False),
    ("usr/share/doc/rust-doc/html/std/io/index.html", False),
    ("usr/share/doc/rust-doc/html/std/cmp/fn.ne.html", False),
])
def test_translation_paths(path, expected):
    assert translation(path) is expected


def test_file_listing_skips_translations_html_sources_links_and_skip_paths(tmp_path):
    root = tmp_path / "pkg"
    for rel in ("usr/share/doc/pkg/html/guide.html", "usr/share/doc/pkg/html/fr/guide.html",
                "usr/share/doc/pkg/html/_sources/guide.txt", "usr/share/doc/pkg/guide.rst.gz",
                "usr/share/doc/pkg/README", "usr/share/doc/pkg/changelog.gz", "usr/share/doc/pkg/logo.png",
                "usr/share/man/man1/tool.1.gz", "usr/share/doc/pkg/html/search.html"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"x")
    (root / "usr/share/doc/pkg/NOTES.txt").symlink_to("/etc/hostname")
    files, skipped = list_doc_files(root, [re.compile(r"/search\.html$"), re.compile("/_sources/")], "pkg")
    assert [(f.rel, f.kind) for f in files] == [
        ("usr/share/doc/pkg/README", "text"),
        ("usr/share/doc/pkg/html/guide.html", "html"),
        ("usr/share/man/man1/tool.1.gz", "man"),
    ]
    assert skipped == {"translation": 1, "skip_paths": 2, "html_source": 1, "symlink": 1}


def test_prose_filter_drops_code_tables_and_other_languages():
    german = ("Die Paketverwaltung speichert für jedes Paket eine Liste der Dateien, die es installiert hat, "
              "damit beim Entfernen eines Pakets keine Dateien auf dem System zurückbleiben und nichts fehlt.")
    kept = filter_paragraphs([PROSE, "if (x < 0) { return -1; }", "1.0 2.5 3.7 4.1 5.9 6.2", german,
                              "Installing   software\n  packages"])
    assert kept == [PROSE, "Installing software packages"]
    assert is_code_like("$ sudo apt-get install vim")
    assert not is_code_like(PROSE)
