"""A skill as the synthesizers and the eval see it: frontmatter, text and its markdown sections.

Headings are read like the studio's `buildSections` (main/skills/sections.ts): ATX headings outside
fenced code blocks; a section runs to the next heading of the same or a higher level, so it holds
its subsections. Setext headings and HTML are rare in SKILL.md files and are not recognised.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..data.skill_md import parse_skill_md

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass
class Section:
    heading: str  # heading text without the '#' marks
    level: int
    start: int  # char offset of the heading line in Skill.text
    body_start: int  # char offset just after the heading line
    end: int  # char offset where the section (with its subsections) ends

    def body(self, text: str) -> str:
        return text[self.body_start:self.end].strip("\n")


@dataclass
class Skill:
    name: str
    description: str
    text: str  # the SKILL.md text exactly as stored
    source_path: str | None = None
    package: str | None = None
    sections: list[Section] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def find_sections(text: str) -> list[Section]:
    """Every heading of `text` (frontmatter included in offsets), in document order."""
    flat: list[tuple[str, int, int, int]] = []  # heading, level, start, body_start
    pos, fence = 0, None
    for line in text.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
        elif fence is not None and m and m.group(1).startswith(fence):
            fence = None
        elif fence is None:
            h = _ATX.match(line.rstrip("\r\n"))
            if h and h.group(2).strip():
                flat.append((_plain(h.group(2)), len(h.group(1)), pos, pos + len(line)))
        pos += len(line)
    out: list[Section] = []
    for i, (heading, level, start, body_start) in enumerate(flat):
        end = next((s for _, lv, s, _ in flat[i + 1:] if lv <= level), len(text))
        out.append(Section(heading, level, start, body_start, end))
    return out


def _plain(heading: str) -> str:
    """Inline markdown off a heading: `code`, **bold**, [link](url) -> their text."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[*_`]+", "", heading).strip()


def skill_from_text(text: str, source_path: str | None = None, package: str | None = None,
                    name: str | None = None) -> Skill:
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    parsed = parse_skill_md(text)
    fm = parsed.fields if not parsed.error else {}
    folder = Path(source_path).parent.name if source_path else None
    nm, desc = fm.get("name"), fm.get("description")
    nm = nm.strip() if isinstance(nm, str) else ""
    desc = desc if isinstance(desc, str) else ""
    body_offset = len(text) - len(parsed.body) if parsed.body and text.endswith(parsed.body) else 0
    sections = [s for s in find_sections(text) if s.start >= body_offset]
    return Skill(name=nm or name or folder or "skill", description=" ".join(desc.split()), text=text,
                 source_path=source_path, package=package, sections=sections)


def load_skills(path: str | Path) -> list[Skill]:
    """SKILL.md files under a folder (recursive, sorted), or corpus JSONL records (a .jsonl file or a
    split folder of them, e.g. training/.cache/corpus/skills_train: {id, package, name, text})."""
    path = Path(path)
    if path.is_file() and path.suffix == ".jsonl":
        return _from_jsonl([path])
    if path.is_file():
        return [skill_from_text(path.read_text(encoding="utf-8"), str(path))]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    md = sorted(_skill_files(path))
    if md:
        return [skill_from_text(p.read_text(encoding="utf-8"), str(p.relative_to(path))) for p in md]
    return _from_jsonl(sorted(path.glob("*.jsonl")))


def _skill_files(root: Path) -> list[Path]:
    """SKILL.md files under root, following symlinked folders (each real folder once)."""
    out, seen = [], set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        out += [Path(dirpath) / f for f in filenames if f.lower() == "skill.md"]
    return out


def _from_jsonl(files: list[Path]) -> list[Skill]:
    out = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            out.append(skill_from_text(r["text"], r.get("id") or r.get("path"), r.get("package"), r.get("name")))
    return out
