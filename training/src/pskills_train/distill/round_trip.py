"""Tool round-trip practice: the `round_trip` practice source (docs/distill.md "Practice").

Practice questions are single user requests, so without tests a student never sees the turn after a
tool's result. Here, every teacher answer that looks like a tool call becomes a follow-up question:
[the request, assistant = that call, tool = a made-up result], which the teacher then answers with the
skill in context. The detector is generic (any `name(arg=...)` call, or a JSON object naming a tool and
its arguments), and a call counts only when the skill names its tool (a small teacher also writes calls
for skills that have none); the results come from a small generic lexicon in a few JSON shapes, seeded.
Nothing here reads a generator's formats or words, nor the scored tasks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .practice import Question
from .practice_text import fnv, pick

SOURCE = "round_trip"
CAP = 8  # follow-ups per skill
MAX_CALL_CHARS = 240  # a call is a short answer; a long one explains or reports rather than calls

# name(args) with at least one argument that is a keyword (a=..., a: ...) or a literal (quoted, number).
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.\-]{0,48})\(\s*([^()]*?\S[^()]*?)\s*\)")
_ARG = re.compile(r"""^(?:[A-Za-z_][\w\-]*\s*[=:]|["'\d\[{])""")
_NAME_KEYS = ("tool", "name", "function", "tool_name")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input")


@dataclass(frozen=True)
class Call:
    name: str
    args: str  # the arguments as written (the inside of the parentheses, or the JSON of the arguments)


def _json_call(text: str) -> Call | None:
    s = re.sub(r"^```\w*\s*|\s*```$", "", text.strip())
    if not (s.startswith("{") and s.endswith("}")):
        return None
    try:
        obj = json.loads(s)
    except ValueError:
        return None
    if isinstance(obj.get("function"), dict):  # {"function": {"name": ..., "arguments": ...}}
        obj = obj["function"]
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), None)
    args = next((obj[k] for k in _ARG_KEYS if k in obj), None)
    if name is None or args is None:
        return None
    return Call(name.strip(), args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))


def detect_call(answer: str) -> Call | None:
    """The tool call a short answer makes, or None: `name(arg=...)` anywhere in it (no space before the
    parenthesis, and a keyword or literal argument, so prose like "the total (about 40)" is no call),
    or a JSON call object."""
    text = answer.strip()
    if not text or len(text) > MAX_CALL_CHARS:
        return None
    js = _json_call(text)
    if js is not None:
        return js
    for m in _CALL.finditer(text):
        args = m.group(2)
        if _ARG.match(args):
            return Call(m.group(1), args)
    return None


# Made-up results: generic words and numbers, a few JSON shapes (none of a generator's formats).
RESULT_LEXICON = {
    "status": ("approved", "pending", "closed", "on hold", "shipped", "active", "expired", "in review"),
    "name": ("Dana Reyes", "Ravi Shah", "Mei Chen", "Omar Haddad", "Lena Vogel", "Tomas Novak"),
    "place": ("Lisbon", "Osaka", "Denver", "Nairobi", "Tromso", "Quito"),
    "unit": ("kg", "units", "EUR", "USD", "hours", "km"),
}
SHAPES = ("result", "status_data", "value", "output", "record")


def result_value(*key: object) -> str:
    kind = fnv(*key, "kind") % 4
    n = fnv(*key, "n") % 9000 + 10
    if kind == 0:
        return pick(RESULT_LEXICON["status"], *key, "s")
    if kind == 1:
        return pick(RESULT_LEXICON["name"], *key, "p")
    if kind == 2:
        return f"{n / 10:.1f} {pick(RESULT_LEXICON['unit'], *key, 'u')}"
    return f"{pick(RESULT_LEXICON['place'], *key, 'c')} {n % 97 + 2}"


def result_text(*key: object) -> str:
    """A tool result as a JSON string, shape and value drawn by the key."""
    v = result_value(*key)
    shape = pick(SHAPES, *key, "shape")
    if shape == "result":
        obj: dict = {"result": v}
    elif shape == "status_data":
        obj = {"status": "ok", "data": v}
    elif shape == "value":
        obj = {"value": v}
    elif shape == "output":
        obj = {"output": v, "ok": True}
    else:
        obj = {"record": {"id": fnv(*key, "id") % 90000 + 10000, "value": v}}
    return json.dumps(obj)


def names_tool(skill_text: str, name: str) -> bool:
    """Whether the skill's text names the tool `name` as a word (case-insensitive)."""
    return re.search(rf"(?<![\w.\-]){re.escape(name)}(?![\w\-])", skill_text, re.IGNORECASE) is not None


def follow_ups(said: list[tuple[Question, str]], seed: int, skill_text: str, cap: int = CAP) -> list[Question]:
    """Up to `cap` follow-up questions out of (question, the teacher's answer) pairs whose answer is a
    call to a tool the skill names: the question's chat, the call as the assistant turn, a made-up tool
    result. Each is answered by the teacher (answer None)."""
    out: list[Question] = []
    seen: set[str] = set()
    for q, answer in said:
        if len(out) >= cap:
            break
        if not q.messages or q.messages[-1].get("role") != "user":
            continue  # only a request's call; a chat that already had a tool turn is left as it is
        call = detect_call(answer)
        if call is None or answer.strip() in seen or not names_tool(skill_text, call.name):
            continue
        seen.add(answer.strip())
        result = result_text(seed, SOURCE, q.messages[-1]["content"], answer.strip())
        msgs = [
            *(dict(m) for m in q.messages),
            {"role": "assistant", "content": answer.strip()},
            {"role": "tool", "content": result},
        ]
        out.append(Question(msgs, SOURCE, None, {"from": q.source, "tool": call.name}))
    return out
