"""Pretrain the base LM on the corpus, on one process or several under torchrun (DDP).

    python -m pskills_train.train.pretrain --config training/configs/pretrain.json [--resume] [--set run.bf16=true]
    torchrun --nproc_per_node 2 -m pskills_train.train.pretrain --config ...   # same global batch

Writes <run.out>/ckpt.pt every run.ckpt_every steps (atomically), metrics.jsonl (step, loss, lr,
tokens seen, tokens/s, held-out loss and bits per byte on docs and skills) and, at the end,
model/ (config.json + model.safetensors in Hugging Face's layout).

`kill -TSTP <pid>` pauses a run (to benchmark something on the same cores) and `kill -CONT <pid>`
resumes it; paused time is left out of the logged tokens/s and so of the card's training time.

With run.init_from the run continues an earlier one (a second phase with its own schedule): it starts
from that run's checkpoint and metrics, and its checkpoints list the earlier phases' configs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from torch import Tensor
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from ..data.token_memmap import build_token_files, load_tokens, token_bytes
from ..model import LlamaLM, save_hf
from ..model.from_onnx import load_onnx_lm
from . import precision
from .checkpoint import load_checkpoint, save_checkpoint, set_rng_state
from .config import PretrainConfig
from .data import WindowStream, eval_windows
from .distributed import Dist, init_distributed, shutdown
from .episodes import EpisodeStream
from .evaluate import evaluate
from .metrics import MetricsLog
from .optim import lr_at, make_optimizer
from .probe import Probe

VAL_SPLITS = ("docs_val", "skills_val")


class Pretrainer:
    def __init__(self, cfg: PretrainConfig, d: Dist, resume: bool):
        self.cfg, self.d = cfg, d
        self.accum = cfg.check(d.world)
        self.out = cfg.run.out_path()
        torch.set_num_threads(cfg.run.threads or max(1, (torch.get_num_threads() or 1) // d.world))
        tok_dir = cfg.data.path("tokens")
        if d.main:
            build_token_files(cfg.data.path("corpus"), cfg.data.path("tokenizer"), tok_dir)
        d.barrier()
        tok = Tokenizer.from_file(str(cfg.data.path("tokenizer")))
        if tok.get_vocab_size() > cfg.model.vocab_size:
            raise ValueError(f"tokenizer has {tok.get_vocab_size()} tokens, model.vocab_size is {cfg.model.vocab_size}")
        self.byte_table = torch.zeros(cfg.model.vocab_size, dtype=torch.int64)  # [V]
        self.byte_table[:tok.get_vocab_size()] = torch.from_numpy(token_bytes(tok))
        self.stream = WindowStream(load_tokens(tok_dir / "train.bin"), cfg.data.seq_len, cfg.run.seed)
        self.val = {}
        eval_len = cfg.data.eval_seq_len or cfg.data.seq_len
        for name in VAL_SPLITS:
            tokens = load_tokens(tok_dir / f"{name}.bin")
            if len(tokens) > eval_len:
                self.val[name] = eval_windows(tokens, eval_len, cfg.data.eval_windows)  # [n, L + 1]
        self.episodes = None
        if cfg.data.episode_share > 0:
            template = json.loads(cfg.data.path("chat_template").read_text())["chat_template"]
            eos = tok.token_to_id("<|endoftext|>")
            if eos is None:
                raise ValueError(f"{cfg.data.path('tokenizer')}: no <|endoftext|> token to separate and pad "
                                 "episodes with (data.episode_share > 0)")
            sep = eos
            self.episodes = EpisodeStream(cfg.data.path("episodes"), tok, template, cfg.data.seq_len, cfg.run.seed,
                                          sep, eos, need_answers=cfg.data.episode_loss != "all")
            if d.main:
                print(f"episodes: {self.episodes.count} in {len(self.episodes.windows)} windows "
                      f"({self.episodes.dropped} longer than a window dropped)", flush=True)
        self.probe = None
        if cfg.data.probe_episodes:
            template = json.loads(cfg.data.path("chat_template").read_text())["chat_template"]
            self.probe = Probe(cfg.data.path("probe_episodes"), tok, template, cfg.data.seq_len, cfg.data.probe_count,
                               tok.token_to_id("<|endoftext|>") or 0)
        torch.manual_seed(cfg.run.seed)
        self.model = LlamaLM(cfg.model).train()
        if cfg.run.init_bundle and not resume:

            start = load_onnx_lm(cfg.run.init_bundle_path())
            if start.cfg.to_dict() | {"lora_targets": None, "encoder_layer": None} != \
                    cfg.model.to_dict() | {"lora_targets": None, "encoder_layer": None}:
                raise ValueError(f"run.init_bundle {cfg.run.init_bundle}: "
                                 "its architecture differs from this config's model")
            self.model.load_state_dict(start.state_dict())
        self.opt = make_optimizer(self.model, cfg.optim)
        self.step, self.position = 0, 0
        self.start, self.phases = 0, []  # the step this config's schedule began at; earlier phases
        init = cfg.run.init_path()  # None without run.init_from
        source = self.out if resume else init
        if source is not None:
            ck = load_checkpoint(source)
            if not resume and ck["config"]["model"] != cfg.model.to_dict():
                raise ValueError(f"run.init_from {init}: its model config differs from this config's model")
            self.model.load_state_dict(ck["model"])
            self.opt.load_state_dict(ck["optimizer"])
            self.step, self.position = ck["step"], ck["position"]
            set_rng_state(ck["rng"])
            self.start, self.phases = ck.get("start_step", 0), ck.get("phases", [])
            if not resume:
                self.phases = self.phases + [{"config": ck["config"], "from_step": self.start, "to_step": self.step}]
                self.start = self.step
                if d.main and (source / "metrics.jsonl").exists():  # source is init here
                    self.out.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source / "metrics.jsonl", self.out / "metrics.jsonl")
        if cfg.run.max_steps <= self.start:
            raise ValueError(f"run.max_steps {cfg.run.max_steps} must be past the step it starts from ({self.start})")
        self.net = DistributedDataParallel(self.model) if d.world > 1 else self.model
        self.bf16 = precision.resolve(cfg.run.bf16, self._timing_step, self.out / "precision.json" if d.main else None)
        self.metrics = MetricsLog(self.out / "metrics.jsonl", self.step if resume or init else None) if d.main else None

    def train_step(self) -> float:
        """One optimizer step over the global batch; returns its mean loss over all ranks."""
        run = self.cfg.run
        lr = lr_at(self.step, self.cfg.optim, run.max_steps, self.start)
        for group in self.opt.param_groups:
            group["lr"] = lr
        total = 0.0
        for micro in range(self.accum):
            x, y = self.stream.micro_batch(self.position, run.batch_size, micro, self.d.rank, self.d.world,
                                           run.micro_batch)  # [mb, L] each
            k, answers = 0, None
            if self.episodes is not None:
                x, y = x.clone(), y.clone()  # both are views of one window array: write them apart
                k = round(run.micro_batch * self.cfg.data.episode_share)
                first = ((self.step * self.accum + micro) * self.d.world + self.d.rank) * k
                x[:k], y[:k], answers = self.episodes.rows(first, k)
            sync = self.d.world == 1 or micro == self.accum - 1
            # not sync: world > 1, so self.net is the DistributedDataParallel wrapper
            ctx = self.net.no_sync() if not sync and isinstance(self.net, DistributedDataParallel) \
                else contextlib.nullcontext()
            with ctx:
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
                    logits = self.net(x)[0]  # [mb, L, V]
                loss = self._loss(logits.float(), y, answers) / self.accum
                loss.backward()
            total += loss.item()
        if self.cfg.optim.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.optim.grad_clip)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.step += 1
        self.position += run.batch_size
        return self.d.mean(total)

    def _loss(self, logits: Tensor, y: Tensor, answers: Tensor | None) -> Tensor:
        """data.episode_loss: one token mean ("all"); the documents' mean ("answer") or every row's mean
        ("all+answer"), plus answer_weight × the mean over the episode rows' answers."""
        mode = self.cfg.data.episode_loss
        if mode == "all" or answers is None:
            return F.cross_entropy(logits.flatten(0, 1), y.flatten())
        k = len(answers)
        ans = F.cross_entropy(logits[:k].flatten(0, 1), answers.flatten())
        rest = logits if mode == "all+answer" else logits[k:]
        rest_y = y if mode == "all+answer" else y[k:]
        base = F.cross_entropy(rest.flatten(0, 1), rest_y.flatten()) if len(rest_y) else ans.new_zeros(())
        return base + self.cfg.data.answer_weight * ans

    def _timing_step(self, bf16: bool) -> None:
        """One forward+backward of a micro-batch's shape, for precision.choose; weights untouched."""
        x, y = self.stream.micro_batch(0, self.cfg.run.batch_size, 0, 0, 1, self.cfg.run.micro_batch)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = self.model(x)[0]
        F.cross_entropy(logits.float().flatten(0, 1), y.flatten()).backward()
        self.model.zero_grad(set_to_none=True)

    def evaluate(self) -> dict[str, float]:
        out = {}
        for name, windows in self.val.items():
            res = evaluate(self.model, windows, self.byte_table, bf16=self.bf16)
            out[f"val_loss_{name}"], out[f"val_bpb_{name}"] = res["loss"], res["bpb"]
        if self.probe is not None:
            out.update(self.probe(self.model, self.bf16))
        return out

    def save(self) -> None:
        if self.d.main:
            save_checkpoint(self.out, self.model, self.opt, self.step, self.position, self.cfg.to_dict(),
                            {"start_step": self.start, "phases": self.phases})
        self.d.barrier()

    def _pause(self, *_) -> None:
        """SIGTSTP: stop here until SIGCONT, and remember how long."""
        t = time.perf_counter()
        os.kill(os.getpid(), signal.SIGSTOP)
        self.paused += time.perf_counter() - t

    def fit(self) -> None:
        run, tokens_per_step = self.cfg.run, self.cfg.run.batch_size * self.cfg.data.seq_len
        bar = tqdm(total=run.max_steps, initial=self.step, unit="step", disable=not self.d.main)
        self.paused = 0.0
        if hasattr(signal, "SIGTSTP"):
            signal.signal(signal.SIGTSTP, self._pause)
        t0, steps_timed = time.perf_counter(), 0
        while self.step < run.max_steps:
            loss = self.train_step()
            steps_timed += 1
            bar.update(1)
            last = self.step == run.max_steps
            if self.step % run.log_every == 0 or last or self.step % run.eval_every == 0:
                elapsed = time.perf_counter() - t0 - self.paused
                rec = {"step": self.step, "loss": loss,
                       "lr": lr_at(self.step - 1, self.cfg.optim, run.max_steps, self.start),
                       "tokens": self.step * tokens_per_step, "tokens_per_s": steps_timed * tokens_per_step / elapsed}
                if self.step % run.eval_every == 0 or last:
                    if self.d.main:
                        rec.update(self.evaluate())
                    self.d.barrier()
                if self.metrics:
                    self.metrics.write(rec)
                bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rec['tokens_per_s']:.0f}")
                t0, steps_timed, self.paused = time.perf_counter(), 0, 0.0
            if self.step % run.ckpt_every == 0 or last:
                self.save()
        bar.close()
        if self.d.main:
            save_hf(self.model, self.out / "model")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True, type=Path)
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    ap.add_argument("--resume", action="store_true", help="continue from <run.out>/ckpt.pt")
    args = ap.parse_args(argv)
    cfg = PretrainConfig.load(args.config, args.set)
    d = init_distributed()
    try:
        Pretrainer(cfg, d, args.resume).fit()
    finally:
        shutdown(d)


if __name__ == "__main__":
    main()
