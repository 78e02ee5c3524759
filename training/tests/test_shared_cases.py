"""The Python copies of the importer's English test, body normalization and frontmatter reading
(data/filters.py for the Debian docs, data/skill_md.py for synth and SkillWorld) on the cases the
TypeScript suite runs too (tests/fixtures/skills/shared-cases.json, tests/unit/skills/shared-cases.test.ts).
A case flagged `divergence` must give its `python` value, and must still differ from the TypeScript's
`expect`, so a divergence that has gone away fails here until its flag is removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pskills_train.data.filters import detect_non_english, normalize_body
from pskills_train.data.skill_md import parse_skill_md

CASES = json.loads((Path(__file__).resolve().parents[2] / "tests/fixtures/skills/shared-cases.json").read_text())


def _want(case: dict[str, Any], ts: Any) -> Any:
    div = case.get("divergence")
    if div is None:
        return ts
    assert div["python"] != ts, f"{case['id']}: flagged as a divergence but Python now agrees; drop the flag"
    return div["python"]


@pytest.mark.parametrize("case", CASES["language"], ids=lambda c: c["id"])
def test_language(case):
    assert detect_non_english(case["body"]) == _want(case, case["expect"])


def test_normalize():
    for case in CASES["normalize"]:
        assert normalize_body(case["text"]) == case["expect"], repr(case["text"])


@pytest.mark.parametrize("case", CASES["frontmatter"], ids=lambda c: c["id"])
def test_frontmatter(case):
    parsed = parse_skill_md(case["content"])
    got: dict[str, Any] = {"error": parsed.error is not None}
    if parsed.error is None:
        fields = ("name", "description", "license")
        got["fields"] = {k: parsed.fields[k] for k in fields if parsed.fields.get(k) is not None}
    ts = {k: case[k] for k in ("error", "fields") if k in case}
    assert got == _want(case, ts)
