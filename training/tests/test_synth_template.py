"""Template synthesizer, section parsing and trajectory JSONL (stage-2 data, docs/design.md §1)."""

from __future__ import annotations

import json

import pytest
import torch

from pskills_train.synth import (
    TemplateSynthesizer,
    Trajectory,
    find_sections,
    load_skills,
    read_jsonl,
    section_kind,
    skill_from_text,
    write_jsonl,
)
from pskills_train.synth.__main__ import main as synth_main

torch.set_num_threads(1)

SKILL = """---
name: git-tidy
description: Tidy a git branch before review by squashing fixups and rebasing on main.
---

# Git tidy

Keep history readable.

## When to use

- Before opening a pull request with fixup commits.
- After a long-lived branch drifted from main.

## Workflow

1. Fetch main: `git fetch origin main`.
2. Rebase interactively: `git rebase -i --autosquash origin/main`.
3. Run the tests again.

```bash
# not a heading, a comment in code
git push --force-with-lease
```

### Conflicts

Resolve each conflict, `git add` it, then `git rebase --continue`.

## Common mistakes

Never force-push a shared branch without --force-with-lease.

## Glossary

Autosquash: git's ordering of fixup! commits next to their targets.
"""


def test_sections_skip_code_fences_and_nest():
    s = skill_from_text(SKILL, "pkg/git-tidy/SKILL.md")
    heads = [(x.heading, x.level) for x in s.sections]
    assert heads == [("Git tidy", 1), ("When to use", 2), ("Workflow", 2), ("Conflicts", 3), ("Common mistakes", 2),
                     ("Glossary", 2)]
    wf = next(x for x in s.sections if x.heading == "Workflow")
    assert "git rebase --continue" in wf.body(s.text)  # the section holds its subsection
    assert "## Common mistakes" not in wf.body(s.text)
    assert s.name == "git-tidy" and s.description.startswith("Tidy a git branch")
    assert find_sections("no headings at all\n") == []


@pytest.mark.parametrize("heading,kind", [
    ("When to use", "when_to_use"), ("When to Use This Skill", "when_to_use"), ("Usage", "when_to_use"),
    ("When NOT to use", "when_not_to_use"), ("Steps", "steps"), ("Workflow", "steps"), ("Instructions", "steps"),
    ("Step-by-step guide", "steps"), ("Examples", "examples"), ("Usage Examples", "examples"),
    ("Pitfalls", "pitfalls"), ("Common mistakes", "pitfalls"), ("Gotchas", "pitfalls"), ("Anti-Patterns", "pitfalls"),
    ("Constraints", "constraints"), ("Rules", "constraints"), ("🚨 Key Rules", "constraints"),
    ("Glossary", "other"), ("Architecture", "other")])
def test_section_kinds(heading, kind):
    assert section_kind(heading) == kind


def test_template_trajectories():
    skill = skill_from_text(SKILL, "pkg/git-tidy/SKILL.md", package="pkg")
    ts = TemplateSynthesizer(seed=0).synthesize(skill)
    kinds = [t.kind for t in ts]
    assert {"single:about", "single:when_to_use", "single:steps", "single:pitfalls", "single:other"} <= set(kinds)
    assert "single:steps" in kinds and not any("Git tidy" in t.messages[0]["content"] for t in ts)  # title skipped
    steps = next(t for t in ts if t.kind == "single:steps" and "Workflow" not in t.messages[0]["content"])
    assert steps.messages[1]["content"].startswith("1. Fetch main")
    assert "git-tidy" in steps.messages[0]["content"]
    multi = [t for t in ts if t.kind.startswith("multi:")]
    assert multi and multi[0].kind == "multi:when_to_use+steps+pitfalls"
    for t in ts:
        assert [m["role"] for m in t.messages] == ["user", "assistant"] * (len(t.messages) // 2)
        assert all(m["content"].strip() for m in t.messages)
        assert t.skill == "git-tidy" and t.skill_sha256 == skill.sha256 and t.package == "pkg"
        assert t.synthesizer == "template"
    # deterministic for a seed; another seed changes some phrasing but not the answers
    again = TemplateSynthesizer(seed=0).synthesize(skill)
    assert [t.messages for t in again] == [t.messages for t in ts]
    other = TemplateSynthesizer(seed=5).synthesize(skill)
    assert [t.messages[1] for t in other if t.kind.startswith("single")] == \
           [t.messages[1] for t in ts if t.kind.startswith("single")]
    assert [t.messages[0] for t in other] != [t.messages[0] for t in ts]


def test_skill_without_sections_still_gets_a_question():
    s = skill_from_text("---\nname: tiny\ndescription: Say hello politely.\n---\nJust greet the user.\n")
    ts = TemplateSynthesizer().synthesize(s)
    assert [t.kind for t in ts] == ["single:about"] and ts[0].messages[1]["content"] == "Say hello politely."


def test_jsonl_atomic_roundtrip(tmp_path):
    skill = skill_from_text(SKILL, "a/SKILL.md")
    ts = TemplateSynthesizer().synthesize(skill)
    out = tmp_path / "sub" / "t.jsonl"
    assert write_jsonl(out, ts) == len(ts)
    assert [p.name for p in out.parent.iterdir()] == ["t.jsonl"]  # no temp file left behind
    line = json.loads(out.read_text().splitlines()[0])
    assert {"skill", "skill_sha256", "source_path", "synthesizer", "seed", "messages", "kind"} <= set(line)
    assert [t.messages for t in read_jsonl(out)] == [t.messages for t in ts]

    def boom():
        yield ts[0]
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_jsonl(out, boom())
    assert len(read_jsonl(out)) == len(ts)  # the old file is untouched
    assert [p.name for p in out.parent.iterdir()] == ["t.jsonl"]


def test_cli_on_folder_and_corpus_split(tmp_path, capsys):
    (tmp_path / "skills" / "git-tidy").mkdir(parents=True)
    (tmp_path / "skills" / "git-tidy" / "SKILL.md").write_text(SKILL)
    assert synth_main(["--skills", str(tmp_path / "skills"), "--out", str(tmp_path / "a.jsonl")]) == 0
    a = read_jsonl(tmp_path / "a.jsonl")
    assert a and a[0].source_path == "git-tidy/SKILL.md"
    split = tmp_path / "skills_train"
    split.mkdir()
    rec = {"id": "pkg/git-tidy/SKILL.md", "package": "pkg", "version": "1.0.0", "name": "git-tidy", "text": SKILL}
    (split / "skills_train-00000.jsonl").write_text(json.dumps(rec) + "\n")
    assert synth_main(["--skills", str(split), "--out", str(tmp_path / "b.jsonl"), "--seed", "0"]) == 0
    b = read_jsonl(tmp_path / "b.jsonl")
    assert [t.messages for t in b] == [t.messages for t in a] and b[0].package == "pkg"
    assert len(load_skills(split)) == 1
    assert isinstance(b[0], Trajectory)
