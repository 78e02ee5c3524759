"""Eval tasks of one skill, the prompts each condition gives them, and the trained context they fit.

- reconstruction: a held-out section (heading line to the next heading, as stage 1's cloze cuts it);
  the adapter (and the in-context text) come from the skill without that section; raw LM prompt =
  the heading line; reference = the section body.
- template: the template synthesizer's single-turn questions, chat-rendered; the adapter and the
  in-context text come from the whole skill; reference = the skill's own text for that question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jinja2.sandbox
from tokenizers import Tokenizer

from ..synth.skill import Skill
from ..synth.template import TemplateSynthesizer, rng_for


@dataclass
class Task:
    skill: int  # index into the eval's skill list
    task_id: str
    kind: str  # "reconstruction" | "template:<section kind>"
    source: str  # the text the adapter is compiled from (s or s without the section)
    reference: str
    heading: str | None = None  # reconstruction: the heading line, e.g. "## Steps"
    question: str | None = None  # template: the user's question
    messages: list[dict] | None = None  # SkillWorld: the chat turns before the answer
    meta: dict = field(default_factory=dict)  # SkillWorld: family, length_bucket, depth, checker


def flat_sections(text: str, skill: Skill) -> list[tuple[str, int, int, int]]:
    """(heading line, start, body_start, end) with end = the next heading of any level."""
    secs = sorted(skill.sections, key=lambda s: s.start)
    return [(text[s.start:s.body_start].rstrip("\n"), s.start, s.body_start,
             secs[i + 1].start if i + 1 < len(secs) else len(text)) for i, s in enumerate(secs)]


def skill_tasks(idx: int, skill: Skill, tok: Tokenizer, max_recon: int, max_template: int, seed: int,
                min_body_tokens: int = 8) -> list[Task]:
    text = skill.text
    recon = []
    for heading, start, body_start, end in flat_sections(text, skill):
        body = text[body_start:end].strip("\n")
        rest = text[:start] + text[end:]
        if len(tok.encode(body, add_special_tokens=False).ids) >= min_body_tokens and rest.strip():
            recon.append(Task(idx, f"{idx}:recon:{start}", "reconstruction", rest, body, heading=heading))
    rng_for(seed, skill.sha256, "recon").shuffle(recon)
    tmpl = [Task(idx, f"{idx}:tmpl:{i}", f"template:{kind}", text, answer, question=q)
            for i, (kind, _, q, answer) in enumerate(TemplateSynthesizer(seed=seed, half="eval").qa_pairs(skill))]
    rng_for(seed, skill.sha256, "tmpl").shuffle(tmpl)
    return sorted(recon[:max_recon], key=lambda t: t.task_id) + tmpl[:max_template]


class Prompter:
    """Prompt ids for a task, with or without a context text (the skill, or the answer) cut to fit."""

    def __init__(self, tok: Tokenizer, chat_template: str, max_positions: int):
        self.tok, self.max_positions = tok, max_positions
        env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        self.template = env.from_string(chat_template)

    def ids(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def _render(self, task: Task, context: str | None) -> str:
        if task.heading is not None:
            return (f"{context}\n\n" if context else "") + task.heading + "\n"
        msgs = list(task.messages) if task.messages is not None else [{"role": "user", "content": task.question}]
        if context and msgs and msgs[0]["role"] == "system":
            msgs[0] = {**msgs[0], "content": f"{context}\n\n{msgs[0]['content']}"}
        elif context:
            msgs = [{"role": "system", "content": context}] + msgs
        return self.template.render(messages=msgs, add_generation_prompt=True, bos_token="", eos_token="",
                                    pad_token="")

    def fit(self, task: Task, context: str | None, limit: int) -> tuple[list[int], int]:
        """(prompt ids of at most `limit` tokens, tokens of `context` cut off its end to get there)."""
        if not context:
            return self.ids(self._render(task, None)), 0
        ids = self.ids(self._render(task, context))
        enc = self.tok.encode(context, add_special_tokens=False)
        n = len(enc.ids)
        if len(ids) <= limit:
            return ids, 0
        fixed = len(self.ids(self._render(task, "x"))) - 1
        keep = min(n, limit - fixed)
        while keep > 0:
            ids = self.ids(self._render(task, context[:enc.offsets[keep - 1][1]]))
            if len(ids) <= limit:
                return ids, n - keep
            keep -= max(1, len(ids) - limit)  # token boundaries can shift by a few after the cut
        return self.ids(self._render(task, None)), n

    def prompt(self, task: Task, in_context: bool, room: int) -> list[int]:
        """The skill (task.source) in context, cut to leave `room` tokens of max_positions free."""
        return self.fit(task, task.source if in_context else None, self.max_positions - room)[0]


def target_ids(prompter: Prompter, task: Task, max_answer: int, max_positions: int) -> list[int]:
    """The reference answer's ids a task scores: at most `max_answer`, and what fits after its bare prompt."""
    bare = len(prompter.fit(task, None, 1 << 30)[0])  # a very long heading/question leaves less room
    return prompter.ids(task.reference)[:min(max_answer, max_positions - bare)]


def trained_context(manifest: dict[str, Any], flag: int | None) -> tuple[int, str]:
    """Positions the base LM was trained on: the flag, else the training card's config.data.seq_len,
    else max_positions."""
    if flag:
        return flag, "--trained-context"
    cfg = (manifest.get("training_card") or {}).get("config")
    seq = ((cfg.get("data") or {}).get("seq_len") if isinstance(cfg, dict) else None)
    if isinstance(seq, int) and seq > 0:
        return seq, "training_card.config.data.seq_len"
    return manifest["architecture"]["max_positions"], "architecture.max_positions (no seq_len in the training card)"
