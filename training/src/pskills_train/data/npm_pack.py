"""npm packages: `npm pack` into a cache (as main/skills/sources/npm.ts) and read SKILL.md out of the .tgz.

A sidecar `<tgz>.json` keeps npm's integrity; an exact name@version whose tarball still matches it
is read again without the network. Archive rules follow sources/tgz.ts: one absolute or '..'
entry rejects the whole archive, links are never followed, files over 1 MiB, binary files and
invalid UTF-8 are skipped with a reason.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

MAX_SKILL_BYTES = 1 << 20


@dataclass
class PackedSkills:
    name: str | None
    version: str | None
    licence: str | None
    skills: dict[str, str] = field(default_factory=dict)  # path in the package -> SKILL.md text, archive order
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def split_spec(spec: str) -> tuple[str, str | None]:
    """'@scope/name@1.2.3' -> ('@scope/name', '1.2.3')."""
    at = spec.rfind("@")
    return (spec[:at], spec[at + 1:]) if at > 0 else (spec, None)


def tarball_name(name: str, version: str) -> str:
    return f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"


def _matches(tgz: Path, integrity: str | None) -> bool:
    if not integrity or "-" not in integrity:
        return False
    algo, digest = integrity.split("-", 1)
    return base64.b64encode(hashlib.new(algo, tgz.read_bytes()).digest()).decode() == digest


def npm_pack(spec: str, cache: Path) -> Path:
    """The .tgz of `spec` in `cache`, fetched with `npm pack` unless an intact copy is there."""
    cache.mkdir(parents=True, exist_ok=True)
    name, version = split_spec(spec)
    if version:
        tgz = cache / tarball_name(name, version)
        side = tgz.with_name(tgz.name + ".json")
        if tgz.exists() and side.exists() and _matches(tgz, json.loads(side.read_text()).get("integrity")):
            return tgz
    res = subprocess.run(["npm", "pack", spec, "--json", "--ignore-scripts", "--pack-destination", str(cache)],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"npm pack {spec} failed: {res.stderr.strip()[-500:]}")
    info = json.loads(res.stdout)[0]
    tgz = cache / Path(info["filename"]).name
    side = tgz.with_name(tgz.name + ".json")
    keep = {k: info.get(k) for k in ("name", "version", "integrity", "filename")}
    side.with_suffix(".tmp").write_text(json.dumps(keep, indent=2))
    os.replace(side.with_suffix(".tmp"), side)
    return tgz


def unsafe_reason(path: str) -> str | None:
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return "has an absolute path"
    if ".." in path.replace("\\", "/").split("/"):
        return "escapes the archive root with '..'"
    return None


def _read(tar: tarfile.TarFile, m: tarfile.TarInfo) -> bytes:
    f = tar.extractfile(m)
    if f is None:  # the callers pass regular files only
        raise ValueError(f"{m.name}: not a regular file")
    return f.read()


def _decode(data: bytes) -> tuple[str | None, str | None]:
    if b"\0" in data:
        return None, f"binary file (NUL byte at offset {data.index(0)})"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return None, f"invalid UTF-8 at byte offset {e.start}"


def read_skills(tgz: Path) -> PackedSkills:
    with tarfile.open(tgz, "r:gz") as tar:
        members = tar.getmembers()
        for m in members:
            why = unsafe_reason(m.name.removeprefix("./"))
            if why:
                raise ValueError(f"{tgz} rejected: entry '{m.name}' {why}; nothing was imported")
        paths = [m.name.removeprefix("./") for m in members]
        tops = {p.split("/", 1)[0] + "/" if "/" in p else p for p in paths}
        prefix = next(iter(tops)) if len(tops) == 1 and next(iter(tops)).endswith("/") else ""
        pkg_json: dict = {}
        out = PackedSkills(None, None, None)
        for m, path in zip(members, paths, strict=True):  # archive order, as tgz.ts: the first of two twins wins
            rel = path.removeprefix(prefix)
            is_skill = rel.rsplit("/", 1)[-1].lower() == "skill.md"
            if rel == "package.json" and m.isfile():
                pkg_json = json.loads(_read(tar, m).decode("utf-8", errors="replace"))
            if not is_skill:
                continue
            if m.issym() or m.islnk():
                out.skipped.append((rel, f"link entry (→ {m.linkname}) not followed"))
            elif m.isfile() and m.size > MAX_SKILL_BYTES:
                out.skipped.append((rel, f"file over 1 MiB ({m.size} bytes)"))
            elif m.isfile():
                text, why = _decode(_read(tar, m))
                if text is None:
                    out.skipped.append((rel, why or "unreadable"))
                else:
                    out.skills[rel] = text
    lic = pkg_json.get("license") or (pkg_json.get("licenses") or [None])[0]
    out.licence = lic.get("type") if isinstance(lic, dict) else lic if isinstance(lic, str) else None
    out.name, out.version = pkg_json.get("name"), pkg_json.get("version")
    return out
