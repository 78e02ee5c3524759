"""LLM synthesizer: asks any OpenAI-compatible endpoint (POST {base}/chat/completions) for task/answer
trajectories as JSON and keeps only those that pass `validate_trajectory`. Every failure (HTTP,
non-JSON, wrong shape, ungrounded answer) becomes a rejection with a reason; nothing raises.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from .skill import Skill
from .trajectory import Trajectory

PROMPT = """Here is an agent skill (a SKILL.md file):

<skill>
{skill}
</skill>

Write {n} realistic conversations in which a user asks for help with a task this skill covers and the \
assistant answers by applying the skill. Stay faithful to the skill's own wording. Reply with JSON \
only, in this shape:
{{"trajectories": [{{"messages": [{{"role": "user", "content": "..."}}, \
{{"role": "assistant", "content": "..."}}]}}]}}"""

_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")


@dataclass
class Limits:
    max_turns: int = 4  # user/assistant pairs
    max_chars: int = 4000  # per message
    min_chars: int = 2
    min_grounding: float = 0.5  # share of the assistant's words (>= 3 letters) found in the skill


@dataclass
class Rejection:
    index: int | None  # trajectory index in the response; None = the whole call
    reason: str


@dataclass
class SynthReport:
    trajectories: list[Trajectory] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    http_ok: bool = False
    raw: str | None = None


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 3]


def grounding(answer: str, skill_text: str) -> float:
    """Share of the answer's words that occur in the skill (1.0 for an answer with no long words)."""
    w = words(answer)
    vocab = set(words(skill_text))
    return 1.0 if not w else sum(x in vocab for x in w) / len(w)


def validate_trajectory(item: Any, skill_text: str, limits: Limits) -> tuple[list[dict[str, str]] | None, str | None]:
    """(messages, None) when the item is usable, else (None, reason)."""
    msgs = item.get("messages") if isinstance(item, dict) else item
    if not isinstance(msgs, list) or not msgs:
        return None, "no 'messages' list"
    if len(msgs) % 2 or len(msgs) > 2 * limits.max_turns:
        return None, f"{len(msgs)} messages: want 2..{2 * limits.max_turns} in user/assistant pairs"
    out = []
    for i, m in enumerate(msgs):
        want = "user" if i % 2 == 0 else "assistant"
        if not isinstance(m, dict) or m.get("role") != want:
            return None, f"message {i}: role must be '{want}' (roles alternate, user first)"
        content = m.get("content")
        if not isinstance(content, str) or len(content.strip()) < limits.min_chars:
            return None, f"message {i}: empty or non-string content"
        if len(content) > limits.max_chars:
            return None, f"message {i}: {len(content)} chars > {limits.max_chars}"
        if want == "assistant":
            g = grounding(content, skill_text)
            if g < limits.min_grounding:
                return None, (f"message {i}: answer not grounded in the skill "
                              f"(word overlap {g:.2f} < {limits.min_grounding})")
        out.append({"role": want, "content": content.strip()})
    return out, None


def parse_response(content: str) -> tuple[list[Any] | None, str | None]:
    """The trajectory list from a completion's text: bare JSON, fenced JSON, or JSON inside prose."""
    text = content.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    candidates = [text] + ([fenced.group(1)] if fenced else [])
    for a, b in (("{", "}"), ("[", "]")):
        i, j = text.find(a), text.rfind(b)
        if 0 <= i < j:
            candidates.append(text[i:j + 1])
    for c in candidates:
        try:
            data = json.loads(c)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("trajectories"), list):
            return data["trajectories"], None
        if isinstance(data, list):
            return data, None
        return None, "JSON is neither {'trajectories': [...]} nor a list"
    return None, "response is not JSON"


class LLMSynthesizer:
    name = "llm"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, n: int = 4, seed: int = 0,
                 temperature: float = 0.7, max_tokens: int = 2048, max_skill_chars: int = 12000,
                 timeout: float = 120.0, limits: Limits | None = None, prompt: str = PROMPT):
        self.base_url, self.model, self.api_key = base_url.rstrip("/"), model, api_key
        self.n, self.seed, self.temperature, self.max_tokens = n, seed, temperature, max_tokens
        self.max_skill_chars, self.timeout, self.limits = max_skill_chars, timeout, limits or Limits()
        self.prompt = prompt  # a format string with {skill} and {n}
        self.reports: list[tuple[str, SynthReport]] = []  # (skill name, report), for the CLI summary

    def request(self, skill: Skill) -> dict[str, Any]:
        content = self.prompt.format(skill=skill.text[:self.max_skill_chars], n=self.n)
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
                "messages": [{"role": "user", "content": content}]}

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", "accept": "application/json",
                                              **({"authorization": f"Bearer {self.api_key}"} if self.api_key else {})})
        with urllib.request.urlopen(req, timeout=self.timeout) as r:  # noqa: S310 - the user's endpoint
            return json.loads(r.read().decode("utf-8"))

    def synthesize_report(self, skill: Skill) -> SynthReport:
        rep = SynthReport()
        try:
            resp = self._post(self.request(skill))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            rep.rejections.append(Rejection(None, f"HTTP {e.code} from {self.base_url}: {detail}"))
            return rep
        except (urllib.error.URLError, OSError, ValueError) as e:
            rep.rejections.append(Rejection(None, f"request to {self.base_url} failed: {e}"))
            return rep
        rep.http_ok = True
        try:
            content = resp["choices"][0]["message"]["content"]
            assert isinstance(content, str)
        except (KeyError, IndexError, TypeError, AssertionError):
            rep.rejections.append(Rejection(None, "completion has no choices[0].message.content string"))
            return rep
        rep.raw = content
        items, why = parse_response(content)
        if items is None:
            rep.rejections.append(Rejection(None, why or "unparsable"))
            return rep
        for i, item in enumerate(items):
            msgs, why = validate_trajectory(item, skill.text, self.limits)
            if msgs is None:
                rep.rejections.append(Rejection(i, why or "invalid"))
            else:
                rep.trajectories.append(Trajectory.for_skill(skill, self.name, self.seed, msgs, "llm", model=self.model,
                                                             endpoint=self.base_url))
        return rep

    def synthesize(self, skill: Skill) -> list[Trajectory]:
        rep = self.synthesize_report(skill)
        self.reports.append((skill.name, rep))
        return rep.trajectories


def from_env(base_url: str, model: str, key_env: str | None, **kw: Any) -> LLMSynthesizer:
    return LLMSynthesizer(base_url, model, os.environ.get(key_env) if key_env else None, **kw)
