"""PretrainConfig: one dataclass per concern (data, optimizer, run), plus the model's ModelConfig.

Loaded from configs/pretrain*.json. Keys starting with '_' are notes (parameter count, token target,
expected wall time) and are ignored; any other unknown key is an error. `--set run.bf16=false`
overrides one field from the command line (the value is parsed as JSON when it can be).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config_io import build, read_config, repo_path
from ..model import ModelConfig


@dataclass
class DataConfig:
    corpus: str = "training/.cache/corpus"  # build_corpus --out
    tokenizer: str = "training/.cache/tokenizer/tokenizer.json"
    tokens: str = "training/.cache/tokens"  # uint16 token files, built on first use
    seq_len: int = 256
    eval_windows: int = 256  # eval_seq_len windows of each held-out split, from its start
    eval_seq_len: int = 0  # 0 = seq_len; 256 keeps held-out bpb comparable with the 256-token phases
    # JSON lines of chat episodes (train/episodes.py) and the share of each micro-batch's rows they fill
    episodes: str = ""
    episode_share: float = 0.0
    chat_template: str = ""  # tokenizer_config.json whose chat_template renders the episodes
    # "all": every episode token is a target, in one mean with the documents'; "answer": the documents'
    # mean plus answer_weight × the mean over the final assistant turns only; "all+answer": both terms
    episode_loss: str = "all"
    answer_weight: float = 1.0
    # held-out episodes scored at each eval (train/probe.py): greedy exact match with the skill in context
    probe_episodes: str = ""
    probe_count: int = 128

    def path(self, name: str) -> Path:
        return repo_path(getattr(self, name))


@dataclass
class OptimConfig:
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_steps: int = 200
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    schedule: str = "cosine"  # "cosine" | "wsd" (optim.lr_at)
    decay_steps: int = 0  # wsd: steps of linear decay at the end


@dataclass
class RunConfig:
    out: str = "training/.cache/runs/base"
    batch_size: int = 32  # sequences per optimizer step, all ranks together
    micro_batch: int = 8  # sequences per forward pass on one rank
    max_steps: int = 1000
    eval_every: int = 250
    ckpt_every: int = 100
    log_every: int = 10
    seed: int = 1337
    # autocast matmuls to bfloat16: true, false, or "auto" (time both on this machine; train/precision.py)
    bf16: bool | str = False
    threads: int = 0  # torch threads per rank; 0 = cores / ranks
    # Run folder of an earlier run to continue: its weights, optimizer moments, step, data position and
    # metrics; this config's schedule starts at that step. Empty: start from random weights.
    init_from: str = ""
    # A bundle folder whose lm.onnx gives the starting weights (fresh optimizer, step 0): continues the
    # shipped base on a clone that lacks the run folder (model/from_onnx.py).
    init_bundle: str = ""

    def init_path(self) -> Path | None:
        return repo_path(self.init_from) if self.init_from else None

    def init_bundle_path(self) -> Path:
        return repo_path(self.init_bundle)

    def out_path(self) -> Path:
        return repo_path(self.out)


@dataclass
class PretrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    run: RunConfig = field(default_factory=RunConfig)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], where: str = "config") -> PretrainConfig:
        unknown = sorted(k for k in raw if k not in ("model", "data", "optim", "run") and not k.startswith("_"))
        if unknown:
            raise ValueError(f"{where}: unknown sections {unknown}")
        model = {k: v for k, v in raw.get("model", {}).items() if not k.startswith("_")}
        return cls(ModelConfig.from_dict(model), build(DataConfig, raw.get("data", {}), f"{where}.data"),
                   build(OptimConfig, raw.get("optim", {}), f"{where}.optim"),
                   build(RunConfig, raw.get("run", {}), f"{where}.run"))

    @classmethod
    def load(cls, path: str | Path, overrides: Sequence[str] = ()) -> PretrainConfig:
        return cls.from_dict(read_config(path, overrides), str(path))

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "data": asdict(self.data), "optim": asdict(self.optim),
                "run": asdict(self.run)}

    def check(self, world: int) -> int:
        """Gradient-accumulation steps per optimizer step for `world` ranks."""
        per_step = self.run.micro_batch * world
        if self.run.batch_size % per_step:
            raise ValueError(f"run.batch_size {self.run.batch_size} is not a multiple of micro_batch × ranks "
                             f"= {self.run.micro_batch} × {world}")
        if self.optim.schedule not in ("cosine", "wsd"):
            raise ValueError(f"optim.schedule {self.optim.schedule!r}: expected 'cosine' or 'wsd'")
        if self.optim.schedule == "wsd" and self.optim.decay_steps <= 0:
            raise ValueError("optim.decay_steps must be > 0 with optim.schedule 'wsd'")
        if not 0.0 <= self.data.episode_share < 1.0:
            raise ValueError(f"data.episode_share {self.data.episode_share} must be in [0, 1)")
        if self.data.episode_share > 0 and not self.data.episodes:
            raise ValueError("data.episode_share > 0 needs data.episodes")
        if self.data.episode_loss not in ("all", "answer", "all+answer"):
            raise ValueError(f"data.episode_loss {self.data.episode_loss!r} must be 'all', 'answer' or 'all+answer'")
        if self.data.answer_weight <= 0:
            raise ValueError(f"data.answer_weight {self.data.answer_weight} must be > 0")
        if self.run.init_from and self.run.init_bundle:
            raise ValueError("run.init_from and run.init_bundle: give one")
        if self.data.seq_len > self.model.max_positions:
            raise ValueError(f"data.seq_len {self.data.seq_len} > model.max_positions {self.model.max_positions}")
        return self.run.batch_size // per_step
