"""Skills for the corpus: the importer's `judge` (main/skills/importer.ts) over pinned npm packages.

Checks run in the importer's order: valid SKILL.md, a description, no skill- or package-level
licence that forbids reuse, English, a body not seen before (normalized hash, across all packages,
like an import into one library), a name not taken inside the same package.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .filters import body_hash, detect_non_english, licence_forbids_reuse
from .npm_pack import PackedSkills
from .skill_md import parse_skill_md


@dataclass
class Skill:
    package: str
    version: str
    path: str
    name: str
    licence: str | None
    body_hash: str
    text: str


def _folder(path: str, package: str) -> str:
    parts = path.split("/")
    return parts[-2] if len(parts) > 1 else package.split("/")[-1]


def judge(path: str, content: str, pkg: PackedSkills, package: str, seen_bodies: dict[str, str],
          seen_names: dict[str, str]) -> Skill | str:
    """The skill to keep, or why it is left out. Updates the seen maps when kept."""
    parsed = parse_skill_md(content)
    if parsed.error:
        return f"invalid SKILL.md: {parsed.error}"
    description = (parsed.fields.get("description") or "").strip()
    if not description:
        return "no 'description' in the frontmatter"
    why = licence_forbids_reuse(parsed.fields.get("license"))
    if why:
        return f"skill {why}"
    why = licence_forbids_reuse(pkg.licence)
    if why:
        return f"package {why}"
    why = detect_non_english(parsed.body)
    if why:
        return why
    h = body_hash(parsed.body)
    if h in seen_bodies:
        return f"duplicate body of {seen_bodies[h]}"
    name = (parsed.fields.get("name") or "").strip() or _folder(path, package)
    if name in seen_names:
        return f"another skill named '{name}' ({seen_names[name]}) is already in this package"
    seen_bodies[h] = f"{package}:{path}"
    seen_names[name] = path
    text = content.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    return Skill(package, pkg.version or "", path, name, parsed.fields.get("license") or pkg.licence, h, text)


def _category(reason: str) -> str:
    """'not English: 54% of ...' -> 'not English' (manifest counts by the first two words)."""
    return " ".join(reason.split()[:2]).rstrip(":")


def select_skills(package: str, pkg: PackedSkills, seen_bodies: dict[str, str]) -> tuple[list[Skill], Counter]:
    """Kept skills of one package (archive order) and a count of skip reasons (first words)."""
    kept: list[Skill] = []
    reasons: Counter = Counter(_category(why) for _, why in pkg.skipped)
    seen_names: dict[str, str] = {}
    for path, content in pkg.skills.items():
        res = judge(path, content, pkg, package, seen_bodies, seen_names)
        if isinstance(res, Skill):
            kept.append(res)
        else:
            reasons[_category(res)] += 1
    return kept, reasons
