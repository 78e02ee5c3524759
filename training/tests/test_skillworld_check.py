"""The Python checker against the case file the TypeScript checker also runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pskills_train.skillworld.check import SpecError, check

CASE_FILE = Path(__file__).resolve().parents[2] / "tests/fixtures/skillworld/checker-cases.json"
CASES = json.loads(CASE_FILE.read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_shared_case(case):
    if case["expect"] == "error":
        with pytest.raises(SpecError):
            check(case["spec"], case["answer"])
    else:
        assert check(case["spec"], case["answer"]) is case["expect"]


def test_errors_name_the_field():
    with pytest.raises(SpecError, match=r"spec\.of\[1\]\.pattern: .*lookahead|spec\.of\[1\]\.pattern: group at 0"):
        check({"kind": "all", "of": [{"kind": "min_words", "n": 1}, {"kind": "regex", "pattern": "(?=a)"}]}, "a")
