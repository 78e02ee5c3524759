"""in_context and the distil teacher leave the same answer room, and generation stops at one fixed cap
(and the stop tokens), never at a length taken from the reference (docs/results.md)."""

from __future__ import annotations

import pytest
import torch

from pskills_train.distill.practice import Question
from pskills_train.distill.teacher import Teacher
from pskills_train.distill_recipe import load_recipe
from pskills_train.evals.conditions import Plan, Providers
from pskills_train.evals.core import Settings, answer_cap, run_conditions
from pskills_train.export.bundle import random_model
from pskills_train.model.backend import TorchBackend
from pskills_train.scoring.tasks import Prompter, Task
from pskills_train.tokenizer.chat import CHAT_TEMPLATE

torch.set_num_threads(1)
SKILL = "# Zorp\n\n## Rules\n\n" + " ".join(f"Always file report {i} with the zorp desk." for i in range(60))


class Spy(Teacher):
    """The teacher, its prompts recorded and its answers a fixed token (no generation needed)."""

    def _answers(self, prompts, forced):
        self.prompts = prompts
        return [[5] for _ in prompts]


@pytest.fixture(scope="module")
def tiny():
    lm, tok = random_model("tiny", 0, 7.0)
    return TorchBackend(lm), tok


@pytest.mark.parametrize("reference", ["ok", "zorp: report 12 is filed with the desk before noon today"])
def test_in_context_and_the_teacher_leave_the_same_room_and_generate_to_the_cap(tiny, reference):
    backend, tok = tiny
    trained, cap = 160, 12
    st = Settings(max_answer_tokens=64, max_gen_tokens=cap, bootstrap=10, trained_context=trained)
    prompter = Prompter(tok, CHAT_TEMPLATE, backend.cfg.max_positions)
    msgs = [{"role": "user", "content": "Please file report 7."}]
    task = Task(0, "t0", "skillworld", SKILL, reference, messages=msgs)
    plan = Plan(Providers(), tok, [SKILL], None, trained, backend.cfg.max_positions, 0)
    done = run_conditions(backend, prompter, plan, [task], ["in_context"], st, {3})
    assert len(done) == 1 and done[0].cut > 0  # the skill is cut to fit
    assert done[0].item.gen_len == cap  # whatever the reference's length
    assert (len(done[0].item.target) > cap + 1) == (len(reference) > 2)  # a reference longer than the cap too
    teacher = Spy(backend, prompter, {3}, 2, trained, k=4, max_answer=cap, batch=2)
    teacher.rows(SKILL, [Question(msgs, "tests")], by_sections=False)
    assert teacher.prompts[0] == done[0].item.prompt


def test_the_cap_is_the_distil_recipes_answer_length():
    assert answer_cap() == load_recipe().recipe.max_answer == Settings().max_gen_tokens
