"""Fixture builder: an npm package as `npm pack` leaves it in the studio's cache (main/skills/sources/npm.ts)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
from pathlib import Path


def npm_package(npm: Path, name: str, files: dict[str, str]) -> str:
    """`<name>-1.0.0.tgz` with `files` under package/, and its sidecar record; returns the spec `name@1.0.0`."""
    tgz = npm / f"{name}-1.0.0.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        for rel, text in {"package.json": json.dumps({"name": name, "version": "1.0.0", "license": "MIT"}),
                          **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    digest = base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    (npm / f"{tgz.name}.json").write_text(json.dumps({"name": name, "version": "1.0.0", "integrity": f"sha512-{digest}",
                                                      "filename": tgz.name}))
    return f"{name}@1.0.0"
