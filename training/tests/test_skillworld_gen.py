"""SkillWorld generation: references pass, constants and wrong skills do not, determinism, token
targets, filler sides, importability. Uses the committed fixture filler so it runs without a corpus."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from pskills_train.data.filters import body_hash, detect_non_english
from pskills_train.data.skill_md import parse_skill_md
from pskills_train.skillworld import FAMILIES, LENGTH_BUCKETS, TEST_ONLY_FAMILIES, check, generate, load
from pskills_train.skillworld.__main__ import main
from pskills_train.skillworld.filler import DEFAULT_CORPUS, DEFAULT_FIXTURE
from pskills_train.skillworld.world import DEFAULT_TOKENIZER, _filler

FIXTURE = DEFAULT_FIXTURE
TOLERANCE = 0.10


@pytest.fixture(scope="module")
def test_world():
    return generate("test", 150, seed=7, filler=FIXTURE)  # 25 skills x 4 tasks per family


def by_family(world):
    out: dict[str, list] = {}
    for t in world.tasks:
        out.setdefault(t.family, []).append(t)
    return out


def constants(world) -> list[str]:
    """Answers a model could give without reading the skill: generic ones, format skeletons, the
    most common reference of each family, and tool calls with the most frequent tool name."""
    refs = Counter(t.reference for t in world.tasks)
    out = ["", "yes", "No.", "I don't know.", "Sure, here is the answer.", "Done.",
           '{"key": "value"}', '{"answer": "invoice 4471"}', "ANSWER: invoice 4471", "<answer>invoice 4471</answer>",
           "- invoice 4471\n- order 58", "item> invoice 4471\nitem> order 58", "first, second, third, fourth",
           "CALL lookup(id=\"invoice 4471\")", "result: amber 311"]
    for fam in by_family(world).values():
        out += [r for r, _ in Counter(t.reference for t in fam).most_common(3)]
    tools = Counter(t.checker.get("name") or t.extra.get("tool") for t in world.tasks if t.extra.get("tool"))
    for name, _ in tools.most_common(2):
        task = next(t for t in world.tasks if t.extra.get("tool") == name and t.turns == "single")
        out.append(task.reference)
        out.append(f"CALL {name}()")
    out.append(refs.most_common(1)[0][0])
    return out


def test_every_family_has_100_test_tasks_and_references_pass(test_world):
    fams = by_family(test_world)
    assert set(fams) == set(FAMILIES)
    for name, tasks in fams.items():
        assert len(tasks) >= 100, name
        failing = [t.task_id for t in tasks if not check(t.checker, t.reference)]
        assert not failing, failing[:5]


def test_no_constant_answer_passes_more_than_10_percent_of_any_family(test_world):
    worst = {}
    for name, tasks in by_family(test_world).items():
        for answer in constants(test_world):
            rate = sum(check(t.checker, answer) for t in tasks) / len(tasks)
            if rate > worst.get(name, (0.0, ""))[0]:
                worst[name] = (rate, answer)
            assert rate <= 0.10, (name, answer, rate)
    print({k: round(v[0], 3) for k, v in worst.items()})


def test_another_skills_reference_fails(test_world):
    """The answer to the same question for another skill of the family (the wrong-skill adapter's
    best case) almost never passes."""
    for name, tasks in by_family(test_world).items():
        passed = total = 0
        for i, t in enumerate(tasks):
            other = tasks[(i + 4 * 7) % len(tasks)]  # a different skill: each skill has 4 consecutive tasks
            assert other.skill != t.skill
            passed += check(t.checker, other.reference)
            total += 1
        assert passed / total <= 0.02, (name, passed)


def test_near_misses_fail(test_world):
    """The shortcuts a model without the skill would take: copy the question's order, call the
    tool the question names, take the other branch, say the banned word, leave out the item."""
    for t in test_world.tasks:
        q = t.messages[0]["content"]
        if t.family == "order":
            shuffled = re.search(r"(?:to |in: |order: |what\? |desk: )(.+?)(?: the | *[.?]$)", q).group(1)
            assert not check(t.checker, shuffled.replace(" and ", ", ")), q
        elif t.family == "conditional" and t.turns == "single":
            other = next(o for o in test_world.tasks if o.skill == t.skill and o.extra["tool"] != t.extra["tool"])
            assert not check(t.checker, t.reference.replace(t.extra["tool"], other.extra["tool"]))
        elif t.family == "prohibition":
            words = next(s for s in test_world.skills if s.name == t.skill).words
            wrong = words.get("instead") or words["tool"]
            if wrong in t.reference:
                assert not check(t.checker, t.reference.replace(wrong, words["banned"])), t.task_id
            assert not check(t.checker, f"{t.reference} ({words['banned']})"), t.task_id
            assert not check(t.checker, "")
        if t.family in ("format", "codeword"):
            item = re.search(r"[a-z]+ \d{3,4}", t.reference).group(0)
            assert not check(t.checker, t.reference.replace(item, "invoice 1")), t.task_id


def test_generation_is_deterministic_and_prefix_stable():
    a = generate("val", 14, seed=3, filler=FIXTURE)
    b = generate("val", 14, seed=3, filler=FIXTURE)
    c = generate("val", 7, seed=3, filler=FIXTURE)
    d = generate("val", 7, seed=4, filler=FIXTURE)
    dump = lambda w: json.dumps([t.to_json() for t in w.tasks]) + "".join(s.text for s in w.skills)  # noqa: E731
    assert dump(a) == dump(b)
    assert [s.text for s in a.skills[:7]] == [s.text for s in c.skills]
    assert not {s.name for s in c.skills} & {s.name for s in d.skills}


@pytest.mark.parametrize("filler", ["fixture", pytest.param("corpus", marks=pytest.mark.needs_data)])
def test_length_buckets_hit_their_targets(filler):
    if filler == "corpus" and not (DEFAULT_CORPUS / "skills_val").is_dir():
        pytest.skip("data-dependent: no corpus built (training/.cache/corpus); the fixture filler case runs")
    source = FIXTURE if filler == "fixture" else DEFAULT_CORPUS
    for split in ("train", "test"):
        world = generate(split, 90, seed=1, filler=source)
        tok = _filler(source, DEFAULT_TOKENIZER).tok
        assert {s.length_bucket for s in world.skills} == set(LENGTH_BUCKETS)
        for s in world.skills:
            n = len(tok.encode(s.text, add_special_tokens=False).ids)
            assert n == s.tokens
            assert abs(n / s.length_bucket - 1) <= TOLERANCE, (s.name, s.length_bucket, n)
        depth_at = {d: [s.rule_at for s in world.skills if s.depth == d and s.length_bucket >= 1024]
                    for d in ("start", "middle", "end")}
        assert max(depth_at["start"]) < 0.15 and min(depth_at["end"]) > 0.75
        assert all(0.3 < x < 0.7 for x in depth_at["middle"])


def test_filler_comes_from_the_splits_own_packages():
    fill = _filler(FIXTURE, DEFAULT_TOKENIZER)
    side_of = {d.path: d.side for d in fill.docs}
    for split, side in (("train", "train"), ("val", "train"), ("test", "heldout")):
        world = generate(split, 30, seed=2, filler=FIXTURE)
        sources = {p for s in world.skills for p in s.filler_sources}
        assert sources and {side_of[p] for p in sources} == {side}, split


def test_test_only_family_and_wordings_stay_in_test(test_world):
    train = generate("train", 100, seed=7, filler=FIXTURE)
    assert not {t.family for t in train.tasks} & set(TEST_ONLY_FAMILIES)
    assert not any(any(t.unseen.values()) for t in train.tasks)
    seen = {(t.templates["rule"], t.templates["question"]) for t in train.tasks}
    unseen = [t for t in test_world.tasks if t.unseen["question"] or t.unseen["rule"]]
    assert len(unseen) > len(test_world.tasks) / 4
    assert not {t.templates["question"] for t in unseen if t.unseen["question"]} & {q for _, q in seen}
    assert {t.family for t in test_world.tasks if t.unseen["family"]} == set(TEST_ONLY_FAMILIES)


def test_tasks_are_short_chat_turns(test_world):
    tok = _filler(FIXTURE, DEFAULT_TOKENIZER).tok
    for t in test_world.tasks:
        roles = [m["role"] for m in t.messages]
        assert roles == (["user"] if t.turns == "single" else ["user", "assistant", "tool"])
        assert len(tok.encode(t.reference, add_special_tokens=False).ids) <= 40, t.reference
    assert Counter(t.turns for t in test_world.tasks)["multi"] >= 100


def test_skills_pass_the_importers_checks(test_world):
    names, bodies = set(), set()
    for s in test_world.skills:
        parsed = parse_skill_md(s.text)
        assert parsed.error is None and parsed.fields["name"] == s.name and parsed.fields["description"]
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", s.name)
        assert detect_non_english(parsed.body) is None
        names.add(s.name)
        bodies.add(body_hash(parsed.body))
    assert len(names) == len(bodies) == len(test_world.skills)


def test_cli_writes_a_world_and_refuses_a_foreign_folder(tmp_path: Path, capsys):
    out = tmp_path / "sw"
    args = ["generate", "--split", "test", "--seed", "5", "--out", str(out), "--filler", str(FIXTURE)]
    assert main(args + ["--n", "7"]) == 0
    world = load(out)
    assert len(world.skills) == 7 and len(world.tasks) == 28
    assert (out / "skills" / world.skills[0].name / "SKILL.md").read_text() == world.skills[0].text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 5 and manifest["lexicon"]["pool"] == "test"
    assert len(manifest["lexicon"]["pool_hash"]) == 64
    assert main(args + ["--n", "3"]) == 0  # replaces its own earlier output
    assert len(load(out).skills) == 3
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["generate", "--split", "test", "--n", "2", "--out", str(foreign), "--filler", str(FIXTURE)]) == 2
    assert "holds no SkillWorld manifest" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep me"
