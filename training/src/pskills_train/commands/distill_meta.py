"""Teach the hypernetwork from distillation (docs/distill.md, "Teaching the hypernetwork").

The Doc-to-LoRA objective: the adapter the hypernetwork emits in one pass, with no skill in context,
should make the base answer practice questions as the base does with the skill in context. Per step:
a few training skills, each compiled by the hypernetwork (differentiable, the base frozen), then the
student forward on some of each skill's teacher rows with that skill's adapter, and the same top-k KL
as `model.distill_objective.distill_loss`; AdamW on the hypernetwork alone.

Teacher rows come from the distiller's own teacher and practice gathering (the same recipe file), so
what the hypernetwork learns to emit is what the distilled tier would distil toward. They are computed
once per skill and cached in the run folder. The slot batch norm keeps its running statistics (the
net runs in eval mode): the exported graph then computes exactly what was trained.

    python -m pskills_train.commands.distill_meta --bundle resources/bundles/default --train SW_TRAIN --val SW_VAL \\
        --out RUN [--steps 1500] [--resume] [--export OUT_BUNDLE]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from torch import Tensor

from ..data.data_sets import merged, skillworld_set
from ..distill.practice import NoPractice, gather
from ..distill.student import _batch
from ..distill.teacher import Teacher, TeacherRow
from ..distill_recipe import load_recipe
from ..evals.distilled import read_practice
from ..evals.sw_suite import load as load_world
from ..export.manifest import MANIFEST, file_table
from ..export.staging import staged_folder
from ..hyper.compile import batch_adapters, encode_ids
from ..hyper.export import check_hypernet_graph, export_hypernet
from ..hyper.from_onnx import load_onnx_hypernet
from ..model.backend import OrtBackend
from ..model.distill_objective import distill_loss
from ..model.from_onnx import load_onnx_lm
from ..scoring.tasks import Prompter, trained_context
from ..train.config import OptimConfig
from ..train.metrics import MetricsLog
from ..train.optim import lr_at


@dataclass
class MetaConfig:
    steps: int = 1500
    lr: float = 3e-4
    min_lr: float = 3e-5
    warmup: int = 50
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    skills_per_step: int = 4
    rows_per_skill: int = 4
    buckets: tuple[int, ...] = (256, 512)
    val_skills: int = 24
    val_rows: int = 8
    eval_every: int = 100
    ckpt_every: int = 50
    seed: int = 0
    threads: int = 1


CONFIG = Path(__file__).resolve().parents[3] / "configs" / "distill-meta.json"


def load_config(path: Path = CONFIG, **override: Any) -> MetaConfig:
    raw = {**json.loads(Path(path).read_text()), **override}
    known = {f.name for f in fields(MetaConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{path}: unknown fields {unknown}; known: {', '.join(sorted(known))}")
    args: dict[str, Any] = {k: tuple(v) if k == "buckets" else v for k, v in raw.items()}
    return MetaConfig(**args)


def _rows_to_dict(rows: list[TeacherRow]) -> list[dict[str, Any]]:
    return [asdict(r) for r in rows]


def teacher_rows(bundle: Path, folder: Path, cache: Path, buckets: tuple[int, ...], limit: int | None,
                 seed: int, log=print) -> list[tuple[str, list[int], list[TeacherRow]]]:
    """(skill name, skill ids for the hypernetwork, teacher rows) per skill of a SkillWorld folder,
    cached in `cache` (a torch file rewritten atomically every few skills, so a cut run resumes)."""
    manifest = json.loads((bundle / "bundle.json").read_text())
    tok = Tokenizer.from_file(str(bundle / manifest["tokenizer"]["file"]))
    template = json.loads((bundle / manifest["tokenizer"]["config"]).read_text())["chat_template"]
    skills, _ = load_world(folder, limit, 0, set(buckets))
    practice = read_practice(folder, [s.name for s in skills])
    done: dict[str, list[dict[str, Any]]] = torch.load(cache, weights_only=False) if cache.exists() else {}
    plan = load_recipe()
    todo = [i for i, s in enumerate(skills) if s.name not in done]
    if todo:
        backend = OrtBackend(bundle, threads=1)
        ctx, _ = trained_context(manifest, None)
        prompter = Prompter(tok, template, manifest["architecture"]["max_positions"])
        teacher = Teacher(backend, prompter, set(manifest["special_tokens"]["stop"]), manifest["special_tokens"]["eos"],
                          ctx, plan.recipe.top_k, plan.recipe.max_answer, plan.recipe.batch)
        t0 = time.perf_counter()
        for n, i in enumerate(todo, 1):
            s = skills[i]
            try:
                qs = gather(s, plan.sources, tests=practice[i], seed=seed, limit=plan.questions, writer=teacher.write)
            except NoPractice:
                done[s.name] = []
                continue
            done[s.name] = _rows_to_dict(teacher.rows(s.text, qs))
            if n % 10 == 0 or n == len(todo):
                tmp = cache.with_suffix(".tmp")
                torch.save(done, tmp)
                tmp.replace(cache)
                log(f"teacher rows {folder.name}: {n}/{len(todo)} skills, {time.perf_counter() - t0:.0f}s")
    return [(s.name, encode_ids(tok, s.text), [TeacherRow(**r) for r in done[s.name]])
            for s in skills if done.get(s.name)]


class MetaTrainer:
    def __init__(self, bundle: Path, train: list, val: list, out: Path, cfg: MetaConfig, resume: bool = False):
        torch.set_num_threads(cfg.threads)
        self.cfg, self.out, self.bundle = cfg, out, bundle
        manifest = json.loads((bundle / "bundle.json").read_text())
        self.budget, self.overlap = manifest["encoder"]["token_budget"], manifest["encoder"]["chunk_overlap"]
        # the rows' own k (the recipe's top_k when they came from teacher_rows)
        self.k = min(int(r.top_ids.shape[1]) for _, _, rows in train[:8] for r in rows[:1])
        self.lm = load_onnx_lm(bundle).eval()
        for p in self.lm.parameters():
            p.requires_grad_(False)
        self.net, self.hcfg, _ = load_onnx_hypernet(bundle)
        self.net.eval()  # slot batch norm on its running statistics, as exported
        for p in self.net.parameters():
            p.requires_grad_(True)
        self.train, self.val = train, val[:cfg.val_skills]
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.ocfg = OptimConfig(lr=cfg.lr, min_lr=cfg.min_lr, warmup_steps=cfg.warmup)
        self.step = 0
        self.best: tuple[float, int] = (float("inf"), 0)  # (val KL of the own adapter, step): best.pt
        if resume and (out / "ckpt.pt").exists():
            ck = torch.load(out / "ckpt.pt", weights_only=False)
            self.net.load_state_dict(ck["net"])
            self.opt.load_state_dict(ck["opt"])
            self.step = ck["step"]
            self.best = tuple(ck.get("best", self.best))
        self.metrics = MetricsLog(out / "metrics.jsonl", self.step if resume else None)

    def logits(self, items: list, rows_per: list[list[TeacherRow]], rolls: tuple[int, ...] = (0,)):
        """The batch and the student's logits for each roll: 0 = every skill's rows under its own
        adapter, 1 = under the next skill's (the control)."""
        lora = batch_adapters(self.lm, self.net, [ids for _, ids, _ in items], self.budget, self.overlap)
        counts = torch.tensor([len(r) for r in rows_per])
        batch = _batch([r for rs in rows_per for r in rs], self.k)
        ids, mask, pos = batch[:3]
        out = []
        for roll in rolls:
            owner = torch.arange(len(items)).roll(roll).repeat_interleave(counts)
            rolled = {key: (a[owner], b[owner]) for key, (a, b) in lora.items()}
            out.append(self.lm(ids, mask, pos, None, rolled)[0])
        return batch, out

    def loss(self, items: list, rows_per: list[list[TeacherRow]], roll: int = 0) -> Tensor:
        """Mean KL of each skill's rows under its own adapter (roll=1: the next skill's, the control)."""
        (_, _, _, ans, top_ids, top_logp), (logits,) = self.logits(items, rows_per, (roll,))
        return distill_loss(logits, top_ids, top_logp, ans)

    def train_step(self) -> dict[str, float]:
        cfg = self.cfg
        rng = random.Random(f"{cfg.seed}:{self.step}")
        items = rng.sample(self.train, cfg.skills_per_step)
        rows = [rng.sample(rs, min(cfg.rows_per_skill, len(rs))) for _, _, rs in items]
        lr = lr_at(self.step, self.ocfg, cfg.steps)
        for g in self.opt.param_groups:
            g["lr"] = lr
        loss = self.loss(items, rows)
        if not torch.isfinite(loss):
            raise RuntimeError(f"meta step {self.step + 1}: non-finite loss {float(loss.detach())}")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), cfg.grad_clip)
        self.opt.step()
        self.step += 1
        return {"loss": float(loss.detach()), "lr": lr, "grad_norm": float(norm)}

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Val KL per row under the skill's own instant adapter, the next skill's, and none (zero adapter);
        and, teacher-forced, how often the student's top-1 is the teacher's greedy token on the tokens the
        base alone gets wrong (`val_top1_skill_*`: the skill's own words) and on whole answers
        (`val_rows_exact_*`: every answer token right, what greedy accuracy needs)."""
        sums: dict[str, float] = {}
        n = 0
        for s in range(0, len(self.val), self.cfg.skills_per_step):
            items = self.val[s:s + self.cfg.skills_per_step]
            if len(items) < 2:
                continue
            rows = [rs[:self.cfg.val_rows] for _, _, rs in items]
            (ids, mask, pos, ans, top_ids, top_logp), (own, wrong) = self.logits(items, rows, (0, 1))
            none = self.lm(ids, mask, pos, None, None)[0]
            greedy, answer = top_ids[..., 0], ans > 0
            skill = answer & (none.argmax(-1) != greedy)
            for name, logits in (("own", own), ("wrong", wrong), ("none", none)):
                hit = logits.argmax(-1) == greedy
                part = {f"val_kl_{name}": float(distill_loss(logits, top_ids, top_logp, ans)),
                        f"val_top1_skill_{name}": float((hit & skill).sum() / skill.sum().clamp(min=1)),
                        f"val_rows_exact_{name}": float((hit | ~answer).all(-1).float().mean())}
                for key, v in part.items():
                    sums[key] = sums.get(key, 0.0) + v
            n += 1
        return {key: v / n for key, v in sums.items()}

    def save(self) -> None:
        tmp = self.out / "ckpt.tmp"
        torch.save({"net": self.net.state_dict(), "opt": self.opt.state_dict(), "step": self.step,
                    "config": asdict(self.cfg), "hyper": self.hcfg, "best": list(self.best)}, tmp)
        tmp.replace(self.out / "ckpt.pt")

    def _keep_best(self, rec: dict[str, float]) -> None:
        """best.pt: the weights with the lowest val KL so far. With a few hundred training skills the
        hypernetwork overfits after a few epochs (docs/results.md): the export takes these."""
        if rec["val_kl_own"] < self.best[0]:
            self.best = (rec["val_kl_own"], self.step)
            tmp = self.out / "best.tmp"
            torch.save({"net": self.net.state_dict(), "step": self.step, "val_kl_own": rec["val_kl_own"]}, tmp)
            tmp.replace(self.out / "best.pt")

    def load_best(self) -> int:
        """The net takes best.pt's weights; returns its step."""
        ck = torch.load(self.out / "best.pt", weights_only=False)
        self.net.load_state_dict(ck["net"])
        return int(ck["step"])

    def fit(self, log=print) -> dict[str, float]:
        cfg = self.cfg
        last: dict[str, float] = {}
        if self.step == 0:
            last = {"step": 0, **self.evaluate()}
            self._keep_best(last)
            self.metrics.write(last)
            log(json.dumps(last))
        t0, timed = time.perf_counter(), 0
        while self.step < cfg.steps:
            rec = self.train_step()
            timed += 1
            if self.step % 10 == 0 or self.step % cfg.eval_every == 0 or self.step == cfg.steps:
                rec = {"step": self.step, **rec, "s_per_step": (time.perf_counter() - t0) / timed}
                if self.step % cfg.eval_every == 0 or self.step == cfg.steps:
                    rec.update(self.evaluate())
                    self._keep_best(rec)
                    log(json.dumps(rec))
                self.metrics.write(rec)
                last, t0, timed = rec, time.perf_counter(), 0
            if self.step % cfg.ckpt_every == 0 or self.step == cfg.steps:
                self.save()
        return last


def export(trainer: MetaTrainer, out: Path, card: dict[str, Any]) -> Path:
    """The base bundle with this run's hypernet.onnx (ablation graphs and everything else as they were),
    its file table and the hypernetwork's training card updated."""

    base = trainer.bundle
    manifest = json.loads((base / MANIFEST).read_text())
    with staged_folder(out, True) as tmp:
        for name in manifest["files"]:
            shutil.copyfile(base / name, tmp / name)
        export_hypernet(trainer.net, tmp / manifest["hypernet"]["file"])
        manifest["files"] = file_table(tmp)
        hyper_card = manifest["training_card"]["hypernet"]
        hyper_card["history"] = [*hyper_card.get("history", []), {"stage": "distill_meta", **card}]
        check_hypernet_graph(tmp / manifest["hypernet"]["file"], manifest)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.commands.distill_meta",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, required=True)
    ap.add_argument("--train", type=Path, required=True, action="append",
                    help="SkillWorld folder with practice.jsonl (train split); repeat for more")
    ap.add_argument("--val", type=Path, required=True, help="SkillWorld folder (val split)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--config", type=Path, default=CONFIG, help="MetaConfig fields (default: %(default)s)")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--max-train-skills", type=int, help="per --train folder")
    ap.add_argument("--eval-every", type=int)
    ap.add_argument("--rows-only", action="store_true", help="compute and cache the teacher rows, then stop")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--export", type=Path, help="write the bundle with the trained hypernetwork here")
    a = ap.parse_args(argv)
    given = {"steps": a.steps, "lr": a.lr, "eval_every": a.eval_every}
    cfg = load_config(a.config, **{k: v for k, v in given.items() if v is not None})
    a.out.mkdir(parents=True, exist_ok=True)
    train = [item for n, folder in enumerate(a.train) for item in teacher_rows(
        a.bundle, folder, a.out / ("rows-train.pt" if n == 0 else f"rows-train{n + 1}.pt"), cfg.buckets,
        a.max_train_skills, cfg.seed)]
    if a.rows_only:
        return 0
    val = teacher_rows(a.bundle, a.val, a.out / "rows-val.pt", cfg.buckets, cfg.val_skills, cfg.seed)
    print(f"{len(train)} training skills, {len(val)} val skills, {cfg.steps} steps")
    tr = MetaTrainer(a.bundle, train, val, a.out, cfg, a.resume)
    last = tr.fit()
    if a.export:
        best = tr.load_best()
        sets = [skillworld_set(f, "hypernetwork distill_meta --train") for f in a.train]
        card = {"steps": tr.step, "best_step": best, "config": asdict(cfg), "train_skills": len(train),
                "data_sets": merged([*sets, skillworld_set(a.val, "hypernetwork distill_meta --val")]),
                "metrics": last, "best_val_kl_own": tr.best[0]}
        print(f"bundle: {export(tr, a.export, card)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
