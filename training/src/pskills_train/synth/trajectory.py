"""Trajectories (chat messages that apply a skill) with their provenance, stored as JSONL.

One line per trajectory:
    {"skill", "skill_sha256", "source_path", "package", "synthesizer": "template"|"llm",
     "model", "endpoint" (llm only), "seed", "kind", "messages": [{"role", "content"}, ...]}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .skill import Skill

ROLES = ("system", "user", "assistant")


@dataclass
class Trajectory:
    skill: str
    skill_sha256: str
    synthesizer: str
    seed: int
    messages: list[dict[str, str]]
    kind: str = ""  # template: "single:<section kind>" or "multi:<kind>+<kind>..."; llm: "llm"
    source_path: str | None = None
    package: str | None = None
    model: str | None = None
    endpoint: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def for_skill(cls, skill: Skill, synthesizer: str, seed: int, messages: list[dict[str, str]], kind: str,
                  **kw: Any) -> Trajectory:
        return cls(skill.name, skill.sha256, synthesizer, seed, messages, kind, skill.source_path, skill.package, **kw)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["extra"]:
            del d["extra"]
        return {k: v for k, v in d.items() if v is not None}


class Synthesizer(Protocol):
    name: str

    def synthesize(self, skill: Skill) -> list[Trajectory]: ...


def write_jsonl(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Write atomically (temp file in the same folder, then rename); returns the line count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for t in trajectories:
                f.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")
                n += 1
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def read_jsonl(path: str | Path) -> list[Trajectory]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(Trajectory(**d))
    return out
