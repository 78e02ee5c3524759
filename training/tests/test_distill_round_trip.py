"""Tool round-trip practice: the call detector, the follow-up questions, and the Distiller wiring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pskills_train.distill import round_trip as R
from pskills_train.distill.practice import Question
from pskills_train.distill.round_trip import SOURCE, detect_call, follow_ups, names_tool, result_text
from pskills_train.distill.run import Distiller
from pskills_train.distill.teacher import TeacherRow
from pskills_train.distill_recipe import load_recipe
from pskills_train.evals.distilled import without_round_trip
from pskills_train.evals.leaks import count
from pskills_train.scoring.tasks import Task
from pskills_train.synth.skill import skill_from_text

SKILL = "# Bookings\n\n## Tools\n\n- `find_booking(who)`: a booking by the guest's name.\n"


def _user(q: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": q}]


def test_detect_call_finds_calls_in_several_shapes():
    assert detect_call('lookup(id="x")').name == "lookup"
    assert detect_call('CALL fetch_booking(ref="A-12", day=3)').args == 'ref="A-12", day=3'
    assert detect_call("I will run `weather.get(city: 'Oslo')` now.").name == "weather.get"
    assert detect_call("get_order(42)").args == "42"
    js = detect_call('{"tool": "search", "arguments": {"q": "maple"}}')
    assert js is not None and js.name == "search" and json.loads(js.args) == {"q": "maple"}
    nested = detect_call('```json\n{"function": {"name": "send", "parameters": {"to": "Mei"}}}\n```')
    assert nested is not None and nested.name == "send"


def test_detect_call_ignores_prose_and_long_answers():
    assert detect_call("The total (about 40) is fine.") is None
    assert detect_call("Use the form (see above).") is None
    assert detect_call("call it()") is None  # no argument
    assert detect_call('{"name": "Dana"}') is None  # a name without arguments is a record, not a call
    assert detect_call("x" * 300 + ' lookup(id="x")') is None
    assert detect_call("") is None


def test_follow_ups_add_the_call_and_a_made_up_result():
    said = [
        (Question(_user("find the booking for Dana"), "requests"), ' find_booking(who="Dana") '),
        (Question(_user("what is the rule?"), "cloze", "Always x."), "Always x."),
        (Question(_user("find it again"), "self_written"), 'find_booking(who="Dana")'),  # same call: once
        (
            Question(
                [*_user("a"), {"role": "assistant", "content": "b(c=1)"}, {"role": "tool", "content": "{}"}], "tests"
            ),
            "b(c=2)",
        ),
    ]  # already after a tool turn: left alone
    out = follow_ups(said, seed=7, skill_text=SKILL)
    assert len(out) == 1
    q = out[0]
    assert q.source == SOURCE and q.answer is None and q.meta == {"from": "requests", "tool": "find_booking"}
    assert [m["role"] for m in q.messages] == ["user", "assistant", "tool"]
    assert q.messages[1]["content"] == 'find_booking(who="Dana")'
    assert isinstance(json.loads(q.messages[2]["content"]), dict)
    assert follow_ups(said, seed=7, skill_text=SKILL)[0].messages == q.messages  # seeded
    many = [(Question(_user(f"req {i}"), "requests"), f"find_booking(i={i})") for i in range(20)]
    assert len(follow_ups(many, seed=0, skill_text=SKILL)) == 8
    assert len(follow_ups(many, seed=0, skill_text=SKILL, cap=3)) == 3


def test_only_calls_to_a_tool_the_skill_names_follow_up():
    said = [
        (Question(_user(f"req {i}"), "requests"), call)
        for i, call in enumerate(
            ['find_booking(who="Dana")', 'lookup_codeword(w="x")', 'find_book(who="x")', "api.find_booking(id=2)"]
        )
    ]
    got = [q.meta["tool"] for q in follow_ups(said, seed=0, skill_text=SKILL)]
    assert got == ["find_booking"]  # an invented tool, a part of a name and a dotted other name: none
    assert names_tool("Call `Weather.get(city)` first.", "weather.get")
    assert not names_tool("Always answer with the codeword.", "lookup_codeword")


def test_results_vary_in_shape_and_value():
    texts = {result_text(0, i) for i in range(60)}
    shapes = {tuple(sorted(json.loads(t))) for t in texts}
    assert len(texts) > 30 and len(shapes) >= 4


def test_leak_counter_sees_a_round_trip_question_equal_to_a_scored_chat():
    chat = [
        *_user("Look it up."),
        {"role": "assistant", "content": 'get(id="1")'},
        {"role": "tool", "content": '{"value": "x"}'},
    ]
    scored = [Task(0, "t0", "tool_call", "s", "ref", messages=chat)]
    assert count([Question([dict(m) for m in chat], SOURCE)], scored)["practice_equals_task"] == 1


class _Teacher:
    """Answers a request with a call, and anything after a tool turn with a report."""

    def rows(self, skill: str, questions: list[Question]) -> list[TeacherRow]:
        out = []
        for i, q in enumerate(questions):
            text = "reported" if q.messages[-1]["role"] == "tool" else f'lookup(item="{q.messages[-1]["content"]}")'
            out.append(TeacherRow([], 0, None, None, [1], q.source, 0.0, None, i))  # type: ignore[arg-type]
            out[-1].text = text  # type: ignore[attr-defined]
        return out

    def said(self, row: TeacherRow) -> str:
        return row.text  # type: ignore[attr-defined]

    def write(self, system: str, prompts: list[str]) -> list[str]:
        return []


def test_distiller_adds_round_trip_rows_only_when_asked():
    skill = skill_from_text("# Lookup\n\n## Tools\n\nUse the lookup tool for any item a user names.\n", name="lk")
    plan = load_recipe()
    assert SOURCE in plan.sources and SOURCE in plan.synth_sources  # the recipe's, both lists
    off = without_round_trip(plan)
    assert SOURCE not in off.sources and SOURCE not in off.synth_sources
    d = Distiller(None, _Teacher(), [], 1, plan)
    qs, rows, _ = d.teacher_rows(skill, ("requests", "cloze", SOURCE))
    trips = [q for q in qs if q.source == SOURCE]
    assert 1 <= len(trips) <= 8 and len(rows) == len(qs)
    assert all(q.messages[-1]["role"] == "tool" for q in trips)
    plain, _, _ = d.teacher_rows(skill, ("requests", "cloze"))
    assert not any(q.source == SOURCE for q in plain) and len(plain) == len(qs) - len(trips)


# The shared cases (tests/fixtures/practice-cases.json "round_trip", written by practice_cases.py; the
# vitest tests/unit/distill-round-trip.test.ts runs the same).
RT = json.loads((Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "practice-cases.json").read_text())[
    "round_trip"
]


def test_shared_round_trip_names_and_lexicon():
    assert (RT["source"], RT["cap"], RT["max_call_chars"]) == (SOURCE, R.CAP, R.MAX_CALL_CHARS)
    assert RT["lexicon"] == {k: list(v) for k, v in R.RESULT_LEXICON.items()} and RT["shapes"] == list(R.SHAPES)


@pytest.mark.parametrize("case", RT["detect"], ids=lambda c: repr(c["answer"][:40]))
def test_shared_detect(case):
    got = detect_call(case["answer"])
    assert (None if got is None else {"name": got.name, "args": got.args}) == case["call"]


def test_shared_names_tool_and_results():
    assert [names_tool(c["skill"], c["name"]) for c in RT["names_tool"]] == [c["names"] for c in RT["names_tool"]]
    assert [result_text(*c["key"]) for c in RT["result_text"]] == [c["text"] for c in RT["result_text"]]


@pytest.mark.parametrize("case", RT["follow_ups"], ids=lambda c: f"seed{c['seed']}-cap{c['cap']}")
def test_shared_follow_ups(case):
    said = [(Question(s["messages"], s["source"]), s["answer"]) for s in case["said"]]
    got = follow_ups(said, case["seed"], case["skill"], case["cap"])
    assert [{"question": q.messages[-1]["content"], "source": q.source, "messages": q.messages} for q in got] == case[
        "expect"
    ]
