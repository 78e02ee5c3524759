"""The teacher pass: the base with the skill as its system message answers each practice question.

The skill is cut to fit the base's trained context exactly as the eval's in_context condition cuts it
(`Prompter.fit`). A question without an answer is answered greedily; a question with one is
teacher-forced on it. Per answer token the teacher's top-k log-probabilities (log-softmax over the
whole vocabulary) are kept; they are the student's target (`model.distill_objective.distill_loss`).

A skill longer than the context is read by sections (docs/distill.md, "Long skills"): per question, the
teacher's context is the skill's head and the sections whose words the question shares most
(`sections.SectionIndex.focused`), as many as fit, in the skill's order. It needs no labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..scoring.sample import Sampling, sample_batch
from ..scoring.score import Item, score_all
from ..scoring.tasks import Prompter, Task
from ..synth.skill import skill_from_text
from .practice import WRITE_SAMPLING, WRITE_TOKENS, Question
from .practice_text import example_numbers, parrots
from .sections import SectionIndex

MIN_READ = 64


def _query(q: Question) -> str:
    """What the section search reads: every turn of the chat the teacher answers."""
    return "\n".join(m.get("content", "") for m in q.messages)


@dataclass
class TeacherRow:
    student: list[int]  # the prompt without the skill, then the answer
    answer_from: int  # index of the first answer token in `student`
    top_ids: Tensor  # [n, k] int64: position j predicts answer token j
    top_logp: Tensor  # [n, k] float32
    answer: list[int]
    source: str
    mean_logp: float  # the teacher's mean log-probability of its own answer
    context: str | None = None  # the skill text the teacher had: the skill, or the sections the question needs
    question: int = -1  # the index of its question in the list `rows` was given


def _task(q: Question) -> Task:
    return Task(0, "practice", "practice", "", "", messages=q.messages)


class Teacher:
    def __init__(self, backend, prompter: Prompter, stop_ids: set[int], eos: int, context: int, k: int,
                 max_answer: int, batch: int):
        """k, max_answer, batch: the recipe's top_k, max_answer and batch (distill_recipe.py)."""
        self.backend, self.prompter, self.stop_ids, self.eos = backend, prompter, stop_ids, eos
        self.context, self.k, self.max_answer, self.batch = context, k, max_answer, batch

    def _answers(self, prompts: list[list[int]], forced: list[list[int] | None]) -> list[list[int]]:
        """Greedy answers (with the end-of-turn token when the teacher stopped) or the forced ones."""
        gen = [i for i, f in enumerate(forced) if f is None]
        out: list[list[int]] = [list(f) if f is not None else [] for f in forced]
        items = [Item(prompts[i], [self.eos], self.max_answer, None) for i in gen]
        for i, sc in zip(gen, score_all(self.backend, items, self.stop_ids), strict=True):
            out[i] = sc.generated + ([self.eos] if len(sc.generated) < self.max_answer else [])
        return out

    @torch.no_grad()
    def _topk(self, prompts: list[list[int]], answers: list[list[int]]) -> list[tuple[Tensor, Tensor, float]]:
        """Per row: top-k ids and log-probabilities at the positions that predict the answer, and the
        mean log-probability of the answer itself."""
        res: list[tuple[Tensor, Tensor, float]] = []
        for s in range(0, len(prompts), self.batch):
            ps, ans = prompts[s:s + self.batch], answers[s:s + self.batch]
            width = max(len(p) + len(a) for p, a in zip(ps, ans, strict=True))
            b = len(ps)
            ids = torch.zeros(b, width, dtype=torch.int64)
            mask = torch.zeros(b, width, dtype=torch.int64)
            for r, (p, a) in enumerate(zip(ps, ans, strict=True)):  # left padding, as score_batch
                row = p + a
                ids[r, width - len(row):] = torch.tensor(row)
                mask[r, width - len(row):] = 1
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            logits, _, _ = self.backend.forward(ids, mask, pos, None, None)
            for r, a in enumerate(ans):
                n = len(a)
                pred = F.log_softmax(logits[r, width - n - 1:width - 1].float(), -1)  # [n, V]
                top = pred.topk(self.k, -1)
                own = pred.gather(-1, torch.tensor(a)[:, None])[:, 0]
                res.append((top.indices, top.values, float(own.mean())))
        return res

    def _pass(self, context: str | list[str] | None, questions: list[Question],
              numbers: set[str] | None = None) -> list[TeacherRow]:
        """context: one for every question, or one per question. numbers: the skill's Examples-only numbers
        (`practice_text.example_numbers`)."""
        room = self.max_answer + 1
        contexts = context if isinstance(context, list) else [context] * len(questions)
        prompts = [self.prompter.fit(_task(q), c, self.context - room)[0]
                   for q, c in zip(questions, contexts, strict=True)]
        forced = [None if q.answer is None else self.prompter.ids(q.answer)[:self.max_answer] + [self.eos]
                  for q in questions]
        answers = self._answers(prompts, forced)
        # A greedy answer that is another question's forced answer word for word parrots it (a small
        # teacher answers a request it cannot place with an example's reply): an empty row, dropped by
        # `rows` (docs/distill.md "Practice"). So does one that repeats an example's number the chat does
        # not hold (partial parroting, or with no forced reply to compare, as without the Examples).
        given = {q.answer.strip(): q.messages[-1]["content"] for q in questions if q.answer is not None}
        rows = []
        for q, a, (ti, tl, ml) in zip(questions, answers, self._topk(prompts, answers), strict=True):
            student = self.prompter.fit(_task(q), None, 1 << 30)[0]
            if q.answer is None:
                said = self.prompter.tok.decode([t for t in a if t not in self.stop_ids and t != self.eos]).strip()
                if given.get(said, q.messages[-1]["content"]) != q.messages[-1]["content"]:
                    a = []
                elif numbers and parrots(said, "\n".join(m.get("content", "") for m in q.messages), numbers):
                    a = []
            rows.append(TeacherRow(student + a, len(student), ti, tl, a, q.source, ml))
        return rows

    def said(self, row: TeacherRow) -> str:
        """A row's answer as text, without the stop and end-of-turn tokens."""
        return self.prompter.tok.decode([t for t in row.answer if t not in self.stop_ids and t != self.eos]).strip()

    def write(self, system: str, prompts: list[str], max_new: int = WRITE_TOKENS,
              sampling: dict[str, float] | None = WRITE_SAMPLING) -> list[str]:
        """Self-written practice (practice.Writer): one reply per prompt with `system` (the skill, cut to
        fit as in_context) as the system message, sampled as the studio's engine samples (prompt i with
        seed i, scoring/sample.py); `sampling` None: greedy."""
        max_new = min(max_new, self.context // 2)  # a small base keeps room for the skill
        # The skill cut to leave max_new positions, as the engine's chatPrompt cuts it (the same prompt ids).
        ids = [self.prompter.fit(_task(Question([{"role": "user", "content": p}], "self_written")), system,
                                 self.context - max_new)[0] for p in prompts]
        s = Sampling(**sampling) if sampling else Sampling()
        out = []
        for k in range(0, len(ids), self.batch):
            out += sample_batch(self.backend, ids[k:k + self.batch], self.stop_ids, max_new, s,
                                list(range(k, k + len(ids[k:k + self.batch]))))
        return [self.prompter.tok.decode(g) for g in out]

    def rows(self, skill: str, questions: list[Question], by_sections: bool = True) -> list[TeacherRow]:
        """One row per question with a non-empty answer. `by_sections`: a skill too long for the context is
        read as the sections each question needs (`SectionIndex.focused`); else it is cut, as in_context."""
        numbers = example_numbers(skill_from_text(skill))
        contexts: str | list[str] = skill
        if by_sections:
            room = self.context - self.max_answer - 1 - 16  # 16: the chat template's own tokens around the skill
            # at least MIN_READ tokens of skill: a tiny window reads a piece that Prompter.fit then cuts
            index = SectionIndex(skill, self._count)
            contexts = [index.focused(_query(q), max(MIN_READ, room - self._question_tokens(q))) for q in questions]
        rows = self._pass(contexts, questions, numbers)
        for i, r in enumerate(rows):
            r.question = i
            r.context = contexts[i] if isinstance(contexts, list) else skill
        return [r for r in rows if r.answer]

    def _count(self, text: str) -> int:
        return len(self.prompter.tok.encode(text, add_special_tokens=False).ids)

    def _question_tokens(self, q: Question) -> int:
        return len(self.prompter.fit(_task(q), None, 1 << 30)[0])
