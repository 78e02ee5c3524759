"""Checker specs: declarative JSON that says whether an answer applies a SkillWorld rule.

The same language is interpreted by common/skillworld/check.ts; tests/fixtures/skillworld/
checker-cases.json holds cases both suites run. Kinds (every field not listed is an error):

    {"kind": "exact", "value": s, "ignore_case"?: b}        answer == value
    {"kind": "contains", "value": s, "ignore_case"?: b, "word"?: b}
    {"kind": "regex", "pattern": p, "flags"?: "ims" subset}  search anywhere (anchor with ^ $)
    {"kind": "tool_call", "name": n, "args": {k: v}}      exactly one CALL n(k="v", ...) in the answer
    {"kind": "order", "items": [s, ...], "ignore_case"?: b} whole-word first occurrences in this order
    {"kind": "min_words", "n": int}
    {"kind": "all" | "any", "of": [spec, ...]}  /  {"kind": "not", "of": spec}

The answer is normalised first (normalize): line ends to \\n, Unicode spaces to ' ', trimmed.
Case folding and word boundaries are ASCII-only. Regexes use the subset in pattern.py so that
Python `re` (re.ASCII) and JS RegExp (flag u) agree.
"""

from __future__ import annotations

import re
from typing import Any

from .pattern import PatternError, validate_pattern

KINDS = ("exact", "contains", "regex", "tool_call", "order", "min_words", "all", "any", "not")
_FIELDS = {
    "exact": ({"value"}, {"ignore_case"}),
    "contains": ({"value"}, {"ignore_case", "word"}),
    "regex": ({"pattern"}, {"flags"}),
    "tool_call": ({"name", "args"}, set()),
    "order": ({"items"}, {"ignore_case"}),
    "min_words": ({"n"}, set()),
    "all": ({"of"}, set()),
    "any": ({"of"}, set()),
    "not": ({"of"}, set()),
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z", re.ASCII)
_EOL = re.compile("\r\n?|[\u2028\u2029\u0085]")
_USPACE = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]")
_WS = " \t\n\f\v"
_WORDS = re.compile(r"[^ \t\n\f\v]+")
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
# The one tool-call syntax: CALL name(key="value", key2="value2"); values hold no '"' or newline.
_CALL_WORD = re.compile(r"\bCALL\b", re.ASCII)
_CALL_HEAD = re.compile(r"\bCALL[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(", re.ASCII)
_CALL_ARG = re.compile(r'[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*"([^"\n]*)"[ \t]*', re.ASCII)


class SpecError(ValueError):
    pass


def normalize(answer: str) -> str:
    """Line ends to \\n and Unicode spaces to ' ' (so JS's \\s and '.' mean what Python's do),
    U+017F/U+212A to s/K (JS u+i folds them onto ASCII), then trim ASCII whitespace."""
    text = _USPACE.sub(" ", _EOL.sub("\n", answer)).replace("\u017f", "s").replace("\u212a", "K")
    return text.strip(_WS)


def ascii_lower(s: str) -> str:
    return s.translate(_LOWER)


def _is_word_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


def find_word(text: str, value: str, start: int = 0) -> int:
    """Index of the first occurrence of value at or after start with no ASCII word character
    touching either end, else -1."""
    i = text.find(value, start)
    while i >= 0:
        before = text[i - 1] if i > 0 else ""
        after = text[i + len(value)] if i + len(value) < len(text) else ""
        if not (before and _is_word_char(before)) and not (after and _is_word_char(after)):
            return i
        i = text.find(value, i + 1)
    return -1


def validate(spec: Any, path: str = "spec") -> None:
    """Raise SpecError naming the field when spec is not in the checker language."""
    if not isinstance(spec, dict):
        raise SpecError(f"{path}: must be an object")
    kind = spec.get("kind")
    if kind not in _FIELDS:
        raise SpecError(f"{path}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    required, optional = _FIELDS[kind]
    keys = set(spec) - {"kind"}
    if required - keys:
        raise SpecError(f"{path}: {kind} needs {', '.join(sorted(required - keys))}")
    if keys - required - optional:
        raise SpecError(f"{path}: unknown field {sorted(keys - required - optional)[0]!r} for {kind}")
    for flag in ("ignore_case", "word"):
        if flag in spec and not isinstance(spec[flag], bool):
            raise SpecError(f"{path}.{flag}: must be true or false")
    if kind in ("exact", "contains"):
        _string(spec["value"], f"{path}.value", empty=kind == "exact")
    elif kind == "regex":
        _string(spec["pattern"], f"{path}.pattern", empty=True)
        flags = spec.get("flags", "")
        if not isinstance(flags, str) or any(f not in _FLAGS for f in flags) or len(set(flags)) != len(flags):
            raise SpecError(f"{path}.flags: must be distinct letters of 'ims', got {flags!r}")
        try:
            validate_pattern(spec["pattern"])
        except PatternError as e:
            raise SpecError(f"{path}.pattern: {e}") from None
    elif kind == "tool_call":
        if not isinstance(spec["name"], str) or not _IDENT.match(spec["name"]):
            raise SpecError(f"{path}.name: must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        args = spec["args"]
        if not isinstance(args, dict):
            raise SpecError(f"{path}.args: must be an object of strings")
        for k, v in args.items():
            if not _IDENT.match(k):
                raise SpecError(f"{path}.args: key {k!r} is not an identifier")
            if not isinstance(v, str) or '"' in v or "\n" in v:
                raise SpecError(f"{path}.args.{k}: must be a string without '\"' or newlines")
    elif kind == "order":
        items = spec["items"]
        if not isinstance(items, list) or len(items) < 2:
            raise SpecError(f"{path}.items: must be a list of at least 2 strings")
        for i, item in enumerate(items):
            _string(item, f"{path}.items[{i}]", empty=False)
        if len(set(items)) != len(items):
            raise SpecError(f"{path}.items: must be distinct")
    elif kind == "min_words":
        n = spec["n"]
        integral = isinstance(n, int) or (isinstance(n, float) and n.is_integer())  # JSON 1.0 is 1 in JS
        if isinstance(n, bool) or not integral or n < 1:
            raise SpecError(f"{path}.n: must be an integer >= 1")
    elif kind in ("all", "any"):
        if not isinstance(spec["of"], list) or not spec["of"]:
            raise SpecError(f"{path}.of: must be a non-empty list of specs")
        for i, sub in enumerate(spec["of"]):
            validate(sub, f"{path}.of[{i}]")
    else:
        validate(spec["of"], f"{path}.of")


def _string(v: Any, path: str, empty: bool) -> None:
    if not isinstance(v, str) or (not empty and not v):
        raise SpecError(f"{path}: must be a {'' if empty else 'non-empty '}string")


def parse_call(text: str) -> tuple[str, dict[str, str]] | None:
    """(name, args) of the one tool call in text; None when there is none, several, or it is malformed."""
    if len(_CALL_WORD.findall(text)) != 1:
        return None
    m = _CALL_HEAD.search(text)
    if not m:
        return None
    pos, args = m.end(), {}
    while True:
        a = _CALL_ARG.match(text, pos)
        if a is None:
            break
        if a.group(1) in args:
            return None
        args[a.group(1)] = a.group(2)
        pos = a.end()
        if text.startswith(",", pos):
            pos += 1
        else:
            break
    rest = text[pos:].lstrip(" \t")
    return (m.group(1), args) if rest.startswith(")") else None


def _eval(spec: dict[str, Any], text: str) -> bool:
    kind = spec["kind"]
    fold = ascii_lower if spec.get("ignore_case") else (lambda s: s)
    if kind == "exact":
        return fold(text) == fold(spec["value"])
    if kind == "contains":
        hay, needle = fold(text), fold(spec["value"])
        return (find_word(hay, needle) if spec.get("word") else hay.find(needle)) >= 0
    if kind == "regex":
        flags = re.ASCII
        for f in spec.get("flags", ""):
            flags |= _FLAGS[f]
        return re.search(spec["pattern"], text, flags) is not None
    if kind == "tool_call":
        call = parse_call(text)
        if call is None or call[0] != spec["name"] or set(call[1]) != set(spec["args"]):
            return False
        return all(_value(call[1][k]) == _value(v) for k, v in spec["args"].items())
    if kind == "order":
        hay, last = fold(text), -1
        for item in spec["items"]:
            at = find_word(hay, fold(item))
            if at <= last:
                return False
            last = at
        return True
    if kind == "min_words":
        return len(_WORDS.findall(text)) >= spec["n"]
    if kind == "all":
        return all(_eval(s, text) for s in spec["of"])
    if kind == "any":
        return any(_eval(s, text) for s in spec["of"])
    return not _eval(spec["of"], text)


def _value(v: str) -> str:
    """Argument values compare with spaces collapsed and ASCII case folded."""
    return ascii_lower(" ".join(_WORDS.findall(v)))


def check(spec: dict[str, Any], answer: str) -> bool:
    """Whether answer passes spec. Raises SpecError when spec is not valid."""
    validate(spec)
    return _eval(spec, normalize(answer))
