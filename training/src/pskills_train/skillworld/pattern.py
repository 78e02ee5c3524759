"""The regex subset checker specs may use: where Python `re` (re.ASCII) and JS RegExp (flag u) agree.

    alternation a|b, groups (x) and (?:x), any char '.', anchors ^ $, word boundaries \\b \\B,
    classes [...] / [^...] with ranges a-z, escapes \\d \\D \\w \\W \\s \\S \\n \\t, escaped syntax
    characters \\^ \\$ \\\\ \\. \\* \\+ \\? \\( \\) \\[ \\] \\{ \\} \\| \\/ (and \\- inside a class),
    quantifiers * + ? {m} {m,} {m,n} (m <= n <= 1000), each optionally lazy (?).
    Printable ASCII only; no lookaround, backreferences, named groups, inline flags, \\A \\Z.

Ported one-to-one in common/skillworld/check.ts (validatePattern).
"""

from __future__ import annotations

SYNTAX = set("^$\\.*+?()[]{}|/")
CLASS_ESCAPES = set("dDwWsS")
ESCAPES = CLASS_ESCAPES | set("bBnt")
MAX_REPEAT = 1000


class PatternError(ValueError):
    pass


def validate_pattern(p: str) -> None:
    """Raise PatternError (with the offset) when p leaves the subset."""
    for i, c in enumerate(p):
        if not (" " <= c <= "~"):
            raise PatternError(f"character {c!r} at {i}: only printable ASCII (use \\n, \\t)")
    depth, i, can_repeat = 0, 0, False
    while i < len(p):
        c = p[i]
        if c == "\\":
            e = p[i + 1] if i + 1 < len(p) else ""
            if e not in ESCAPES and e not in SYNTAX:
                raise PatternError(f"escape \\{e} at {i} is not allowed")
            can_repeat = e not in "bB"
            i += 2
        elif c == "(":
            if p.startswith("(?", i) and not p.startswith("(?:", i):
                raise PatternError(f"group at {i}: only (...) and (?:...)")
            depth += 1
            i += 3 if p.startswith("(?:", i) else 1
            can_repeat = False
        elif c == ")":
            if depth == 0:
                raise PatternError(f"unbalanced ')' at {i}")
            depth -= 1
            i += 1
            can_repeat = True
        elif c == "[":
            i = _class(p, i)
            can_repeat = True
        elif c in "*+?{":
            if not can_repeat:
                raise PatternError(f"quantifier at {i} has nothing to repeat")
            i = _quantifier(p, i)
            if i < len(p) and p[i] == "?":
                i += 1
            can_repeat = False
        elif c in "]}":
            raise PatternError(f"unescaped '{c}' at {i}")
        else:  # literal, '.', '|', '^', '$'
            can_repeat = c not in "|^$"
            i += 1
    if depth:
        raise PatternError("unbalanced '('")


def _quantifier(p: str, i: int) -> int:
    if p[i] != "{":
        return i + 1
    end = p.find("}", i)
    body = p[i + 1:end] if end > 0 else ""
    lo, _, hi = body.partition(",")
    if not lo.isdigit() or (hi and not hi.isdigit()) or not (lo.isascii() and hi.isascii()):
        raise PatternError(f"'{{' at {i} must start a quantifier {{m}}, {{m,}} or {{m,n}} (escape it as \\{{)")
    if int(lo) > MAX_REPEAT or (hi and (int(hi) > MAX_REPEAT or int(hi) < int(lo))):
        raise PatternError(f"quantifier at {i}: need m <= n <= {MAX_REPEAT}")
    return end + 1


def _class(p: str, i: int) -> int:
    """Index after the class that opens at i."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    atoms: list[str | None] = []  # a literal char, or None for \d-like escapes
    while True:
        if j >= len(p):
            raise PatternError(f"class at {i} is not closed")
        c = p[j]
        if c == "]":
            break
        if c == "\\":
            e = p[j + 1] if j + 1 < len(p) else ""
            if e in CLASS_ESCAPES:
                atoms.append(None)
            elif e in "nt":
                atoms.append("\n" if e == "n" else "\t")
            elif e in SYNTAX or e == "-":
                atoms.append(e)
            else:
                raise PatternError(f"escape \\{e} at {j} is not allowed in a class")
            j += 2
            continue
        if c == "[" or p.startswith(("&&", "~~", "||", "--"), j):
            raise PatternError(f"'{p[j:j + 2]}' at {j} in a class: escape it")
        if c == "-" and atoms and j + 1 < len(p) and p[j + 1] != "]":
            lo = atoms[-1]
            nxt = p[j + 1]
            if nxt == "\\":
                e = p[j + 2] if j + 2 < len(p) else ""
                hi = e if (e in SYNTAX or e == "-") else None
                if e in "nt":
                    hi = "\n" if e == "n" else "\t"
                step = 3
            else:
                hi, step = nxt, 2
            if lo is None or hi is None or ord(lo) > ord(hi):
                raise PatternError(f"bad range at {j - 1} in a class")
            atoms[-1] = None  # a range cannot start another range
            j += step
            continue
        atoms.append(c)
        j += 1
    if not atoms:
        raise PatternError(f"empty class at {i}")
    return j + 1
