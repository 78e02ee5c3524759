"""Training examples for the hypernetwork (docs/design.md §1, "Training").

Every example is (source, prompt, target): φ = h(g(source)) is the only way the skill reaches the
LM; the LM sees prompt + target (teacher forcing) and the loss is on the target tokens only. The
skill text is never part of the LM's context beyond the target it has to produce.

Stage 1, reconstruction (ids are the tokenizer's encoding of the skill text, cut to max_skill_tokens):
- full:   source = ids;                      prompt = the fixed prompt ("<skill>\\n");
          target = one window of `target_window` tokens of ids (s in windows).
- prefix: source = ids[:cut], cut uniform in [prefix_min, prefix_max] of len(ids);
          prompt = the fixed prompt; target = a window of all of s (as full).
- cloze:  one section (heading line + body up to the next heading) is removed from the text;
          source = ids(text without it); prompt = the heading line; target = the body.

Stage 2, exploitation: source = the skill; the LM sees the chat-rendered trajectory and the loss is
on the assistant turns' tokens (their content and the closing <|im_end|>) only.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from tokenizers import Tokenizer

from ..tokenizer.chat import CHAT_TEMPLATE

OBJECTIVES = ("full", "prefix", "cloze")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


@dataclass
class Example:
    objective: str
    source: list[int]  # ids the adapter is compiled from
    prompt: list[int]  # LM context before the target
    target: list[int]  # ids the loss is on
    labels_mask: list[int] | None = None  # stage 2: 1 where the loss applies, over prompt + target


@dataclass
class Section:
    heading: str  # the heading line without its trailing newline ("## Steps")
    start: int  # char offset of the heading line
    body_start: int  # char offset after the heading line's newline
    end: int  # char offset where the next heading starts (or len(text))


def body_offset(text: str) -> int:
    """Char offset where the markdown body starts (after a '---' frontmatter block, if any)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return 0
    off = len(lines[0])
    for ln in lines[1:]:
        off += len(ln)
        if ln.rstrip() == "---":
            return off
    return 0


def sections(text: str) -> list[Section]:
    """ATX headings of the body outside fenced code blocks; each section runs to the next heading."""
    pos, fence, heads = body_offset(text), None, []
    for ln in text[pos:].splitlines(keepends=True):
        f = _FENCE.match(ln)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
        elif fence is None and _HEADING.match(ln.rstrip("\n")):
            heads.append((pos, ln.rstrip("\n"), pos + len(ln)))
        pos += len(ln)
    return [Section(h, s, b, heads[i + 1][0] if i + 1 < len(heads) else len(text))
            for i, (s, h, b) in enumerate(heads)]


class Stage1Builder:
    def __init__(self, tok: Tokenizer, prompt: str, max_skill_tokens: int, target_window: int,
                 prefix_min: float, prefix_max: float, min_body_tokens: int = 8):
        self.tok = tok
        # A prompt with "{start}" tells the LM where its target window starts in the skill (in tokens),
        # so windows past the first are not guesses; without it every window gets the same prompt.
        self.prompt_text = prompt
        self.prompt = tok.encode(prompt.replace("{start}", "0"), add_special_tokens=False).ids
        self.max_skill, self.window = max_skill_tokens, target_window
        self.prefix_min, self.prefix_max = prefix_min, prefix_max
        self.min_body = min_body_tokens

    def ids(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids[: self.max_skill]

    def _window(self, ids: list[int], rng: random.Random) -> tuple[list[int], list[int]]:
        """(prompt, target): a window of consecutive `window` tokens of s and the prompt naming its start."""
        s = 0
        if len(ids) > self.window:
            s = rng.choice(list(range(0, len(ids) - self.min_body, self.window)))  # consecutive windows of s
        prompt = self.prompt if "{start}" not in self.prompt_text else \
            self.tok.encode(self.prompt_text.replace("{start}", str(s)), add_special_tokens=False).ids
        return prompt, ids[s: s + self.window]

    def full(self, text: str, rng: random.Random) -> Example:
        ids = self.ids(text)
        return Example("full", ids, *self._window(ids, rng))

    def prefix(self, text: str, rng: random.Random) -> Example:
        ids = self.ids(text)
        cut = max(1, round(len(ids) * rng.uniform(self.prefix_min, self.prefix_max)))
        return Example("prefix", ids[:cut], *self._window(ids, rng))

    def cloze(self, text: str, rng: random.Random) -> Example | None:
        """None when the skill has no section with a body of min_body_tokens."""
        cands = []
        for sec in sections(text):
            body = text[sec.body_start: sec.end]
            if sec.start < len(text) and len(body.strip()) > 0:
                cands.append((sec, body))
        rng.shuffle(cands)
        for sec, body in cands:
            target = self.tok.encode(body, add_special_tokens=False).ids
            if len(target) < self.min_body:
                continue
            rest = text[: sec.start] + text[sec.end:]
            if not rest.strip():
                continue
            return Example("cloze", self.ids(rest), self.tok.encode(sec.heading + "\n", add_special_tokens=False).ids,
                           target[: self.window])
        return None

    def build(self, objective: str, text: str, rng: random.Random) -> Example:
        if objective == "cloze":
            ex = self.cloze(text, rng)
            if ex is not None:
                return ex
            objective = "full"  # no usable section: fall back to full reconstruction
        return self.full(text, rng) if objective == "full" else self.prefix(text, rng)


def render_chat(template: str, messages: list[dict[str, str]], bos: str = "", eos: str = "") -> str:
    """The template rendered as transformers' apply_chat_template does (no generation prompt). Our own
    template is rendered directly (same string, no jinja2 needed); any other one through jinja2."""
    if template == CHAT_TEMPLATE:
        return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    import jinja2.ext  # a dev dependency (transformers brings it); only foreign templates need it
    import jinja2.sandbox

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                      extensions=[jinja2.ext.loopcontrols])
    return env.from_string(template).render(messages=messages, add_generation_prompt=False, bos_token=bos,
                                            eos_token=eos)


def chat_example(tok: Tokenizer, template: str, messages: list[dict[str, str]], source: list[int], max_seq: int,
                 eos: str = "<|im_end|>") -> Example:
    """Chat-rendered trajectory; labels on each assistant message's content and its closing eos."""
    text = render_chat(template, messages)
    regions, pos = [], 0
    for i, msg in enumerate(messages):
        end = len(render_chat(template, messages[: i + 1]))
        if msg["role"] == "assistant":
            c = text.find(msg["content"], pos) if msg["content"] else text.find(eos, pos)
            if c < 0 or c >= end:
                raise ValueError("assistant content not found where the chat template put the message")
            stop = text.find(eos, c + len(msg["content"]))
            regions.append((c, (stop + len(eos)) if 0 <= stop < end else end))
        pos = end
    enc = tok.encode(text, add_special_tokens=False)
    labels = [int(any(a <= s < b for a, b in regions)) for s, _ in enc.offsets]
    ids = enc.ids[:max_seq]
    labels = labels[:max_seq]
    # prompt = the first token (never a label: the template starts with <|im_start|>); target = the rest
    return Example("chat", source, ids[:1], ids[1:], labels)
