"""Wordings of SkillWorld skills and questions. Each entry is (id, scope, text); scope "test" entries
are drawn only when generating the test split, so an eval can tell seen from unseen paraphrases.

Placeholders: {team} {topic} name the skill's nonce desk and record type; family-specific ones are
listed beside each table. Literal braces are doubled.
"""

from __future__ import annotations

import random
import re

Entry = tuple[str, str, str]

DESCRIPTION: list[Entry] = [
    ("d1", "all", "Handles {topic} records for the {team} desk. Use when a request mentions {topic}."),
    ("d2", "all", "Rules for {topic} work at the {team} desk. Use it for any {topic} request."),
    ("d3", "test", "How {team} staff deal with {topic} items; apply it to every {topic} request."),
]
INTRO = "How the {team} desk handles {topic} requests. Follow its rules exactly."
WHEN_TO_USE = "- A request mentions {topic} records or the {team} desk."
PITFALLS = "- Keep answers short: the {team} desk reads them in a queue."

# Tools are documented in the one call syntax: {call} is `CALL tool(arg="<id>")`.
TOOL_LINE = "- `{call}`: looks up {what}."

# format: {key} (json_key, tag_wrap), {label} (label_line), {marker} (marker_list)
FORMAT_RULES: dict[str, list[Entry]] = {
    "json_key": [
        ("r1", "all", "Always answer with one JSON object whose only key is `{key}`; its value is the item from the "
                      "request, as a string."),
        ("r2", "all", 'Every reply is a single JSON object, `{{"{key}": "<item>"}}`, and nothing else.'),
        ("r3", "test", "Reply in JSON only. Use exactly one key, `{key}`, and put the requested item in it."),
    ],
    "label_line": [
        ("r1", "all", "Write every answer as a single line that starts with `{label}:` followed by the item from the "
                      "request."),
        ("r2", "all", "Answers are one line: the label `{label}:`, a space, then the item."),
        ("r3", "test", "Prefix the answer with `{label}:` and keep it on one line."),
    ],
    "tag_wrap": [
        ("r1", "all", "Wrap every answer in `<{key}>` and `</{key}>` tags, with the item from the request between "
                      "them."),
        ("r2", "all", "Put the item inside a `<{key}>...</{key}>` element and write nothing outside it."),
        ("r3", "test", "Answers go between the tags `<{key}>` and `</{key}>`."),
    ],
    "marker_list": [
        ("r1", "all", "When a request names several items, list them one per line, each line starting with "
                      "`{marker}>`, in the order they were given."),
        ("r2", "all", "Lists use the marker `{marker}>` at the start of every line, one item per line."),
        ("r3", "test", "Start each list line with `{marker}>`; one item per line, in request order."),
    ],
}
# {slot}: one item; {items}: "a, b and c"
FORMAT_QUESTIONS: list[Entry] = [
    ("q1", "all", "File {slot} in the {topic} register."),
    ("q2", "all", "Log this {topic} item: {slot}."),
    ("q3", "all", "Please record {slot} for the {team} desk."),
    ("q4", "test", "New {topic} entry, {slot}. Write it up."),
    ("q5", "test", "Could you note down {slot} under {topic}?"),
]
LIST_QUESTIONS: list[Entry] = [
    ("q1", "all", "File {items} in the {topic} register."),
    ("q2", "all", "Log these {topic} items: {items}."),
    ("q3", "all", "Please record {items} for the {team} desk."),
    ("q4", "test", "New {topic} entries: {items}. Write them up."),
]

# codeword: {code}
CODEWORD_RULES: dict[str, list[Entry]] = {
    "start": [
        ("r1", "all", "Begin every reply with the codeword `{code}`, then answer normally."),
        ("r2", "all", "The first word of each answer must be `{code}`."),
        ("r3", "test", "Open all answers with `{code}` before anything else."),
    ],
    "end": [
        ("r1", "all", "End every reply with the codeword `{code}`."),
        ("r2", "all", "The last word of each answer must be `{code}`."),
        ("r3", "test", "Close all answers with `{code}`; nothing may follow it."),
    ],
}
CODEWORD_QUESTIONS: list[Entry] = [
    ("q1", "all", "Confirm that {slot} has arrived."),
    ("q2", "all", "Please acknowledge {slot}."),
    ("q3", "all", "Did the {team} desk get {slot}?"),
    ("q4", "test", "Let me know you have seen {slot}."),
    ("q5", "test", "Quick check: is {slot} logged?"),
]

# tool_call: {tool} {arg} {report}
TOOL_RULES: list[Entry] = [
    ("r1", "all", "Look up every {topic} record with `{tool}`, the id as `{arg}`; then reply `{report}: <value>`."),
    ("r2", "all", "All {topic} lookups go through `{tool}` (`{arg}` = the id). Report the result as "
                  "`{report}: <value>`."),
    ("r3", "test", "Call `{tool}` for each {topic} id you are asked about, then answer `{report}: <value>`."),
]
TOOL_QUESTIONS: list[Entry] = [
    ("q1", "all", "Look up {slot} in the {topic} system."),
    ("q2", "all", "Can you fetch {slot} for me?"),
    ("q3", "all", "I need the details of {slot}."),
    ("q4", "test", "Pull up {slot}, please."),
    ("q5", "test", "What does the {topic} record for {slot} say?"),
]

# order: steps are listed in the skill; {steps} in a question is the shuffled list
ORDER_RULES: list[Entry] = [
    ("r1", "all", "Always run the steps in exactly the order listed under Steps; never reorder them."),
    ("r2", "all", "The order of the steps is fixed: follow the numbered list from top to bottom."),
    ("r3", "test", "Order matters here. Do the steps as numbered, one after another."),
]
ORDER_QUESTIONS: list[Entry] = [
    ("q1", "all", "I need to {steps} the {topic} batch. In which order do I do that?"),
    ("q2", "all", "What order should these steps go in: {steps}?"),
    ("q3", "all", "Put these {topic} steps in order: {steps}."),
    ("q4", "test", "Which comes first, and then what? {steps}."),
    ("q5", "test", "Sort these steps for the {team} desk: {steps}."),
]

# conditional (a test-only family): {cond} {tool_a} {tool_b} {arg} {report}; {mark} in questions
CONDITIONAL_RULES: list[Entry] = [
    ("r1", "all", "If the request mentions {cond}, call `{tool_a}`; otherwise call `{tool_b}`. Then reply "
                  "`{report}: <value>`."),
    ("r2", "all", "Requests about {cond} go to `{tool_a}`, all others to `{tool_b}`. Report `{report}: <value>`."),
    ("r3", "test", "Pick `{tool_a}` when the request says {cond}, else `{tool_b}`; answer `{report}: <value>`."),
]
CONDITIONAL_QUESTIONS: list[Entry] = [
    ("q1", "all", "Look up the {mark} record {slot}."),
    ("q2", "all", "Can you fetch {slot}? It is a {mark} case."),
    ("q3", "all", "I need the {mark} details of {slot}."),
    ("q4", "test", "Pull up {slot} from the {mark} queue, please."),
]

# prohibition: word variant {banned} {instead}; tool variant {banned} {tool} {arg} {report}
PROHIBITION_RULES: dict[str, list[Entry]] = {
    "word": [
        ("r1", "all", "Never write the word `{banned}`: it is retired. Say `{instead}` instead."),
        ("r2", "all", "`{banned}` is a banned word at the {team} desk; always replace it with `{instead}`."),
        ("r3", "test", "Do not use the term `{banned}` in replies. The accepted term is `{instead}`."),
    ],
    "tool": [
        ("r1", "all", "Never call `{banned}`; it is retired. Use `{tool}` for every lookup, then reply "
                      "`{report}: <value>`."),
        ("r2", "all", "`{banned}` must not be used any more: send lookups to `{tool}` and report `{report}: <value>`."),
        ("r3", "test", "Do not touch `{banned}`. All lookups go to `{tool}`; answer `{report}: <value>`."),
    ],
}
PROHIBITION_QUESTIONS: dict[str, list[Entry]] = {
    "word": [
        ("q1", "all", "Is {slot} a {banned}? Answer in a short sentence."),
        ("q2", "all", "Tell me whether {slot} counts as a {banned}."),
        ("q3", "all", "Write one line saying that {slot} is a {banned}."),
        ("q4", "test", "Confirm {slot} is a {banned}, using the word {banned}."),
        ("q5", "test", "Describe {slot} as a {banned}, please."),
    ],
    "tool": [
        ("q1", "all", "Use {banned} to look up {slot}."),
        ("q2", "all", "Run {banned} on {slot} for me."),
        ("q3", "all", "Fetch {slot} with {banned}, please."),
        ("q4", "test", "Can {banned} find {slot}? Try it."),
    ],
}

# Slots: what questions carry and answers copy. Plain English words, never nonce.
SLOT_NOUNS = ("invoice", "order", "ticket", "batch", "account", "shipment", "contract", "badge", "parcel", "meter",
              "claim", "permit", "voucher", "case", "lot", "crate")
RESULT_WORDS = ("amber", "teal", "violet", "olive", "coral", "indigo", "crimson", "silver", "ochre", "jade")


def pick(rng: random.Random, table: list[Entry], split: str) -> tuple[str, str, bool]:
    """(id, text, unseen): a wording allowed in this split; unseen when it is a test-only one."""
    allowed = [e for e in table if e[1] == "all" or split == "test"]
    tid, scope, text = rng.choice(allowed)
    return tid, text, scope == "test"


def all_words() -> set[str]:
    """Every lowercase word of every wording and list, so the lexicon never draws one."""
    texts = [INTRO, WHEN_TO_USE, PITFALLS, TOOL_LINE, *SLOT_NOUNS, *RESULT_WORDS]
    tables = [DESCRIPTION, FORMAT_QUESTIONS, LIST_QUESTIONS, CODEWORD_QUESTIONS, TOOL_RULES, TOOL_QUESTIONS,
              ORDER_RULES, ORDER_QUESTIONS, CONDITIONAL_RULES, CONDITIONAL_QUESTIONS]
    for d in (FORMAT_RULES, CODEWORD_RULES, PROHIBITION_RULES, PROHIBITION_QUESTIONS):
        tables += list(d.values())
    texts += [e[2] for t in tables for e in t]
    return {w.lower() for t in texts for w in re.findall(r"[A-Za-z]+", t)}
