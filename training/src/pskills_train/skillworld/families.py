"""Rule families: each builds the skill's rule sections and tasks whose checker only that skill passes.

Every checker needs a skill-specific nonce word (a key, label, codeword, tool, step or replacement
word) and, where there is one, the item the question carries, so no constant answer passes more
than the few tasks of one skill.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from . import templates as T
from .lexicon import Lexicon

FAMILIES = ("format", "codeword", "tool_call", "order", "conditional", "prohibition")
TEST_ONLY_FAMILIES = ("conditional",)
TOOL_FAMILIES = ("tool_call", "conditional", "prohibition")
SYNTAX = set("^$\\.*+?()[]{}|/")


@dataclass
class Draft:
    turns: str  # "single" | "multi"
    messages: list[dict[str, str]]
    reference: str
    checker: dict
    question_template: str
    unseen_question: bool
    extra: dict = field(default_factory=dict)


@dataclass
class Rule:
    family: str
    variant: str
    sections: str  # markdown of the rule block: Tools / Steps / Rules / Examples
    rule_template: str
    unseen_rule: bool
    drafts: list[Draft]
    words: dict[str, str]  # role -> nonce word


@dataclass
class Ctx:
    rng: random.Random
    split: str
    lex: Lexicon
    team: str
    topic: str
    n_tasks: int
    slots_used: set[str] = field(default_factory=set)
    n_practice: int = 0  # practice drafts after the eval drafts: same rule, new instances (docs/skillworld.md)
    practice_rng: random.Random | None = None
    practicing: bool = False
    results_used: set[str] = field(default_factory=set)

    def rounds(self) -> Iterator[int]:
        """Draft indices: n_tasks eval drafts from the world's rng, then n_practice ones from a separate
        rng, so adding practice never changes a world's skills or its eval tasks. Slots stay unique over
        both (slots_used), and practice results avoid every result drawn before (results_used), so no
        practice question or answer repeats an eval instance."""
        yield from range(self.n_tasks)
        if not self.n_practice:
            return
        main, self.rng, self.practicing = self.rng, self.practice_rng or random.Random(0), True
        try:
            yield from range(self.n_tasks, self.n_tasks + self.n_practice)
        finally:
            self.rng, self.practicing = main, False

    def word(self) -> str:
        return self.lex.draw(self.rng)

    def slot(self) -> str:
        while True:
            s = f"{self.rng.choice(T.SLOT_NOUNS)} {self.rng.randint(100, 9999)}"
            if s not in self.slots_used:
                self.slots_used.add(s)
                return s

    def result(self) -> str:
        # Eval results are drawn as they always were (a world's tasks never change); a practice result
        # is redrawn until it is new, so no practice report line equals an eval answer.
        while True:
            r = f"{self.rng.choice(T.RESULT_WORDS)} {self.rng.randint(10, 999)}"
            if not (self.practicing and r in self.results_used):
                self.results_used.add(r)
                return r

    def fill(self, text: str, **kw: str) -> str:
        return text.format(team=self.team, topic=self.topic, **kw)

    def pick(self, table: list[T.Entry]) -> tuple[str, str, bool]:
        return T.pick(self.rng, table, self.split)


def lit(s: str) -> str:
    """s as a literal in the checker regex subset."""
    return "".join("\\" + c if c in SYNTAX else c for c in s)


def call(tool: str, arg: str, value: str) -> str:
    return f'CALL {tool}({arg}="{value}")'


def user(q: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": q}]


def _text_example(question: str, reply: str) -> str:
    if "\n" in reply:
        return f"## Examples\n\nRequest: {question}\n\nReply:\n\n```text\n{reply}\n```"
    return f"## Examples\n\nRequest: {question}\nReply: `{reply}`"


def _tools(*lines: tuple[str, str, str]) -> str:
    """## Tools with one line per (tool, arg, what it looks up). Tool families show no example: the
    call line already spells the syntax, and an example would not fit the 256-token bucket."""
    return "## Tools\n\n" + "\n".join(T.TOOL_LINE.format(call=call(t, a, "<id>"), what=w) for t, a, w in lines)


def _rules(rule: str) -> str:
    return f"## Rules\n\n- {rule}"


def _word_in(word: str) -> dict:
    return {"kind": "contains", "value": word, "word": True, "ignore_case": True}


def format_rule(c: Ctx) -> Rule:
    variant = c.rng.choice(tuple(T.FORMAT_RULES))
    key = c.word()
    label, marker = key.upper(), key
    rid, rtext, r_unseen = c.pick(T.FORMAT_RULES[variant])
    rule = c.fill(rtext, key=key, label=label, marker=marker)

    def answer(items: list[str]) -> tuple[str, dict]:
        s = lit(items[0])
        if variant == "json_key":
            pattern = f'^\\{{\\s*"{key}"\\s*:\\s*"{s}"\\s*\\}}$'
            return f'{{"{key}": "{items[0]}"}}', {"kind": "regex", "pattern": pattern, "flags": "i"}
        if variant == "label_line":
            return f"{label}: {items[0]}", {"kind": "regex", "pattern": f"^{label}: *{s}\\.?$"}
        if variant == "tag_wrap":
            return f"<{key}>{items[0]}</{key}>", {"kind": "regex", "pattern": f"^<{key}>\\s*{s}\\s*<\\/{key}>$",
                                                   "flags": "i"}
        lines = "[ \\t]*\\n+".join(f"{marker}> *{lit(i)}" for i in items)
        return "\n".join(f"{marker}> {i}" for i in items), {"kind": "regex", "pattern": f"^{lines}$", "flags": "i"}

    table = T.LIST_QUESTIONS if variant == "marker_list" else T.FORMAT_QUESTIONS

    def question(items: list[str], tmpl: str) -> str:
        joined = ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]
        return c.fill(tmpl, slot=items[0], items=joined)

    def items() -> list[str]:
        return [c.slot() for _ in range(c.rng.randint(2, 3) if variant == "marker_list" else 1)]

    ex = items()
    example = _text_example(question(ex, table[0][2]), answer(ex)[0])
    drafts = []
    for _ in c.rounds():
        its = items()
        qid, qtext, q_unseen = c.pick(table)
        ref, spec = answer(its)
        drafts.append(Draft("single", user(question(its, qtext)), ref, spec, qid, q_unseen))
    return Rule("format", variant, f"{_rules(rule)}\n\n{example}", rid, r_unseen, drafts, {"key": key})


def codeword_rule(c: Ctx) -> Rule:
    variant = c.rng.choice(tuple(T.CODEWORD_RULES))
    code = c.word()
    rid, rtext, r_unseen = c.pick(T.CODEWORD_RULES[variant])

    def answer(slot: str) -> tuple[str, dict]:
        if variant == "start":
            ref, pos = f"{code}: {slot} is noted.", f"^\\W*{code}\\b"
        else:
            ref, pos = f"{slot} is noted. {code}", f"\\b{code}\\W*$"
        return ref, {"kind": "all", "of": [{"kind": "regex", "pattern": pos, "flags": "i"}, _word_in(slot)]}

    ex = c.slot()
    example = _text_example(c.fill(T.CODEWORD_QUESTIONS[0][2], slot=ex), answer(ex)[0])
    drafts = []
    for _ in c.rounds():
        slot = c.slot()
        qid, qtext, q_unseen = c.pick(T.CODEWORD_QUESTIONS)
        ref, spec = answer(slot)
        drafts.append(Draft("single", user(c.fill(qtext, slot=slot)), ref, spec, qid, q_unseen))
    return Rule("codeword", variant, f"{_rules(c.fill(rtext, code=code))}\n\n{example}", rid, r_unseen, drafts,
                {"code": code})


def _report_spec(report: str, value: str) -> dict:
    return {"kind": "regex", "pattern": f"^{report}: *{lit(value)}\\.?$", "flags": "i"}


def _tool_drafts(c: Ctx, table: list[T.Entry], arg: str, report: str, pick_tool: Callable[[int], tuple[str, dict]],
                 wrap: Callable[[dict], dict] = lambda s: s) -> list[Draft]:
    """Single-turn tasks answer with the call; multi-turn ones get the call and the tool's result and
    answer with the report line. pick_tool(j) -> (tool, fields for the question template)."""
    drafts = []
    for j in c.rounds():
        slot = c.slot()
        tool, fields = pick_tool(j)
        qid, qtext, q_unseen = c.pick(table)
        msgs = user(c.fill(qtext, slot=slot, **fields))
        extra = {"tool": tool}
        if (j // 2) % 2 == 0:
            ref = call(tool, arg, slot)
            spec = {"kind": "tool_call", "name": tool, "args": {arg: slot}}
            drafts.append(Draft("single", msgs, ref, wrap(spec), qid, q_unseen, extra))
        else:
            value = c.result()
            msgs += [{"role": "assistant", "content": call(tool, arg, slot)},
                     {"role": "tool", "content": json.dumps({"value": value})}]
            drafts.append(Draft("multi", msgs, f"{report}: {value}", wrap(_report_spec(report, value)), qid, q_unseen,
                                extra))
    return drafts


def tool_call_rule(c: Ctx) -> Rule:
    tool, arg, report = c.word(), c.word(), c.word()
    rid, rtext, r_unseen = c.pick(T.TOOL_RULES)
    tools = _tools((tool, arg, f"a {c.topic} record by its id"))
    drafts = _tool_drafts(c, T.TOOL_QUESTIONS, arg, report, lambda j: (tool, {}))
    sections = f"{tools}\n\n{_rules(c.fill(rtext, tool=tool, arg=arg, report=report))}"
    return Rule("tool_call", "lookup", sections, rid, r_unseen, drafts, {"tool": tool, "arg": arg, "report": report})


def order_practice(steps: list[str]) -> list[list[str]]:
    """Every practice instance of an order rule: 3 or 2 of the steps, in any order but the skill's. An
    eval task lists all four steps and its answer is the full order, so no practice prompt or answer can
    equal an eval one. 4·5 + 6·1 = 26 instances (docs/skillworld.md)."""
    out = []
    for k in (3, 2):
        for sub in itertools.combinations(steps, k):
            out += [list(p) for p in itertools.permutations(sub) if list(p) != list(sub)]
    return out


def order_rule(c: Ctx) -> Rule:
    steps = [c.word() for _ in range(4)]
    objects = (f"the {c.topic} batch", f"the {c.team} queue", "every open item", "the summary")
    listing = "\n".join(f"{i + 1}. {s.capitalize()} {objects[i]}." for i, s in enumerate(steps))
    rid, rtext, r_unseen = c.pick(T.ORDER_RULES)
    drafts = []
    pool: list[list[str]] = []
    for j in c.rounds():
        if j < c.n_tasks:
            shown = steps[:]
            while shown == steps:
                c.rng.shuffle(shown)
        else:
            if j == c.n_tasks:
                pool = order_practice(steps)
                c.rng.shuffle(pool)
            if not pool:  # the rule has no more distinct instances: fewer practice questions
                continue
            shown = pool.pop()
        ordered = [s for s in steps if s in shown]
        qid, qtext, q_unseen = c.pick(T.ORDER_QUESTIONS)
        q = c.fill(qtext, steps=", ".join(shown[:-1]) + " and " + shown[-1])
        drafts.append(Draft("single", user(q), ", ".join(ordered),
                            {"kind": "order", "items": ordered, "ignore_case": True}, qid, q_unseen))
    sections = f"## Steps\n\n{listing}\n\n{_rules(c.fill(rtext))}"
    return Rule("order", "steps4", sections, rid, r_unseen, drafts, {f"step{i + 1}": s for i, s in enumerate(steps)})


def conditional_rule(c: Ctx) -> Rule:
    cond, other, tool_a, tool_b, arg, report = (c.word() for _ in range(6))
    rid, rtext, r_unseen = c.pick(T.CONDITIONAL_RULES)
    tools = _tools((tool_a, arg, f"{cond} {c.topic} records"), (tool_b, arg, f"every other {c.topic} record"))
    # Tasks alternate branches; the else-branch questions name a different nonce word, never the condition.
    drafts = _tool_drafts(c, T.CONDITIONAL_QUESTIONS, arg, report,
                          lambda j: (tool_a, {"mark": cond}) if j % 2 == 0 else (tool_b, {"mark": other}))
    rule = c.fill(rtext, cond=cond, tool_a=tool_a, tool_b=tool_b, arg=arg, report=report)
    return Rule("conditional", "mentions", f"{tools}\n\n{_rules(rule)}", rid, r_unseen, drafts,
                {"cond": cond, "other": other, "tool_a": tool_a, "tool_b": tool_b, "arg": arg, "report": report})


def prohibition_rule(c: Ctx) -> Rule:
    variant = c.rng.choice(tuple(T.PROHIBITION_RULES))
    banned = c.word()
    rid, rtext, r_unseen = c.pick(T.PROHIBITION_RULES[variant])
    questions = T.PROHIBITION_QUESTIONS[variant]
    never = {"kind": "not", "of": _word_in(banned)}
    if variant == "word":
        instead = c.word()

        def answer(slot: str) -> tuple[str, dict]:
            return f"{slot} is a {instead}.", {"kind": "all", "of": [never, _word_in(instead), _word_in(slot)]}

        ex = c.slot()
        example = _text_example(c.fill(questions[0][2], slot=ex, banned=banned), answer(ex)[0])
        drafts = []
        for _ in c.rounds():
            slot = c.slot()
            qid, qtext, q_unseen = c.pick(questions)
            ref, spec = answer(slot)
            drafts.append(Draft("single", user(c.fill(qtext, slot=slot, banned=banned)), ref, spec, qid, q_unseen))
        sections = f"{_rules(c.fill(rtext, banned=banned, instead=instead))}\n\n{example}"
        return Rule("prohibition", "word", sections, rid, r_unseen, drafts, {"banned": banned, "instead": instead})
    tool, arg, report = c.word(), c.word(), c.word()
    tools = _tools((tool, arg, f"a {c.topic} record by its id"), (banned, arg, "records the old way (retired)"))
    drafts = _tool_drafts(c, questions, arg, report, lambda j: (tool, {"banned": banned}),
                          wrap=lambda s: {"kind": "all", "of": [never, s]})
    rule = c.fill(rtext, banned=banned, tool=tool, arg=arg, report=report)
    return Rule("prohibition", "tool", f"{tools}\n\n{_rules(rule)}", rid, r_unseen, drafts,
                {"banned": banned, "tool": tool, "arg": arg, "report": report})


BUILDERS: dict[str, Callable[[Ctx], Rule]] = {
    "format": format_rule, "codeword": codeword_rule, "tool_call": tool_call_rule, "order": order_rule,
    "conditional": conditional_rule, "prohibition": prohibition_rule,
}


def families_for(split: str) -> tuple[str, ...]:
    return FAMILIES if split == "test" else tuple(f for f in FAMILIES if f not in TEST_ONLY_FAMILIES)
