"""Use: real skills scored on requests no practice source produced (docs/results.md "Real held-out skills, use").

Recall (the template, cloze and reconstruction tasks) asks for text the skill holds, which practice
also forces. Use asks requests that use the skill and scores each condition against what the
in-context teacher (the base with the skill in context, the distil teacher, the same answer cap)
answers greedily:

- held-out forms: the request synthesizer's forms are split in two by a fixed rule: practice
  (distill/practice_synth.py FRAMES, SLOT_FORMS) may use one half, `USE_FRAMES` / `USE_SLOT_FORMS`
  here are only ever scored; the topics still come one section after another from the skill's text;
- self-written: the teacher writes requests with another prompt and another seed than practice's
  (`USE_WRITE_PROMPT`, headings in a seeded order), greedy (practice samples), filtered as practice
  filters its own.

Per condition and skill: the mean per-token NLL of the teacher's answer, and the full KL from the
teacher's next-token distribution to the student's at each answer position. `distilled_share` =
(none − distilled) / (none − in_context) on NLL, with a bootstrap CI over skills. A request equal to a
question any distillation of the skill practised on is counted (`leaks.use_equals_practice`) and the
eval refuses to report when the count is not 0.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..distill.practice import Question, filter_written
from ..distill.practice_synth import LEXICON, _fill, _topics, slots_of
from ..distill.practice_text import fnv, own_body, pick
from ..distill.teacher import Teacher, TeacherRow
from ..model.lora import stack_rows
from ..scoring.metrics import paired_bootstrap
from ..scoring.tasks import Task
from ..synth.skill import Skill
from ..synth.template import section_kind
from .leaks import _prompt

# The scored half of the synthesizer's forms: no practice source uses them (tests/test_evals_use.py).
USE_FRAMES = (
    "Could you sort out {s}? {T}.",
    "{T}. I'm looking at {s} right now.",
    "Quick one about {s}: {t}.",
    "Take a look at {s} for me.",
    "How would you deal with {s}?",
    "Here's {s}. Go ahead with {name}.",
)
USE_SLOT_FORMS = (
    "the {noun} that {person} sent",
    "our {noun} for {when}",
    "a {noun} numbered {num}",
    'the "{title}" {noun}',
)
USE_WRITE_PROMPT = (
    "List {n} messages someone could send to an assistant that follows this skill{about}. Make each one"
    " concrete and different. One message per line, nothing else."
)
USE_SEED = 7919  # added to the eval's seed: practice draws with the seed itself
N_REQUESTS = 12
N_WRITE_PROMPTS = 4
METRICS = ("nll", "kl")
LEAK = "use_equals_practice"


def _slot(skill: Skill, nouns: list[str], numbers: list[str], seed: int, i: int) -> str:
    key = (seed, skill.name, "use-slot", i)
    pool = list(dict.fromkeys([*nouns, *LEXICON["nouns"]]))
    num = pick(numbers, *key, "m") if numbers and fnv(*key, "d") % 3 == 0 else str(2 + fnv(*key, "v") % 498)
    return _fill(pick(USE_SLOT_FORMS, *key, "f"), noun=pick(pool, *key, "n"), num=num,
                 person=pick(LEXICON["people"], *key, "p"), when=pick(LEXICON["when"], *key, "w"),
                 title=pick(LEXICON["names"], *key, "t"))


def held_out_requests(skill: Skill, n: int, seed: int) -> list[str]:
    """Requests in the held-out forms, one section after another (the description first)."""
    nouns, numbers = slots_of(skill.text)
    units: list[list[str]] = [_topics(skill.description)] if skill.description else []
    for i, sec in enumerate(skill.sections):
        if section_kind(sec.heading) != "examples" and own_body(skill, i).strip():
            units.append(_topics(own_body(skill, i)))
    if not units:
        return []
    out: list[str] = []
    for i in range(n * 6):
        if len(out) >= n:
            break
        topics = units[i % len(units)]
        frames = USE_FRAMES if topics else tuple(f for f in USE_FRAMES if "{T}" not in f and "{t}" not in f)
        topic = pick(topics, seed, skill.name, "use-topic", i) if topics else ""
        q = _fill(pick(frames, seed, skill.name, "use-frame", i), T=topic[:1].upper() + topic[1:],
                  t=topic[:1].lower() + topic[1:] if re.match(r"^[A-Z][a-z]", topic) else topic,
                  s=_slot(skill, nouns, numbers, seed, i), name=skill.name)
        if q not in out:
            out.append(q)
    return out


def write_prompts(skill: Skill, seed: int) -> list[str]:
    heads = sorted((s.heading for s in skill.sections), key=lambda h: fnv(seed, skill.name, "use-write", h))
    abouts = ["", *(f' about "{h}"' for h in heads)][:N_WRITE_PROMPTS]
    return [USE_WRITE_PROMPT.replace("{n}", "3").replace("{about}", a) for a in abouts]


def questions(skill: Skill, teacher: Teacher, seed: int, written: bool = True,
              practised: list[list[Question]] | None = None) -> tuple[list[Question], dict]:
    """The use requests of one skill (held-out forms, then self-written) and the drop counts. A request
    equal to a question the skill practised on is dropped (`equals_practice`): a greedy writer can write
    the same request under two prompts."""
    s = seed + USE_SEED
    qs = [Question([{"role": "user", "content": q}], "held_out_forms") for q in held_out_requests(skill, N_REQUESTS, s)]
    dropped: dict[str, int] = {}
    if written:
        seen = {q.messages[0]["content"].lower() for q in qs}
        kept, dropped = filter_written(teacher.write(skill.text, write_prompts(skill, s), sampling=None), skill.text,
                                       seen)
        qs += [Question([{"role": "user", "content": q}], "self_written") for q in kept]
    asked = {_prompt(q.messages) for p in practised or [] for q in p}
    dropped["equals_practice"] = sum(_prompt(q.messages) in asked for q in qs)
    return [q for q in qs if _prompt(q.messages) not in asked], dropped


def leak_count(use: list[Question], practised: list[list[Question]]) -> dict[str, Any]:
    """Use requests whose chat equals a question any distillation of the skill practised on."""
    prompts = {_prompt(q.messages) for qs in practised for q in qs}
    equal = [q for q in use if _prompt(q.messages) in prompts]
    return {LEAK: len(equal), "shown": [q.messages[-1]["content"][:160] for q in equal[:5]]}


@torch.no_grad()
def logprobs(backend, cfg, rows: list[TeacherRow], prompts: list[list[int]], adapter, batch: int = 8) -> list[Tensor]:
    """Per teacher row: log-softmax [n, V] at the positions that predict its answer, for a model that sees
    `prompts[r]` then the answer, with `adapter` (or none)."""
    out = []
    for s in range(0, len(rows), batch):
        rs, ps = rows[s:s + batch], prompts[s:s + batch]
        width = max(len(p) + len(r.answer) for p, r in zip(ps, rs, strict=True))
        b = len(rs)
        ids = torch.zeros(b, width, dtype=torch.int64)
        mask = torch.zeros(b, width, dtype=torch.int64)
        for k, (p, r) in enumerate(zip(ps, rs, strict=True)):  # left padding, as the teacher's pass
            seq = p + r.answer
            ids[k, width - len(seq):] = torch.tensor(seq)
            mask[k, width - len(seq):] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        lora = stack_rows(cfg, [adapter] * b) if adapter is not None else None
        logits, _, _ = backend.forward(ids, mask, pos, None, lora)
        out += [torch.log_softmax(logits[k, width - len(r.answer) - 1:width - 1].float(), -1)
                for k, r in enumerate(rs)]
    return out


def nll_kl(rows: list[TeacherRow], teacher: list[Tensor], student: list[Tensor]) -> list[tuple[float, float]]:
    """Per row: the student's mean NLL of the teacher's answer and its mean full KL(teacher || student)."""
    out = []
    for r, lp, lq in zip(rows, teacher, student, strict=True):
        nll = -lq.gather(-1, torch.tensor(r.answer)[:, None])[:, 0].mean()
        kl = (lp.exp() * (lp - lq)).sum(-1).clamp(min=0).mean()
        out.append((float(nll), float(kl)))
    return out


def measure(suite, i: int) -> dict[str, Any]:
    """One skill's use entry: per condition mean NLL and KL over its use requests, the requests' sources,
    drops and the leak count against every distillation of the skill this process ran."""
    slot = suite.prov.distill
    teacher: Teacher = slot.distiller.teacher
    skill = suite.skills[i]
    practised = [slot.distiller.teacher_rows(skill, slot.plan.synth_sources if base == "distilled_synth"
                                             else slot.plan.sources, tests=slot.practice[i])[0]
                 for (base, j) in slot.done if j == i]
    qs, dropped = questions(skill, teacher, suite.st.seed, practised=practised)
    entry: dict[str, Any] = {"skill": skill.name, "requests": len(qs), "dropped": dropped,
                             "sources": {s: sum(q.source == s for q in qs) for s in ("held_out_forms", "self_written")},
                             "leaks": leak_count(qs, practised), "conditions": {}}
    rows = teacher.rows(skill.text, qs)
    entry["scored"] = len(rows)
    entry["teacher_focused"] = sum(r.context != skill.text for r in rows)  # a long skill: read by sections
    if not rows:
        return entry
    bare = [r.student[:r.answer_from] for r in rows]
    room = teacher.max_answer + 1
    of = {tuple(suite.prompter.fit(_task(q), None, 1 << 30)[0]): q for q in qs}  # Teacher.rows drops empties
    asked = [_task(of[tuple(b)]) for b in bare]
    # the teacher's own prompts: the skill (or, for a long one, the sections the request needs) in context
    fit = lambda t, ctx: suite.prompter.fit(t, ctx, teacher.context - room)[0]  # noqa: E731
    own = [fit(t, r.context) for t, r in zip(asked, rows, strict=True)]
    lp = logprobs(suite.backend, suite.backend.cfg, rows, own, None)
    for cond in use_conditions(suite.conds):
        ad = None
        if cond == "in_context":  # cut as in_context cuts it
            ps = [fit(t, skill.text) for t in asked]
        else:
            ps = bare
            if cond != "none":
                ad = suite.plan.full_adapter(i) if cond == "parametric" else slot.adapter(cond, i)
        sc = nll_kl(rows, lp, logprobs(suite.backend, suite.backend.cfg, rows, ps, ad))
        entry["conditions"][cond] = {m: float(np.mean([x[k] for x in sc])) for k, m in enumerate(METRICS)}
    return entry


def _task(q: Question) -> Task:
    return Task(0, "use", "use", "", "", messages=q.messages)


USE_CONDITIONS = ("none", "in_context", "parametric", "distilled", "distilled_zero", "distilled_synth",
                  "distilled_wrong")


def use_conditions(conds: list[str]) -> list[str]:
    return [c for c in USE_CONDITIONS if c in conds]


def share(none: list[float], dist: list[float], ctx: list[float], resamples: int, seed: int) -> dict[str, Any]:
    """(none − distilled) / (none − in_context) of the means over skills, with a bootstrap CI over skills
    (the same resample of skills for the three)."""
    a, d, c = (np.asarray(x, np.float64) for x in (none, dist, ctx))

    def ratio(idx: np.ndarray) -> np.ndarray:
        gap = a[idx].mean(-1) - c[idx].mean(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (a[idx].mean(-1) - d[idx].mean(-1)) / gap

    n = len(a)
    point = float(ratio(np.arange(n)[None])[0])
    boot = ratio(np.random.default_rng(seed).integers(0, n, (resamples, n)))
    boot = np.sort(boot[np.isfinite(boot)])
    ci = [float(boot[int(0.025 * (len(boot) - 1))]), float(boot[int(np.ceil(0.975 * (len(boot) - 1)))])] \
        if len(boot) else [None, None]
    return {"value": point, "ci95": ci, "n_skills": n, "formula": "(none - distilled) / (none - in_context), NLL"}


def report(entries: list[dict[str, Any]], resamples: int, seed: int) -> dict[str, Any]:
    """The report's `use` block from the per-skill entries."""
    scored = [e for e in entries if e["conditions"]]
    conds = [c for c in USE_CONDITIONS if scored and all(c in e["conditions"] for e in scored)]
    col = {c: {m: [e["conditions"][c][m] for e in scored] for m in METRICS} for c in conds}
    out: dict[str, Any] = {
        "what": "NLL (nats per token) and top-k KL of the in-context teacher's greedy answers to requests no "
                "practice source produced: the synthesizer's held-out forms and self-written requests of "
                "another seed; mean over skills of the mean over a skill's requests",
        "n_skills": len(scored), "requests": sum(e["scored"] for e in scored),
        "sources": {s: sum(e["sources"][s] for e in entries) for s in ("held_out_forms", "self_written")},
        "conditions": {c: {m: float(np.mean(col[c][m])) for m in METRICS} for c in conds},
        "leaks": {LEAK: sum(e["leaks"][LEAK] for e in entries),
                  "shown": [f"{e['skill']}: {s}" for e in entries for s in e["leaks"]["shown"]][:10]},
        "per_skill": entries,
    }
    if {"none", "in_context", "distilled"} <= set(conds):
        out["distilled_share"] = share(col["none"]["nll"], col["distilled"]["nll"], col["in_context"]["nll"],
                                       resamples, seed)
    for a, b in (("distilled", "distilled_wrong"), ("distilled", "none"), ("in_context", "none")):
        if a in conds and b in conds:
            d, (lo, hi) = paired_bootstrap(col[a]["nll"], col[b]["nll"], resamples, seed)
            out[f"{a}_minus_{b}"] = {"nll": d, "ci95": [lo, hi]}
    return out


def refusal(use: dict[str, Any] | None) -> str | None:
    """The message the eval exits with when a scored use request equals a practice question."""
    if not use or not use["leaks"][LEAK]:
        return None
    return "\n".join([f"refusing to report: {use['leaks'][LEAK]} use requests equal a practice question "
                      "(docs/results.md \"Real held-out skills, use\")", *(f"  {s}" for s in use["leaks"]["shown"])])
