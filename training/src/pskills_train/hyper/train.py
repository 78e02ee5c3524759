"""Train the hypernetwork: stage 1 (skill reconstruction) or stage 2 (skill exploitation), docs/design.md §1.

    python -m pskills_train.hyper.train --config training/configs/hyper/hyper9.json --stage 1|2 [--resume]
        [--set run1.max_steps=20]   (an experiment's override; the checkpoint records it beside the file's hash)
    torchrun --nproc_per_node N -m pskills_train.hyper.train ...   (DDP; hyper/placement.py)

The base LM is frozen (requires_grad False); gradients reach the hypernetwork through the LoRA
inputs. AdamW, linear warmup + cosine, gradient accumulation (run.batch_size examples per step in
micro-batches of run.micro_batch), gradient clipping. <run.out>/ckpt.pt is written atomically every
run.ckpt_every steps and at the end; `--resume` continues from it exactly (the examples of step t
are drawn from an RNG seeded by (seed, t, micro), so the data needs no state). metrics.jsonl gets
the train loss (overall and per objective), lr, seconds per step and, every run.eval_every steps,
the validation loss per objective on fixed held-out examples. Stage 2 starts from run2.init (a
stage-1 ckpt.pt) unless resuming.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import random
import time
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from tqdm import tqdm

from ..config_io import config_record, repo_path
from ..export.bundle import random_model
from ..export.from_hf import chat_template_of
from ..model import LlamaLM, ModelConfig, load_hf
from ..tokenizer import CHAT_TEMPLATE
from ..train.checkpoint import load_checkpoint, save_checkpoint, set_rng_state
from ..train.config import OptimConfig
from ..train.distributed import shutdown
from ..train.metrics import MetricsLog
from ..train.optim import lr_at, make_optimizer
from .compile import batch_adapters
from .config import HyperConfig, RunConfig
from .examples import OBJECTIVES, Example, Stage1Builder, chat_example, read_skills
from .net import build_hypernet
from .placement import Placement, resolve
from .similarity import mean_cosine


def load_base(spec: str, tokenizer: str, encoder_layer: int | None = None) -> tuple[LlamaLM, Tokenizer, str]:
    """(frozen LM, tokenizer, chat template). spec: an HF folder, `random:tiny` (export.bundle's tiny random
    model and its synthetic BPE) or `random:pretrain` (configs/pretrain.json's architecture, random weights,
    the real tokenizer), for development before the base model exists."""
    template = CHAT_TEMPLATE
    if spec == "random:tiny":
        lm, tok = random_model("tiny")
    elif spec == "random:pretrain":
        raw = json.loads(repo_path("training/configs/pretrain.json").read_text())["model"]
        torch.manual_seed(0)
        lm = LlamaLM(ModelConfig.from_dict({k: v for k, v in raw.items() if not k.startswith("_")}))
        tok = Tokenizer.from_file(str(repo_path(tokenizer)))
    else:
        folder = repo_path(spec)
        lm = load_hf(folder) if encoder_layer is None else load_hf(folder, encoder_layer=encoder_layer)
        tok_file = folder / "tokenizer.json" if (folder / "tokenizer.json").exists() else repo_path(tokenizer)
        tok = Tokenizer.from_file(str(tok_file))
        cfg_file = tok_file.with_name("tokenizer_config.json")
        if cfg_file.exists():  # the template `pskills bundle create --from-hf` ships (chat_template.jinja too)
            try:
                template = chat_template_of(tok_file.parent, json.loads(cfg_file.read_text()))
            except ValueError:
                pass  # a base model without one: ours
    lm.eval()
    for p in lm.parameters():
        p.requires_grad_(False)
    return lm, tok, template


def token_losses(lm: LlamaLM, lora, examples: list[Example], exact: bool = False) -> tuple[torch.Tensor, ...]:
    """Per-example (sum of target-token CE, number of target tokens) [b] each, teacher forced; with `exact`,
    also whether every target token is the argmax [b] (greedy decoding would produce the target exactly)."""
    seqs = [e.prompt + e.target for e in examples]
    s = max(len(x) for x in seqs) - 1
    b = len(examples)
    ids = torch.zeros(b, s, dtype=torch.int64)  # [b, s] inputs, right-padded
    labels = torch.full((b, s), -100, dtype=torch.int64)  # [b, s] next token or -100
    mask = torch.zeros(b, s, dtype=torch.int64)
    for i, (e, seq) in enumerate(zip(examples, seqs, strict=True)):
        n = len(seq) - 1
        ids[i, :n] = torch.tensor(seq[:-1])
        mask[i, :n] = 1
        nxt = torch.tensor(seq[1:])
        keep = torch.zeros(n, dtype=torch.bool)
        keep[len(e.prompt) - 1:] = True  # positions that predict target tokens
        if e.labels_mask is not None:
            keep &= torch.tensor(e.labels_mask[1:], dtype=torch.bool)
        labels[i, :n] = torch.where(keep, nxt, torch.full_like(nxt, -100))
    dev = lm.lm_head.weight.device
    ids, labels, mask = ids.to(dev), labels.to(dev), mask.to(dev)
    pos = torch.arange(s, device=dev).expand(b, s)
    logits = lm(ids, mask, pos, None, lora)[0].float()  # [b, s, V]; float: bf16 autocast gives bf16
    ce = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100, reduction="none").view(b, s)
    count = (labels != -100).sum(1)  # [b]
    if exact:
        return ce.sum(1), count, ((logits.argmax(-1) == labels) | (labels == -100)).all(1)
    return ce.sum(1), count


def merge_ranks(parts: list[Any]) -> tuple[defaultdict[str, float], defaultdict[str, int], defaultdict[str, float]]:
    """Sum each rank's (loss sums, token counts, extra terms) of one step: every rank gets the global ones."""
    sums: defaultdict[str, float] = defaultdict(float)
    counts: defaultdict[str, int] = defaultdict(int)
    extra: defaultdict[str, float] = defaultdict(float)
    for part_sums, part_counts, part_extra in parts:
        for into, part in ((sums, part_sums), (counts, part_counts), (extra, part_extra)):
            for k, v in part.items():
                into[k] += v
    return sums, counts, extra


def source_group(rec: dict[str, Any]) -> str:
    """An episode's source kind: "skillworld:lookup" -> "skillworld", "real:single:about" -> "real"."""
    return str(rec.get("source", "")).split(":")[0]


class HyperTrainer:
    def __init__(self, cfg: HyperConfig, stage: int, resume: bool = False, *,
                 base: tuple[LlamaLM, Tokenizer, str] | None = None,
                 train_items: list[Any] | None = None, val_items: list[Any] | None = None,
                 placement: Placement | None = None, config_file: dict[str, Any] | None = None):
        """`config_file`: config_io.config_record of the file `cfg` came from; the checkpoint keeps it
        and hyper.export copies it into the bundle's training card."""
        if stage not in (1, 2):
            raise ValueError(f"stage must be 1 or 2, got {stage}")
        self.cfg, self.stage, self.config_file = cfg, stage, config_file
        self.run: RunConfig = cfg.run1 if stage == 1 else cfg.run2
        self.out = self.run.out_path()
        if self.run.threads:
            torch.set_num_threads(self.run.threads)
        self.place = placement or resolve(self.run.device, self.run.bf16)
        self.lm, self.tok, self.template = base or load_base(cfg.data.base, cfg.data.tokenizer)
        self.lm.to(self.place.device)
        longest = max(cfg.encoder.token_budget, cfg.data.max_seq, cfg.data.target_window + 64)
        if longest > self.lm.cfg.max_positions:
            raise ValueError(f"encoder.token_budget / data.max_seq / target_window + prompt ({longest}) exceed the "
                             f"base LM's max_positions {self.lm.cfg.max_positions}")
        self.builder = Stage1Builder(self.tok, cfg.stage1.prompt, cfg.data.max_skill_tokens, cfg.data.target_window,
                                     cfg.stage1.prefix_min, cfg.stage1.prefix_max)
        self.skill_ids: dict[str, list[int]] = {}
        if stage == 1:
            self.train_items = train_items if train_items is not None else \
                [r["text"] for r in read_skills(repo_path(cfg.data.corpus), "skills_train")]
            val = val_items if val_items is not None else \
                [r["text"] for r in read_skills(repo_path(cfg.data.corpus), "skills_val")]
            weights = cfg.stage1.weights
            self.objectives = [o for o in OBJECTIVES if weights.get(o, 0) > 0]
            self.weights = [weights[o] for o in self.objectives]
            self.val = {o: self._val_stage1(o, val) for o in self.objectives}
        else:
            self.train_items = train_items if train_items is not None else \
                self._trajectories(cfg.data.trajectories_train)
            val = val_items if val_items is not None else self._trajectories(cfg.data.trajectories_val, missing_ok=True)
            self.val = {"chat": self._distinct_first(val, cfg.data.val_examples)} \
                if val and not cfg.stage2.source_shares else {}
            for group in cfg.stage2.source_shares:
                part = [r for r in val if source_group(r) == group]
                if part:
                    self.val[f"chat_{group}"] = self._distinct_first(part, cfg.data.val_examples)
            self.by_skill: dict[str, list[int]] = defaultdict(list)
            for i, r in enumerate(self.train_items):
                self.by_skill[str(r.get("skill"))].append(i)
            self.skill_names = sorted(self.by_skill)
            self.group_skills: dict[str, list[str]] = defaultdict(list)
            for name in self.skill_names:
                self.group_skills[source_group(self.train_items[self.by_skill[name][0]])].append(name)
            missing = [g for g in cfg.stage2.source_shares if not self.group_skills.get(g)]
            if missing:
                raise ValueError(f"stage2.source_shares: no training episodes from {missing} in "
                                 f"{cfg.data.trajectories_train} (sources: {sorted(self.group_skills)})")
            shared = sum(len(self.group_skills[g]) for g, w in cfg.stage2.source_shares.items() if w > 0)
            if cfg.stage2.source_shares and shared < self.run.micro_batch:
                raise ValueError(f"stage2.source_shares: {shared} skills in the shared sources, fewer than "
                                 f"micro_batch {self.run.micro_batch}")
        torch.manual_seed(self.run.seed)
        self.net = build_hypernet(self.lm.cfg, cfg.net).train().to(self.place.device)
        o = self.run
        self.opt = make_optimizer(self.net, OptimConfig(lr=o.lr, min_lr=o.min_lr, warmup_steps=o.warmup_steps,
                                                        weight_decay=o.weight_decay, grad_clip=o.grad_clip))
        self.ocfg = OptimConfig(lr=o.lr, min_lr=o.min_lr, warmup_steps=o.warmup_steps)
        self.step, self.history = 0, []
        if resume:
            ck = load_checkpoint(self.out)
            self.net.load_state_dict(ck["model"])
            self.opt.load_state_dict(ck["optimizer"])
            self.step, self.history = ck["step"], ck.get("history", [])
            set_rng_state(ck["rng"])
        elif self.run.init:  # stage 2 from stage 1, or either stage continued on a new base
            init = repo_path(self.run.init)
            if not init.exists():
                raise FileNotFoundError(f"{init}: no checkpoint to start stage {stage} from (run --stage 1 first, "
                                        f"or --set run{stage}.init= to start from scratch)")
            ck = torch.load(init, map_location=self.place.device, weights_only=False)
            self.net.load_state_dict(ck["model"])
            self.history = [{"stage": ck.get("stage", 1), "steps": ck.get("step"), "metrics": ck.get("last_metrics")}]
        self.model = self.place.wrap(self.net)  # DDP under torchrun; the net itself alone
        self.metrics = MetricsLog(self.out / "metrics.jsonl", self.step if resume else None) if self.place.main \
            else None
        self.last_metrics: dict[str, float] = {}

    # ---- data
    def _trajectories(self, path: str, missing_ok: bool = False) -> list[dict[str, Any]]:
        p = repo_path(path)
        if not p.exists():
            if missing_ok:
                return []
            raise FileNotFoundError(f"{p}: no trajectories (stage 2 needs the synthesizer's JSONL)")
        # .jsonl.xz / .gz: the episodes packed for a lent GPU (scripts/device-pack.sh), a tenth of the size
        unpack = {".xz": lzma.decompress, ".gz": gzip.decompress}.get(p.suffix)
        text = unpack(p.read_bytes()).decode("utf-8") if unpack else p.read_text(encoding="utf-8")
        return [json.loads(ln) for ln in text.splitlines() if ln.strip()]

    def _skill_source(self, rec: dict[str, Any]) -> list[int]:
        text = rec.get("skill_text")
        if text is None:
            if not self.skill_ids:
                for split in ("skills_train", "skills_val"):
                    for r in read_skills(repo_path(self.cfg.data.corpus), split):
                        ids = self.builder.ids(r["text"])
                        self.skill_ids[r["id"]] = ids  # corpus id = the synthesizer's source_path
                        self.skill_ids.setdefault(r["name"], ids)  # names repeat across packages: last resort
            key = rec.get("source_path") if rec.get("source_path") in self.skill_ids else rec["skill"]
            if key not in self.skill_ids:
                raise KeyError(f"trajectory skill {rec['skill']!r}: no skill_text and not in the corpus")
            return self.skill_ids[key]
        return self.builder.ids(text)

    def _chat(self, rec: dict[str, Any], source: list[int] | None = None) -> Example:
        return chat_example(self.tok, self.template, rec["messages"],
                            self._skill_source(rec) if source is None else source, self.cfg.data.max_seq)

    def _chats(self, recs: list[dict[str, Any]]) -> list[Example]:
        """_chat of each; the skill texts tokenized in one batch (the tokenizer's threads: most of the
        step's CPU time when a GPU does the rest)."""
        texts = [r["skill_text"] for r in recs if r.get("skill_text") is not None]
        done = {t: e.ids[: self.builder.max_skill]
                for t, e in zip(texts, self.tok.encode_batch(texts, add_special_tokens=False), strict=True)}
        return [self._chat(r, done.get(r.get("skill_text"))) for r in recs]

    def _distinct_first(self, recs: list[dict[str, Any]], n: int) -> list[Example]:
        """Up to n validation examples, one per skill first, so the in-batch negatives are other skills."""
        seen: set[Any] = set()
        first: list[dict[str, Any]] = []
        rest: list[dict[str, Any]] = []
        for r in recs:
            (rest if r.get("skill") in seen else first).append(r)
            seen.add(r.get("skill"))
        return [self._chat(r) for r in (first + rest)[:n]]

    def _val_stage1(self, objective: str, texts: list[str]) -> list[Example]:
        rng = random.Random(f"val:{objective}")
        order = rng.sample(range(len(texts)), min(len(texts), self.cfg.data.val_examples))
        return [self.builder.build(objective, texts[i], rng) for i in order]

    def micro_examples(self, step: int, micro: int) -> list[Example]:
        rng = random.Random(f"{self.run.seed}:{self.stage}:{step}:{micro}")
        if self.stage == 2 and self.cfg.stage2.distinct_skills and len(self.skill_names) >= self.run.micro_batch:
            recs = []
            for name in self._pick_skills(rng):
                idx = self.by_skill[name]
                recs.append(self.train_items[idx[rng.randrange(len(idx))]])
            return self._chats(recs)
        if self.stage == 2:
            return self._chats([self.train_items[rng.randrange(len(self.train_items))]
                                for _ in range(self.run.micro_batch)])
        out = []  # stage 1: draws interleaved as before, so runs and resumes keep their data
        for _ in range(self.run.micro_batch):
            item = self.train_items[rng.randrange(len(self.train_items))]
            out.append(self.builder.build(rng.choices(self.objectives, self.weights)[0], item, rng))
        return out

    def _pick_skills(self, rng: random.Random) -> list[str]:
        """micro_batch distinct skill names: uniform over skills, or by stage2.source_shares per source."""
        shares = self.cfg.stage2.source_shares
        if not shares:
            return rng.sample(self.skill_names, self.run.micro_batch)
        groups = list(shares)
        if self.cfg.stage2.stratify:
            pool = self.group_skills[rng.choices(groups, [shares[g] for g in groups])[0]]
            return rng.sample(pool, min(self.run.micro_batch, len(pool)))
        chosen: list[str] = []
        while len(chosen) < self.run.micro_batch:
            pool = self.group_skills[rng.choices(groups, [shares[g] for g in groups])[0]]
            name = pool[rng.randrange(len(pool))]
            if name not in chosen:
                chosen.append(name)
        return chosen

    # ---- steps
    def losses(self, examples: list[Example], with_lora: bool = False, net: torch.nn.Module | None = None):
        """`net`: the module to run (default: the DDP wrapper under torchrun, whose forward syncs ranks)."""
        enc = self.cfg.encoder
        with self.place.autocast():
            lora = batch_adapters(self.lm, net or self.model, [e.source for e in examples], enc.token_budget,
                                  enc.chunk_overlap)
            tot, cnt = token_losses(self.lm, lora, examples)
        return (tot, cnt, lora) if with_lora else (tot, cnt)

    def _val_batch(self, batch: list[Example]):
        """Validation: (CE sums, token counts, exact-match flags, adapters) of one micro-batch, rank 0 alone."""
        enc = self.cfg.encoder
        with self.place.autocast():
            lora = batch_adapters(self.lm, self.net, [e.source for e in batch], enc.token_budget, enc.chunk_overlap)
            tot, cnt, hit = token_losses(self.lm, lora, batch, exact=True)
        return tot, cnt, hit, lora

    def contrast(self, examples: list[Example], lora, tot: torch.Tensor, cnt: torch.Tensor):
        """Each example's loss with the next row's adapter (another skill's): (hinge term, neg sum)."""
        rolled = {k: (a.roll(1, 0), b.roll(1, 0)) for k, (a, b) in lora.items()}
        with self.place.autocast():
            neg, _ = token_losses(self.lm, rolled, examples)
        c = cnt.clamp(min=1)
        hinge = F.relu(self.cfg.stage2.margin + tot / c - neg / c).mean()
        return hinge, neg

    def train_step(self) -> dict[str, float]:
        run = self.run
        lr = lr_at(self.step, self.ocfg, run.max_steps)
        for group in self.opt.param_groups:
            group["lr"] = lr
        accum = run.batch_size // run.micro_batch
        sums: defaultdict[str, float] = defaultdict(float)
        counts: defaultdict[str, int] = defaultdict(int)
        s2 = self.cfg.stage2
        extra: defaultdict[str, float] = defaultdict(float)
        micros = self.place.micro_indices(accum)  # all of them alone; this rank's share under torchrun
        for n, micro in enumerate(micros):
            # DDP averages gradients over ranks once, on the last backward of the step
            sync = self.model is self.net or n == len(micros) - 1
            with nullcontext() if sync else self.model.no_sync():  # type: ignore[operator]
                examples = self.micro_examples(self.step, micro)
                tot, cnt, lora = self.losses(examples, with_lora=True)
                loss = tot.sum() / cnt.sum().clamp(min=1)
                if self.stage == 2:
                    extra["cos"] += mean_cosine(lora) / accum
                if self.stage == 2 and s2.contrast_weight > 0:
                    hinge, neg = self.contrast(examples, lora, tot, cnt)
                    loss = loss + s2.contrast_weight * hinge
                    extra["hinge"] += float(hinge.detach()) / accum
                    extra["loss_neg"] += float(neg.detach().sum() / cnt.sum().clamp(min=1)) / accum
                (loss / len(micros)).backward()  # × world / accum, and DDP divides by world
            for e, t, c in zip(examples, tot.tolist(), cnt.tolist(), strict=True):  # one loss per example
                sums[e.objective] += t
                counts[e.objective] += c
        sums, counts, extra = merge_ranks(self.place.gather((dict(sums), dict(counts), dict(extra))))
        if run.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), run.grad_clip)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.step += 1
        out = {"loss": sum(sums.values()) / max(1, sum(counts.values())), "lr": lr}
        out.update({f"loss_{o}": sums[o] / counts[o] for o in sums if counts[o]})
        out.update(extra)
        if getattr(self.net, "shared_share", None) and self.cfg.net.shared_rank:
            out["shared_norm"] = self.net.shared_share()
        return out

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        self.net.eval()
        out = {}
        for name, examples in self.val.items():
            if not examples:
                continue
            tot, cnt, neg, cos, exact = 0.0, 0, 0.0, [], 0
            for i in range(0, len(examples), self.run.micro_batch):
                batch = examples[i: i + self.run.micro_batch]
                t, c, hit, lora = self._val_batch(batch)
                tot, cnt, exact = tot + float(t.sum()), cnt + int(c.sum()), exact + int(hit.sum())
                if self.stage == 2 and len(batch) > 1:
                    neg += float(self.contrast(batch, lora, t, c)[1].sum())
                    cos.append(mean_cosine(lora))
            out[f"val_loss_{name}"] = tot / max(1, cnt)
            if name.startswith("chat"):  # greedy exact match of the assistant turns, teacher forced
                out[f"val_exact_{name}"] = exact / len(examples)
            if cos:  # own adapter vs the next row's (another skill's) on the same held-out examples
                out[f"val_loss_wrong_{name}"] = neg / max(1, cnt)
                out[f"val_cos_{name}"] = sum(cos) / len(cos)
        self.net.train()
        return out

    def save(self) -> None:
        if not self.place.main:
            return
        save_checkpoint(self.out, self.net, self.opt, self.step, 0, self.cfg.to_dict(),
                        extra={"lm_config": self.lm.cfg.to_dict(), "stage": self.stage, "history": self.history,
                               "last_metrics": self.last_metrics, "params": self.net.num_params(),
                               **({"config_file": self.config_file} if self.config_file else {})})

    def fit(self, progress: bool = True) -> dict[str, float]:
        run = self.run
        bar = tqdm(total=run.max_steps, initial=self.step, unit="step", disable=not progress or not self.place.main)
        t0, c0, timed = time.perf_counter(), time.process_time(), 0
        start = t0
        window: list[float] = []
        s2 = self.cfg.stage2
        while self.step < run.max_steps:
            rec = self.train_step()
            timed += 1
            if "cos" in rec:
                window.append(rec["cos"])
            if self.stage == 2 and s2.cos_check_step and self.step == s2.cos_check_step:
                cos = sum(window[-run.log_every:]) / max(1, len(window[-run.log_every:]))
                if cos > s2.cos_stop_above:
                    why = (f"stopped at step {self.step}: mean in-batch cosine of ΔW {cos:.3f} is above "
                           f"stage2.cos_stop_above {s2.cos_stop_above} (adapters stay alike)")
                    if self.metrics:
                        self.metrics.write({"step": self.step, "stopped": why})
                    self.save()
                    bar.close()
                    raise SystemExit(why)
            bar.update(1)
            out_of_time = run.max_minutes > 0 and time.perf_counter() - start >= run.max_minutes * 60
            if run.max_minutes > 0 and self.place.dist.world > 1:  # every rank stops where rank 0 does
                out_of_time = bool(self.place.gather(out_of_time)[0])
            last = self.step == run.max_steps or out_of_time
            evaluating = self.step % run.eval_every == 0 or last
            if self.step % run.log_every == 0 or evaluating:
                rec = {"step": self.step, **rec, "s_per_step": (time.perf_counter() - t0) / timed,
                       "cpu_s_per_step": (time.process_time() - c0) / timed}
                if evaluating and self.val and self.place.main:
                    rec.update(self.evaluate())
                self.last_metrics = rec
                if self.metrics:
                    self.metrics.write(rec)
                bar.set_postfix(loss=f"{rec['loss']:.3f}")
                t0, c0, timed = time.perf_counter(), time.process_time(), 0
            if self.step % run.ckpt_every == 0 or last:
                self.save()
            if out_of_time:
                if self.metrics:
                    self.metrics.write({"step": self.step, "stopped": f"run.max_minutes {run.max_minutes} reached "
                                        f"at step {self.step} of {run.max_steps}"})
                break
        bar.close()
        return self.last_metrics


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.hyper.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True, type=Path)
    ap.add_argument("--stage", required=True, type=int, choices=[1, 2])
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    ap.add_argument("--resume", action="store_true", help="continue from <run.out>/ckpt.pt")
    ap.add_argument("--backend", choices=["nccl", "gloo"], help="torchrun process group (default: nccl on cuda)")
    args = ap.parse_args(argv)
    cfg = HyperConfig.load(args.config, args.set)
    run = cfg.run1 if args.stage == 1 else cfg.run2
    place = resolve(run.device, run.bf16, args.backend)
    trainer = HyperTrainer(cfg, args.stage, args.resume, placement=place,
                           config_file=config_record(args.config, args.set))
    try:
        _fit(trainer, cfg, args.resume)
    finally:
        shutdown(place.dist)


def _fit(trainer: HyperTrainer, cfg: HyperConfig, resume: bool) -> None:
    place = trainer.place
    if not place.main:
        trainer.fit(progress=False)
        return
    print(f"device {place.device}, bf16 {place.bf16}, {place.dist.world} process(es)")
    print(f"hypernet {cfg.net.kind}: {trainer.net.num_params() / 1e6:.2f} M parameters; base "
          f"{trainer.lm.num_params() / 1e6:.2f} M (frozen); {len(trainer.train_items)} training items")
    if resume:
        print(f"resuming at step {trainer.step}")
    trainer.fit()
    print(json.dumps(trainer.last_metrics))


if __name__ == "__main__":
    main()
