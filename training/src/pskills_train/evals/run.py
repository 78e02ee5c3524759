"""The real-skill suite (docs/design.md §5, `--skills DIR`): every condition on every task of every skill, answer
NLL / bpb / greedy F1 / ROUGE-L, paired bootstrap CIs over skills, adapter diversity and retrieval."""

from __future__ import annotations

import time
from typing import Any

from tokenizers import Tokenizer

from ..scoring.metrics import bits_per_byte, rouge_l, token_f1
from ..scoring.tasks import Task, skill_tasks
from ..synth.skill import Skill
from . import use
from .conditions import CONDITIONS, WITH_CONTEXT, Providers, skill_group
from .core import Done, Part, Settings, Suite
from .distilled import extras
from .report import SHORT, common_lines, comparisons, conditions, context_cuts, delta, fmt, grouped

__all__ = ["CONDITIONS", "COMPARISONS", "Providers", "Settings", "SkillsSuite", "evaluate", "table"]

# (a, b): delta = a - b. For nll/bpb negative favours a; for f1/rougeL/accuracy positive does.
# distilled rows exist on template tasks only (evals/distilled.py): these pairs are compared there
DISTILLED_PAIRS = (("distilled", "none"), ("distilled", "in_context"), ("distilled", "distilled_wrong"),
                   ("distilled_zero", "none"), ("distilled_zero", "distilled_wrong"), ("distilled_synth", "none"),
                   ("distilled", "wrong_skill"), ("in_context", "none"))
COMPARISONS = (("parametric", "none"), ("parametric", "wrong_skill"), ("parametric", "random_text"),
               ("parametric", "in_context"), ("parametric", "in_context_full"), ("in_context", "none"),
               ("in_context_full", "none"), ("parametric_in_context", "in_context"), ("wrong_skill", "none"),
               ("stage1_only", "parametric"), ("t2l_baseline", "parametric"), ("answer_in_context", "none"),
               ("adapter_from_answer", "wrong_skill"), ("adapter_from_answer", "none"))
METRICS = ("nll", "bpb", "f1", "rougeL")
RECALL = ("recall: tasks answered with the skill's own text (reconstruction: a held-out section; template: a "
          "section quoted as the answer), which cloze and template practice also force; use: the report's `use`")


class SkillsSuite(Suite):
    retrieval_tasks = "reconstruction (held-out sections; the own adapter is compiled without the section)"

    def __init__(self, backend, tok: Tokenizer, chat_template: str, stop_ids: set[int], skills: list[Skill],
                 prov: Providers, st: Settings, log=print):
        self.skills = skills
        super().__init__(backend, tok, chat_template, stop_ids, prov, st, [s.text for s in skills],
                         [skill_group(s.package, s.source_path) for s in skills], [s.name for s in skills], log)

    def tasks(self, i: int) -> list[Task]:
        n_recon = self.st.max_tasks_per_skill // 2
        return skill_tasks(i, self.skills[i], self.tok, n_recon, self.st.max_tasks_per_skill - n_recon, self.st.seed)

    def row(self, i: int, d: Done) -> dict[str, Any]:
        tok = self.tok
        ref, gen_ref = tok.decode(d.item.target), tok.decode(d.item.target[:d.item.gen_len])
        pred, n = tok.decode(d.scored.generated), d.scored.n_tokens
        return {"skill": self.skills[i].name, "skill_index": i, "task": d.task.task_id, "kind": d.task.kind,
                "task_type": d.task.kind.split(":")[0], "condition": d.cond, "prompt_tokens": len(d.item.prompt),
                "answer_tokens": n, "context_cut": d.cut if d.cond in WITH_CONTEXT else None,
                "nll": d.scored.nll_sum / max(1, n), "bpb": bits_per_byte(d.scored.nll_sum, ref),
                "f1": token_f1(pred, gen_ref), "rougeL": rouge_l(pred, gen_ref), "generated": pred}

    def own_nll(self, done: list[Done]) -> dict[str, float]:
        # retrieval on the held-out sections: the own adapter never saw the answer
        return {k: v for k, v in super().own_nll(done).items() if ":recon:" in k}

    def run(self, indices: list[int]) -> Part:
        part = super().run(indices)
        if self.prov.distill is not None and "none" in self.conds and "in_context" in self.conds:
            part.use = [use.measure(self, i) for i in indices]  # after the skill's distillations (leak count)
        return part

    def assemble(self, parts: list[Part], seconds: float) -> dict[str, Any]:
        rows = [r for p in parts for r in p.rows]
        out = report(rows, [c for c in self.conds if "@" not in c], self.skipped, self.st, seconds)
        entries = sorted((e for p in parts for e in p.use), key=lambda e: self.names.index(e["skill"]))
        if entries:
            out["use"] = use.report(entries, self.st.bootstrap, self.st.seed)
        if self.prov.distill is not None:  # distilled rows exist on template tasks only: compare there
            tmpl = lambda r: r["task_type"] == "template"  # noqa: E731
            out["distilled_on_template"] = [
                x for a, b in DISTILLED_PAIRS if a in self.conds and b in self.conds
                for m in ("nll", "f1") if (x := delta(rows, a, b, m, self.st.bootstrap, self.st.seed, tmpl))]
            records = {k: v for p in parts for k, v in p.distill.items()}
            tmpl_rows = [r for r in rows if tmpl(r)]
            out.update(extras(tmpl_rows, self.conds, records, "nll", self.prov.distill.plan.recipe.steps))
            out["recall"]["distilled_on_template"] = out["distilled_on_template"]
        res = {**out, **self.merge(parts)}
        if self.prov.distill is not None:
            # Every task a distilled adapter answers here is a recall task: its reference is the skill's text,
            # which cloze and template practice force by design. That is counted as recall, not refused; the
            # measure held apart from practice is `use` (evals/use.py), whose own leak count refuses.
            lk = res["leaks"]
            lk["forced_scored_answer_recall"], lk["forced_scored_answer"] = lk["forced_scored_answer"], 0
            res["recall"]["forced_by_practice"] = lk["forced_scored_answer_recall"]
            if "use" in res:
                lk["use_equals_practice"] = res["use"]["leaks"]["use_equals_practice"]
        return res


def evaluate(backend, tok: Tokenizer, chat_template: str, stop_ids: set[int], skills: list[Skill], prov: Providers,
             st: Settings, log=print) -> dict[str, Any]:
    """The whole suite in this process (`__main__ --workers N` splits the skills over processes)."""
    t0 = time.perf_counter()
    suite = SkillsSuite(backend, tok, chat_template, stop_ids, skills, prov, st, log)
    part = suite.run(list(range(len(skills))))
    return suite.assemble([part], time.perf_counter() - t0)


def report(per_task: list[dict[str, Any]], conds: list[str], skipped: dict[str, str], st: Settings,
           seconds: float) -> dict[str, Any]:
    return {
        "suite": "skills",
        "n_skills": len({r["skill_index"] for r in per_task}), "n_tasks": len({r["task"] for r in per_task}),
        "aggregation": "per condition: mean over skills of the mean over the skill's tasks",
        "bootstrap": {"paired": True, "unit": "skill (tasks clustered by skill)", "resamples": st.bootstrap,
                      "interval": "percentile 95%", "delta": "a - b"},
        "settings": vars(st), "seconds": round(seconds, 1),
        "conditions": conditions(per_task, conds, METRICS), "skipped": skipped,
        "context_cut": context_cuts(per_task, conds),
        "comparisons": comparisons(per_task, COMPARISONS, METRICS, set(conds), st.bootstrap, st.seed),
        # reconstruction (held-out sections, raw text) vs template (chat questions): NLL and delta vs none
        "by_task_type": grouped(per_task, "task_type", conds, "nll", st.bootstrap, st.seed),
        "recall": {"what": RECALL, "conditions": "the report's conditions and by_task_type"},
        "per_task": per_task,
    }


def table(res: dict[str, Any]) -> str:
    """The skills suite's result as text (the SkillWorld suite's: sw_suite.table; evals.table picks)."""
    lines = [f"{res['n_skills']} skills, {res['n_tasks']} tasks, {res['seconds']}s",
             "recall (reconstruction and template tasks: the skill's own text)",
             f"{'condition':<22}" + "".join(f"{m:>8}" for m in METRICS)]
    for c, r in res["conditions"].items():
        lines.append(f"{c:<22}" + "".join(fmt(r[m]) for m in METRICS))
    conds = list(res["conditions"])
    lines += ["", f"{'recall nll by type':<22}" + "".join(f"{SHORT.get(c, c):>8}" for c in conds)]
    for g, e in (res.get("by_task_type") or {}).items():
        lines.append(f"{g[:16]:<16}{e['n_tasks']:>5} " + "".join(fmt(e["nll"][c]) for c in conds))
    return "\n".join(lines + use_lines(res.get("use")) + common_lines(res))


def use_lines(u: dict[str, Any] | None) -> list[str]:
    if not u:
        return []
    out = ["", f"use ({u['n_skills']} skills, {u['requests']} requests no practice source produced)",
           f"{'condition':<22}{'nll':>8}{'kl':>8}"]
    out += [f"{c:<22}" + fmt(r["nll"]) + fmt(r["kl"]) for c, r in u["conditions"].items()]
    if (s := u.get("distilled_share")) is not None:
        out.append(f"distilled_share {s['value']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]")
    if (d := u.get("distilled_minus_distilled_wrong")) is not None:
        out.append(f"distilled - distilled_wrong nll {d['nll']:+.3f} [{d['ci95'][0]:.3f}, {d['ci95'][1]:.3f}]")
    return out
