"""python -m pskills_train.evals --bundle DIR (--skills DIR | --suite skillworld [--n N]) --out FILE.json [...]

The base LM is the bundle's lm.onnx (onnxruntime), unless --checkpoint names an HF folder (PyTorch).
The parametric hypernetwork is the bundle's hypernet.onnx unless --hypernet-checkpoint is given;
--stage1-checkpoint / --t2l-checkpoint (default: the bundle's hypernet.ablations files, when it ships
them) take a pskills_train.hyper ckpt.pt (or its run folder) or a
hypernet .onnx. Conditions without a hypernetwork are reported as skipped, with the reason.
`--suite skillworld` generates --n test skills with pskills_train.skillworld (or reads --skillworld-dir)
and checks every condition's greedy answer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import torch
from tokenizers import Tokenizer

from ..synth.skill import load_skills
from .adapters import checkpoint_provider, onnx_provider
from .backend import OrtBackend, TorchBackend
from . import sw_suite
from .conditions import trained_context
from .run import Providers, Settings, evaluate, table


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


SW_GEN = 48


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.evals", description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", required=True, type=Path)
    ap.add_argument("--suite", choices=("skills", "skillworld"), default="skills")
    ap.add_argument("--skills", type=Path, help="skills suite: folder of SKILL.md files (recursive) or corpus split")
    ap.add_argument("--n", type=int, default=100, help="skillworld: test skills to generate")
    ap.add_argument("--skillworld-dir", type=Path, help="skillworld: an already generated folder (tasks.jsonl)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--checkpoint", type=Path, help="HF folder of the base LM: run it in PyTorch instead of lm.onnx")
    ap.add_argument("--hypernet-checkpoint", type=Path, help="parametric hypernet instead of the bundle's hypernet.onnx")
    ap.add_argument("--stage1-checkpoint", type=Path)
    ap.add_argument("--t2l-checkpoint", type=Path)
    ap.add_argument("--max-skills", type=int)
    ap.add_argument("--max-tasks-per-skill", type=int, default=Settings.max_tasks_per_skill)
    ap.add_argument("--max-answer-tokens", type=int, default=Settings.max_answer_tokens)
    ap.add_argument("--max-gen-tokens", type=int, help=f"greedy tokens (skills {Settings.max_gen_tokens}, "
                    f"skillworld {SW_GEN}; there at most the reference + 16)")
    ap.add_argument("--trained-context", type=int,
                    help="positions the base was trained on (default: the training card's config.data.seq_len)")
    ap.add_argument("--retrieval-k", type=int, default=Settings.retrieval_k)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-per-task", action="store_true", help="leave per-task rows out of the JSON")
    a = ap.parse_args(argv)
    if a.suite == "skills" and not a.skills:
        ap.error("--skills DIR is required for the skills suite")
    t_start = time.perf_counter()

    torch.set_num_threads(a.threads)
    manifest = json.loads((a.bundle / "bundle.json").read_text())
    tok = Tokenizer.from_file(str(a.bundle / manifest["tokenizer"]["file"]))
    chat_template = json.loads((a.bundle / manifest["tokenizer"]["config"]).read_text())["chat_template"]
    if a.checkpoint:
        from ..model import load_hf

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

    ctx, ctx_source = trained_context(manifest, a.trained_context)
    gen = a.max_gen_tokens if a.max_gen_tokens is not None else (SW_GEN if a.suite == "skillworld" else Settings.max_gen_tokens)
    st = Settings(a.max_tasks_per_skill, a.max_answer_tokens, gen, a.seed, trained_context=ctx,
                  retrieval_k=a.retrieval_k)
    stop = set(manifest["special_tokens"]["stop"])
    log = lambda s: print(s, file=sys.stderr)  # noqa: E731
    t0 = time.perf_counter()
    if a.suite == "skills":
        skills = load_skills(a.skills)[:a.max_skills]
        if not skills:
            ap.error(f"{a.skills}: no SKILL.md files")
        res = evaluate(backend, tok, chat_template, stop, skills, prov, st, log=log)
        res["skills_dir"] = str(a.skills)
    else:
        with tempfile.TemporaryDirectory(prefix="skillworld-") as tmp:
            folder = a.skillworld_dir or sw_suite.generate(Path(tmp) / "sw", a.n, a.seed)
            skills, tasks = sw_suite.load(folder, a.max_skills, a.max_tasks_per_skill)
            res = sw_suite.evaluate(backend, tok, chat_template, stop, skills, tasks, prov, st,
                                    sw_suite.default_check(), log=log)
            mf = folder / "manifest.json"
            m = json.loads(mf.read_text()) if mf.is_file() else {}
        res["skillworld"] = {"dir": str(a.skillworld_dir) if a.skillworld_dir else None, "n_skills": len(skills),
                             **{k: m.get(k) for k in ("format", "split", "seed", "counts", "filler")}}
    res["trained_context"] = {"tokens": ctx, "source": ctx_source, "max_positions": backend.cfg.max_positions}
    res["threads"] = a.threads
    res["bundle"] = {"path": str(a.bundle), "id": manifest.get("id"), "backend": backend.name,
                     "hypernet": str(hyper) if hyper else None}
    res["compile_seconds"] = {p.label: round(p.seconds, 1) for p in (prov.parametric, prov.stage1, prov.t2l) if p}
    res["seconds"] = round(time.perf_counter() - t0, 1)
    res["wall_seconds"] = round(time.perf_counter() - t_start, 1)  # with loading the bundle
    ru = resource.getrusage(resource.RUSAGE_SELF)
    res["cpu_seconds"] = round(ru.ru_utime + ru.ru_stime, 1)  # every thread of the process
    res["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if a.no_per_task:
        res.pop("per_task")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_name(f".{a.out.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(res, indent=1) + "\n")
    os.replace(tmp, a.out)
    print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
