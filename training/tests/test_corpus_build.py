"""End to end corpus build on tiny local .deb and .tgz packages (no network), and on the real cache."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from npm_pack import npm_package
from pskills_train.data import doc_stage
from pskills_train.data.build_corpus import DEFAULT_CACHE, build
from pskills_train.data.config import CorpusConfig
from pskills_train.data.shards import read_split

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb not installed")

SHARED = ("Every package in the archive carries a copyright file that names the licence of each part of "
          "its contents, and the archive refuses a package whose copyright file is missing.")
GUIDE = ("Upgrading a stable release is done one release at a time: first read the release notes, then "
         "update the package lists, and only then upgrade the installed packages.")

NOTES = ("This package holds notes that explain how the archive checks the licence of every package, and what "
         "a maintainer does when such a check fails during an upload, which happens more often than expected.")


def _deb(debs: Path, name: str, files: dict[str, bytes]) -> None:
    root = debs.parent / "src" / name
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN/control").write_text(f"Package: {name}\nVersion: 1.0-1\nArchitecture: all\n"
                                         "Maintainer: Test <t@example.org>\nDescription: test docs\n")
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    deb = debs / f"{name}_1.0-1_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(deb)], check=True,
                   capture_output=True)


def _skill(name: str, line: str) -> str:
    return (f"---\nname: {name}\ndescription: A test skill.\n---\n# {name}\n\n{line} Read the steps below before "
            "you start, and check the result against the examples at the end of this file.\n")


@pytest.fixture
def world(tmp_path):
    cache = tmp_path / "cache"
    (cache / "debs").mkdir(parents=True)
    (cache / "npm").mkdir()
    dep5 = b"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nLicense: GPL-2+\n"
    page = f"<html><body><nav>Home</nav><h1>Guide</h1><p>{GUIDE}</p><p>{SHARED}</p><pre>apt upgrade</pre></body></html>"
    _deb(cache / "debs", "pkg-a", {"usr/share/doc/pkg-a/copyright": dep5,
                                   "usr/share/doc/pkg-a/html/guide.html": page.encode(),
                                   "usr/share/doc/pkg-a/html/de/guide.html": b"<p>Ein Leitfaden.</p>"})
    _deb(cache / "debs", "pkg-b", {"usr/share/doc/pkg-b/copyright": b"Released under the MIT licence.\n",
                                   "usr/share/doc/pkg-b/README.md.gz": gzip.compress(
                                       f"# Notes\n\n{SHARED}\n\n{NOTES}\n".encode())})
    npm_package(cache / "npm", "skills-a", {"skills/one/SKILL.md": _skill("one", "Write the plan first."),
                                     "skills/two/SKILL.md": _skill("two", "Write the tests first.")})
    npm_package(cache / "npm", "skills-b", {"SKILL.md": _skill("three", "Write the summary last.")})
    (tmp_path / "debs.txt").write_text("pkg-b\npkg-a\n")
    (tmp_path / "skills.txt").write_text("skills-b@1.0.0\nskills-a@1.0.0\n")
    cfg = CorpusConfig(debian_list=str(tmp_path / "debs.txt"), skills_list=str(tmp_path / "skills.txt"),
                       val_debian=["pkg-b"], val_skills=["skills-b"], shard_bytes=250, workers=1)
    return cfg, cache, tmp_path


def test_build_splits_dedups_and_is_byte_identical_when_warm(world, monkeypatch):
    cfg, cache, tmp = world
    manifest = build(cfg, tmp / "out1", cache)
    docs = list(read_split(tmp / "out1", "docs_train"))
    assert [d["id"] for d in docs] == ["pkg-a/usr/share/doc/pkg-a/html/guide.html"]
    assert docs[0]["text"] == f"Guide\n\n{GUIDE}\n\n{SHARED}"
    val = list(read_split(tmp / "out1", "docs_val"))  # pkg-b sorts after pkg-a: its copy of SHARED goes
    assert [d["text"] for d in val] == [f"Notes\n\n{NOTES}"]
    assert [r["name"] for r in read_split(tmp / "out1", "skills_train")] == ["one", "two"]
    assert [r["name"] for r in read_split(tmp / "out1", "skills_val")] == ["three"]
    a, b = manifest["debian"]
    assert (a["package"], a["version"], a["split"], a["licences"]) == ("pkg-a", "1.0-1", "docs_train", ["GPL-2+"])
    assert a["files_skipped"]["translation"] == 1
    assert (b["split"], b["licences"], b["duplicate_paragraphs"]) == ("docs_val", ["MIT"], 1)
    assert (a["copyright_from"], b["copyright_from"]) == ("pkg-a", "pkg-b")
    assert (tmp / "out1/copyright/pkg-a.copyright").read_bytes().startswith(b"Format:")
    assert manifest["split"] == {"rule": "by package, explicit lists in the corpus config",
                                 "val_debian": ["pkg-b"], "val_skills": ["skills-b"]}
    assert len(manifest["splits"]["skills_train"]["shards"]) == 2  # 250-byte shards roll over

    def no_extraction(f):
        raise AssertionError(f"warm cache re-extracted {f.rel}")

    monkeypatch.setattr(doc_stage, "_work", no_extraction)
    build(cfg, tmp / "out2", cache)
    files1 = sorted(p.relative_to(tmp / "out1") for p in (tmp / "out1").rglob("*") if p.is_file())
    files2 = sorted(p.relative_to(tmp / "out2") for p in (tmp / "out2").rglob("*") if p.is_file())
    assert files1 == files2
    for rel in files1:
        assert (tmp / "out1" / rel).read_bytes() == (tmp / "out2" / rel).read_bytes(), rel


def test_unknown_held_out_package_is_an_error(world):
    cfg, cache, tmp = world
    cfg.val_debian = ["no-such-doc"]
    with pytest.raises(ValueError, match="no-such-doc"):
        build(cfg, tmp / "out", cache)


@pytest.mark.needs_data
@pytest.mark.skipif(not list((DEFAULT_CACHE / "debs").glob("debian-faq_*.deb")),
                    reason="real Debian cache absent (run build_corpus once)")
def test_real_package_extracts_english_prose(tmp_path):
    from pskills_train.data.debian import unpack
    from pskills_train.data.extract import extract
    from pskills_train.data.files import list_doc_files

    pkg = unpack("debian-faq", DEFAULT_CACHE / "debs", tmp_path)
    files, skipped = list_doc_files(pkg.root, [], pkg.name)
    text = "\n\n".join(p for f in files for p in extract(f))
    assert len(text) > 50_000
    assert "Debian" in text and "<a href" not in text and "</p>" not in text


def test_extraction_cache_key_ignores_docstrings_and_comments(tmp_path):
    base = '"""Doc."""\n\ndef f(x):\n    """What f does."""\n    return x + 1  # why\n'
    variants = {"same": base.replace("What f does.", "Another text.").replace("# why", "# other"),
                "changed": base.replace("x + 1", "x + 2")}
    (tmp_path / "a.py").write_text(base)
    for name, src in variants.items():
        (tmp_path / f"{name}.py").write_text(src)
    key = doc_stage._code_of
    assert key(tmp_path / "a.py") == key(tmp_path / "same.py") != key(tmp_path / "changed.py")
