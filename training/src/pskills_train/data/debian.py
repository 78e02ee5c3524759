"""Debian documentation packages: `apt-get download` into a cache, `dpkg-deb -x` beside it.

Never `apt-get install` (docs/design.md §5: nodejs-doc would remove the machine's Node). The unpacked tree
is reused while its `.unpacked` marker names the same .deb file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DebPackage:
    name: str
    version: str
    deb: Path
    root: Path  # unpacked tree


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        hint = " (run `apt-get update` once)" if "Unable to locate" in res.stderr else ""
        raise RuntimeError(f"{' '.join(cmd)} failed{hint}: {res.stderr.strip()[-500:]}")
    return res.stdout


def find_deb(debs: Path, name: str) -> Path | None:
    hits = sorted(debs.glob(f"{name}_*.deb"))
    return hits[-1] if hits else None


def download(names: list[str], debs: Path) -> None:
    """Fetch every package not yet in `debs` with one apt-get call."""
    debs.mkdir(parents=True, exist_ok=True)
    missing = [n for n in names if find_deb(debs, n) is None]
    if missing:
        _run(["apt-get", "download", *missing], cwd=debs)
    still = [n for n in names if find_deb(debs, n) is None]
    if still:
        raise RuntimeError(f"apt-get download left no .deb for {still} in {debs}")


def unpack(name: str, debs: Path, trees: Path) -> DebPackage:
    deb = find_deb(debs, name)
    if deb is None:
        raise FileNotFoundError(f"no {name}_*.deb in {debs}")
    version = _run(["dpkg-deb", "-f", str(deb), "Version"]).strip()
    root = trees / name
    marker = trees / f"{name}.unpacked"
    if not (marker.exists() and marker.read_text() == deb.name and root.is_dir()):
        shutil.rmtree(root, ignore_errors=True)
        tmp = trees / f"{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _run(["dpkg-deb", "-x", str(deb), str(tmp)])
        tmp.rename(root)
        marker.write_text(deb.name)
    return DebPackage(name, version, deb, root)


def copyright_text(pkg: DebPackage, debs: Path) -> tuple[str, str]:
    """(text, source package) of usr/share/doc/<pkg>/copyright.

    Policy §12.5 lets a package's doc folder be a symlink to the folder of a package it depends on
    (zsh-doc -> zsh-common); the copyright then is that package's, fetched as a .deb of its own when
    it is not one of ours, and only that one file is read out of it.
    """
    link = pkg.root / "usr/share/doc" / pkg.name
    owner = Path(os.readlink(link)).name if link.is_symlink() else pkg.name
    own = pkg.root / "usr/share/doc" / owner / "copyright"
    if own.is_file() and not own.is_symlink():
        return own.read_text(encoding="utf-8", errors="replace"), owner
    download([owner], debs)
    deb, member = find_deb(debs, owner), f"./usr/share/doc/{owner}/copyright"
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True)
    res = subprocess.run(["tar", "-xO", member], input=tar.stdout, capture_output=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{pkg.name}: no copyright file ({member} is not in {deb})")
    return res.stdout.decode("utf-8", errors="replace"), owner


_KNOWN = [("GPL", r"\bGPL|GNU General Public"), ("LGPL", r"\bLGPL|Lesser General Public"),
          ("GFDL", r"\bGFDL|Free Documentation License"), ("BSD", r"\bBSD\b"), ("MIT", r"\bMIT\b|Expat"),
          ("Apache", r"Apache"), ("PSF", r"\bPSF|Python Software Foundation License"),
          ("PostgreSQL", r"PostgreSQL License"), ("CC-BY", r"\bCC-BY|Creative Commons"),
          ("public-domain", r"public[ -]domain"), ("Artistic", r"Artistic"), ("MPL", r"\bMPL|Mozilla Public"),
          ("verbatim-copying permission", r"Permission is granted to (make and|copy and) distribute verbatim")]


def licence_summary(text: str) -> list[str]:
    """Licence names of a copyright file: DEP-5 `License:` fields, else keywords in the prose."""
    if text.startswith("Format:"):  # machine-readable (DEP-5): the License fields say it all
        return sorted({m.strip() for m in re.findall(r"^License:[ \t]*([^\n]+)", text, re.M) if m.strip()})
    return [name for name, pattern in _KNOWN if re.search(pattern, text)] or ["unrecognised: see the copyright file"]
