"""JSON configs read into dataclasses with unknown keys refused.

Shared by the pretraining and hypernetwork configs. The recipe of a run is its config file alone;
`--set section.field=value` overrides exist for experiments and are recorded next to the file's hash
(`config_record`), so a training card says which file and which changes made the weights. Keys
starting with "_" are tolerated in files written before the notes moved to training/configs/README.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from .data.config import REPO


def read_config(path: str | Path, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON file with each override applied; a value is JSON when it parses, else a string."""
    raw = json.loads(Path(path).read_text())
    for item in overrides:
        key, _, value = item.partition("=")
        section, _, name = key.partition(".")
        if not name:
            raise ValueError(f"--set {item!r}: expected section.field=value")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        raw.setdefault(section, {})[name] = parsed
    return raw


def build(cls: type, raw: dict[str, Any], where: str) -> Any:
    """Dataclass `cls` from `raw`; an unknown field is an error naming `where`."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(k for k in raw if k not in known and not k.startswith("_"))
    if unknown:
        raise ValueError(f"{where}: unknown fields {unknown}")
    return cls(**{k: v for k, v in raw.items() if k in known})


def config_record(path: str | Path, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """What a training card keeps of the config a run read: its path (repository-relative when it can
    be), the sha256 of its bytes and any `--set` overrides."""
    p = Path(path).resolve()
    shown = str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(path)
    out: dict[str, Any] = {"path": shown, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    if overrides:
        out["set"] = list(overrides)
    return out


def repo_path(p: str | Path) -> Path:
    """A config path: absolute as given, relative to the repository root otherwise."""
    p = Path(p)
    return p if p.is_absolute() else REPO / p
