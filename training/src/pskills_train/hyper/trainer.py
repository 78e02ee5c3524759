"""The hypernetwork trainer: optimizer steps, validation, checkpoints and the run loop.

The base LM is frozen (requires_grad False); gradients reach the hypernetwork through the LoRA
inputs. AdamW, linear warmup + cosine, gradient accumulation (run.batch_size examples per step in
micro-batches of run.micro_batch), gradient clipping. <run.out>/ckpt.pt is written atomically every
run.ckpt_every steps and at the end; a resumed trainer continues from it exactly (the data needs no
state, hyper/batches.py). metrics.jsonl gets the train loss (overall and per objective), lr, seconds
per step and, every run.eval_every steps, the validation loss per objective on fixed held-out
examples. Stage 2 starts from run2.init (a stage-1 ckpt.pt) unless resuming.
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import nullcontext
from typing import Any

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from tqdm import tqdm

from ..config_io import repo_path
from ..model import LlamaLM
from ..train.checkpoint import load_checkpoint, save_checkpoint, set_rng_state
from ..train.config import OptimConfig
from ..train.metrics import MetricsLog
from ..train.optim import lr_at, make_optimizer
from .base import load_base
from .batches import Stage1Data, Stage2Data
from .compile import batch_adapters
from .config import HyperConfig, RunConfig
from .examples import Example, Stage1Builder
from .loss import merge_ranks, token_losses
from .net import build_hypernet
from .placement import Placement, resolve
from .similarity import mean_cosine


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
        builder = Stage1Builder(self.tok, cfg.stage1.prompt, cfg.data.max_skill_tokens, cfg.data.target_window,
                                cfg.stage1.prefix_min, cfg.stage1.prefix_max)
        self.data: Stage1Data | Stage2Data = \
            Stage1Data(cfg, self.run, builder, train_items, val_items) if stage == 1 else \
            Stage2Data(cfg, self.run, builder, self.tok, self.template, train_items, val_items)
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
                examples = self.data.micro_examples(self.step, micro)
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
        for name, examples in self.data.val.items():
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
                if evaluating and self.data.val and self.place.main:
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
