"""The eval's command line (`python -m pskills_train.evals`, `pskills eval`):
--bundle DIR (--skills DIR | --suite skillworld [--n N]) --out FILE.json [...]

The base LM is the bundle's lm.onnx (onnxruntime), unless --checkpoint names an HF folder (PyTorch).
The parametric hypernetwork is the bundle's hypernet.onnx unless --hypernet-checkpoint is given;
--stage1-checkpoint / --t2l-checkpoint (default: the bundle's hypernet.ablations files, when it ships
them) take a pskills_train.hyper ckpt.pt (or its run folder) or a
hypernet .onnx. Conditions without a hypernetwork are reported as skipped, with the reason.
`--suite skillworld` generates --n test skills with pskills_train.skillworld (or reads --skillworld-dir)
and checks every condition's greedy answer. `--workers N` splits the skills over N processes
(the numbers do not depend on it).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer

from ..data.data_sets import seen_seed
from ..model import load_hf
from ..model.backend import OrtBackend, TorchBackend
from ..scoring.tasks import trained_context
from ..synth.skill import load_skills
from . import leaks, run, sw_suite, use
from .adapters import checkpoint_provider, onnx_provider
from .conditions import CONDITIONS, DISTILLED
from .core import Part, Settings, Suite, answer_cap
from .distilled import cap_tests, make_slot, read_practice, without_round_trip
from .run import Providers, SkillsSuite


def _provider(backend, tok, manifest, path: Path | None, label: str, prov: Providers, slot: str, threads: int = 1):
    if path is None:
        return None
    try:
        if path.suffix == ".onnx":
            return onnx_provider(backend, tok, path, manifest, label, threads)
        return checkpoint_provider(backend, tok, path, manifest, label)
    except (FileNotFoundError, ImportError, KeyError, ValueError, RuntimeError) as e:
        prov.why_missing[slot] = f"{path}: {type(e).__name__}: {e}"
        return None


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.evals", description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", required=True, type=Path)
    ap.add_argument("--suite", choices=("skills", "skillworld"), default="skills")
    ap.add_argument("--skills", type=Path, help="skills suite: folder of SKILL.md files (recursive) or corpus split")
    ap.add_argument("--n", type=int, default=100, help="skillworld: test skills to generate")
    ap.add_argument("--skillworld-dir", type=Path, help="skillworld: an already generated folder (tasks.jsonl)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--checkpoint", type=Path, help="HF folder of the base LM: run it in PyTorch instead of lm.onnx")
    ap.add_argument("--hypernet-checkpoint", type=Path,
                    help="parametric hypernet instead of the bundle's hypernet.onnx")
    ap.add_argument("--stage1-checkpoint", type=Path)
    ap.add_argument("--t2l-checkpoint", type=Path)
    ap.add_argument("--max-skills", type=int)
    ap.add_argument("--max-tasks-per-skill", type=int, default=Settings.max_tasks_per_skill)
    ap.add_argument("--max-answer-tokens", type=int, default=Settings.max_answer_tokens)
    ap.add_argument("--max-gen-tokens", type=int,
                    help="greedy answer tokens in every condition and the distil teacher, whatever the reference's "
                    "length; generation also stops at a stop token (default: the distil recipe's max_answer)")
    ap.add_argument("--trained-context", type=int,
                    help="positions the base was trained on (default: the training card's config.data.seq_len)")
    ap.add_argument("--retrieval-k", type=int, default=Settings.retrieval_k)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime / torch threads per process")
    ap.add_argument("--workers", type=int, default=1, help="processes, each with its share of the skills")
    ap.add_argument("--no-per-task", action="store_true", help="leave per-task rows out of the JSON")
    ap.add_argument("--distill-steps", type=int,
                    help="run the distilled conditions with K steps (docs/distill.md; recipe: --distill-recipe)")
    ap.add_argument("--distill-recipe", type=Path, help="default training/configs/distill.json")
    ap.add_argument("--practice-tests", type=_count_or_all, metavar="N|all",
                    help="with --distill-steps: at most N of each skill's own tests (a SkillWorld folder's "
                    "practice.jsonl) as practice, drawn by --seed; 0: none, all (default): every one")
    ap.add_argument("--practice-no-round-trip", action="store_true",
                    help="with --distill-steps: without the recipe's round_trip source (the teacher's tool calls "
                    "followed by a made-up result and answered again, distill/round_trip.py), to measure it")
    ap.add_argument("--length-buckets", help="skillworld: only skills of these length buckets, e.g. 256,512")
    ap.add_argument("--merge-sizes", help="skillworld with --distill-steps: merge groups of these sizes of "
                    "distilled adapters by cat, linear and svd and score their skills' tasks, e.g. 2,3,4")
    ap.add_argument("--merge-groups", type=int, help="groups per merge size (default: skills // size)")
    ap.add_argument("--merge-rehearse", type=int, default=0, metavar="K",
                    help="also score rehearsed: the merge cut to one adapter's rank, then K distillation steps over "
                    "every member's practice rows, as the studio's merge with rehearse (0: off)")
    ap.add_argument("--merge-init", choices=("zero", "instant"), default="zero",
                    help="merge members distilled from zero (default: they merge, docs/distill.md) or from the "
                    "instant adapter")
    ap.add_argument("--conditions", help="comma-separated: run only these conditions (and their curve points)")
    return ap


def _count_or_all(v: str) -> int | None:
    if v == "all":
        return None
    try:
        n = int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a count >= 0 or 'all', got {v!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0 or 'all', got {v!r}")
    return n


def table(res: dict[str, Any]) -> str:
    """Either suite's result as text."""
    return sw_suite.table(res) if res.get("suite") == "skillworld" else run.table(res)


def _only(suite: Suite, names: str | None) -> None:
    """--conditions: keep the named conditions (a distilled one keeps its curve points too)."""
    if not names:
        return
    want = [c.strip() for c in names.split(",") if c.strip()]
    unknown = [c for c in want if c not in CONDITIONS + DISTILLED]
    if unknown:
        raise SystemExit(f"--conditions: unknown {unknown}; known: {', '.join(CONDITIONS + DISTILLED)}")
    skipped = [c for c in want if c in suite.skipped]
    if skipped:
        raise SystemExit(f"--conditions: {skipped[0]} cannot run: {suite.skipped[skipped[0]]}")
    suite.conds = [c for c in suite.conds if c.partition("@")[0] in want]
    slot = suite.prov.distill
    if slot is not None and "distilled_zero" in want and slot.wrong_base not in want:
        # The adapters the report describes (diversity, retrieval, the wrong-skill control, the merges'
        # members handed back by the workers) are those of a distilled condition that runs.
        slot.wrong_base = "distilled_zero"


def build(a: argparse.Namespace, log=None) -> tuple[Suite, dict]:
    """The suite (backend, hypernetworks, skills and tasks) the arguments describe; `a.skillworld_dir` is set."""
    log = log or (lambda s: print(s, file=sys.stderr))
    torch.set_num_threads(a.threads)
    manifest = json.loads((a.bundle / "bundle.json").read_text())
    tok = Tokenizer.from_file(str(a.bundle / manifest["tokenizer"]["file"]))
    chat_template = json.loads((a.bundle / manifest["tokenizer"]["config"]).read_text())["chat_template"]
    backend: TorchBackend | OrtBackend
    if a.checkpoint:
        backend = TorchBackend(load_hf(a.checkpoint, encoder_layer=manifest["encoder"]["layer"]))
    else:
        backend = OrtBackend(a.bundle, a.threads)
    prov = Providers()
    hyper = a.hypernet_checkpoint
    if hyper is None and manifest.get("hypernet"):
        hyper = a.bundle / manifest["hypernet"]["file"]
    if hyper is None:
        prov.why_missing["parametric"] = f"{a.bundle} has no hypernet and no --hypernet-checkpoint was given"
    prov.parametric = _provider(backend, tok, manifest, hyper, "parametric", prov, "parametric", a.threads)
    # Without a flag, the bundle's own ablation hypernetworks (bundle.json hypernet.ablations).
    shipped = (manifest.get("hypernet") or {}).get("ablations", {})
    stage1 = a.stage1_checkpoint or (a.bundle / shipped["stage1_only"] if "stage1_only" in shipped else None)
    t2l = a.t2l_checkpoint or (a.bundle / shipped["t2l_baseline"] if "t2l_baseline" in shipped else None)
    prov.stage1 = _provider(backend, tok, manifest, stage1, "stage1_only", prov, "stage1", a.threads)
    prov.t2l = _provider(backend, tok, manifest, t2l, "t2l_baseline", prov, "t2l", a.threads)
    prov.why_missing.setdefault("stage1", "no --stage1-checkpoint given and the bundle ships no stage1_only hypernet")
    prov.why_missing.setdefault("t2l", "no --t2l-checkpoint given and the bundle ships no t2l_baseline hypernet")
    ctx, _ = trained_context(manifest, a.trained_context)
    gen = a.max_gen_tokens if a.max_gen_tokens is not None else answer_cap()
    if gen < 1:
        raise SystemExit("--max-gen-tokens must be >= 1")
    st = Settings(a.max_tasks_per_skill, a.max_answer_tokens, gen, a.seed, trained_context=ctx,
                  retrieval_k=a.retrieval_k, merge_sizes=_sizes(a), merge_groups=a.merge_groups,
                  merge_rehearse=a.merge_rehearse, practice_tests=a.practice_tests,
                  practice_round_trip=not a.practice_no_round_trip)
    stop = set(manifest["special_tokens"]["stop"])
    suite: Suite
    if a.suite == "skills":
        skills = load_skills(a.skills)[:a.max_skills]
        if not skills:
            raise SystemExit(f"{a.skills}: no SKILL.md files")
        _distill_slot(a, backend, tok, chat_template, manifest, ctx, skills, [[] for _ in skills], prov, gen)
        suite = SkillsSuite(backend, tok, chat_template, stop, skills, prov, st, log)
    else:
        refuse_seen_seed(manifest, a.skillworld_dir)
        buckets = {int(b) for b in a.length_buckets.split(",")} if a.length_buckets else None
        skills, tasks = sw_suite.load(a.skillworld_dir, a.max_skills, a.max_tasks_per_skill, buckets)
        names = [s.name for s in skills]
        practice = cap_tests(read_practice(a.skillworld_dir, names), names, a.practice_tests, a.seed)
        _distill_slot(a, backend, tok, chat_template, manifest, ctx, skills, practice, prov, gen)
        suite = sw_suite.SkillWorldSuite(backend, tok, chat_template, stop, skills, tasks, prov, st,
                                         sw_suite.default_check(), log)
    _only(suite, a.conditions)
    return suite, manifest


def refuse_seen_seed(manifest: dict[str, Any], folder: Path) -> None:
    """An eval on a SkillWorld seed the bundle's training card lists is refused (data/data_sets.py)."""
    mf = Path(folder) / "manifest.json"
    seed = json.loads(mf.read_text()).get("seed") if mf.is_file() else None
    why = seen_seed(manifest.get("training_card") or {}, seed) if isinstance(seed, int) else None
    if why:
        raise SystemExit(f"{folder}: {why}")


def _sizes(a: argparse.Namespace) -> tuple[int, ...]:
    if not a.merge_sizes:
        return ()
    try:
        sizes = tuple(int(x) for x in a.merge_sizes.split(",") if x.strip())
    except ValueError:
        raise SystemExit(f"--merge-sizes: expected sizes like 2,3,4, got {a.merge_sizes!r}") from None
    if a.suite != "skillworld" or a.distill_steps is None:
        raise SystemExit("--merge-sizes needs --suite skillworld and --distill-steps K (it merges distilled adapters)")
    if not sizes or min(sizes) < 1:
        raise SystemExit("--merge-sizes: every size must be >= 1")
    if a.merge_rehearse < 0:
        raise SystemExit("--merge-rehearse: K must be >= 0")
    return sizes


def _distill_slot(a, backend, tok, chat_template, manifest, ctx, skills, practice, prov: Providers,
                  gen: int) -> None:
    if a.distill_steps is None:
        if a.practice_no_round_trip:
            raise SystemExit("--practice-no-round-trip needs --distill-steps K (it drops a practice source)")
        return
    if a.distill_steps < 1:
        raise SystemExit("--distill-steps must be >= 1")
    # The teacher answers with the same cap, so it and in_context leave the same answer room.
    prov.distill = make_slot(backend, tok, chat_template, manifest, a.bundle, ctx, a.distill_steps, skills, practice,
                             prov.parametric, a.seed, a.distill_recipe, max_answer=gen)
    if a.merge_init == "zero" or prov.parametric is None:
        prov.distill.merge_base = "distilled_zero"
    if a.practice_no_round_trip:
        prov.distill.plan = without_round_trip(prov.distill.plan)


def _part(argv: list[str], indices: list[int], worker: int) -> Part:
    suite, _ = build(parser().parse_args(argv), lambda s: print(f"w{worker} {s}", file=sys.stderr, flush=True))
    return suite.run(indices)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = parser()
    a = ap.parse_args(argv)
    if a.suite == "skills" and not a.skills:
        ap.error("--skills DIR is required for the skills suite")
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="skillworld-") as tmp:
        if a.suite == "skillworld" and a.skillworld_dir is None:
            card = json.loads((a.bundle / "bundle.json").read_text()).get("training_card") or {}
            why = seen_seed(card, a.seed)
            if why:  # before generating: the world would be one the bundle saw
                raise SystemExit(f"--seed {a.seed}: {why}")
            a.skillworld_dir = sw_suite.generate(Path(tmp) / "sw", a.n, a.seed)
            argv += ["--skillworld-dir", str(a.skillworld_dir)]
        suite, manifest = build(a)
        t0 = time.perf_counter()
        n = len(suite.names)
        if a.workers > 1 and n > 1:
            shards = [list(range(w, n, a.workers)) for w in range(min(a.workers, n))]
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(len(shards), mp_context=ctx) as pool:
                parts = list(pool.map(_part, [argv] * len(shards), shards, range(len(shards))))
        else:
            parts = [suite.run(list(range(n)))]
        res = suite.assemble(parts, time.perf_counter() - t0)
        refused = leaks.refusal(res["leaks"]) or use.refusal(res.get("use"))
        if refused:  # practice trained on what is scored: no report (docs/results.md "Leaks")
            print(refused, file=sys.stderr)
            return 3
        if a.suite == "skillworld":
            mf = Path(a.skillworld_dir) / "manifest.json"
            m = json.loads(mf.read_text()) if mf.is_file() else {}
            keep = {k: m.get(k) for k in ("format", "split", "seed", "counts", "filler")}
            res["skillworld"] = {"dir": None if str(a.skillworld_dir).startswith(tmp) else str(a.skillworld_dir),
                                 "n_skills": n, **keep}
        else:
            res["skills_dir"] = str(a.skills)
    ctx_tokens, ctx_source = trained_context(manifest, a.trained_context)
    res["trained_context"] = {"tokens": ctx_tokens, "source": ctx_source,
                              "max_positions": suite.backend.cfg.max_positions}
    res["threads"], res["workers"] = a.threads, a.workers
    res["bundle"] = {"path": str(a.bundle), "id": manifest.get("id"), "backend": suite.backend.name,
                     "hypernet": str(a.hypernet_checkpoint or (manifest.get("hypernet") or {}).get("file"))}
    res["wall_seconds"] = round(time.perf_counter() - t_start, 1)  # with loading the bundle (and generating)
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    res["cpu_seconds"] = round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 1)  # every thread, workers
    res["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if a.no_per_task:
        res.pop("per_task")
        for e in (res.get("merge") or {}).values():
            if isinstance(e, dict):
                e.pop("per_task", None)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = a.out.with_name(f".{a.out.name}.tmp-{os.getpid()}")
    tmp_out.write_text(json.dumps(res, indent=1) + "\n")
    os.replace(tmp_out, a.out)
    print(table(res))
    return 0

