"""JSON-lines metrics, one object per logged step; a resumed run first drops lines past its checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class MetricsLog:
    def __init__(self, path: Path, resume_step: int | None):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume_step is None:
            path.write_text("")
        elif path.exists():
            keep = [ln for ln in path.read_text().splitlines() if ln and json.loads(ln).get("step", 0) <= resume_step]
            path.write_text("".join(ln + "\n" for ln in keep))

    def write(self, record: dict[str, Any]) -> None:
        with open(self.path, "a") as fh:
            fh.write(json.dumps(record) + "\n")
