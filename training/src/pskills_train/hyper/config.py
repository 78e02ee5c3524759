"""HyperConfig (configs/hyper/<run>.json): the hypernetwork, the encoder chunking, the data, the stages' runs.

The defaults are the shipped hypernetwork's (configs/hyper/hyper9.json). Any unknown key is an error,
except the removed experiments' keys at their off value (`RETIRED`). `--set stage1.max_steps=20`
overrides one field for an experiment (the value is parsed as JSON when it can be).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config_io import build, read_config, repo_path


@dataclass
class NetConfig:
    kind: str = "perceiver"  # perceiver | t2l (the ablation)
    rank: int = 8  # r of one chunk's adapter read from the skill
    shared_rank: int = 4  # rank of the learned adapter every skill shares (added to `rank` in the output)
    width: int = 128  # query / hidden width
    heads: int = 4  # attention heads of the cross-attention (perceiver)
    blocks: int = 2  # cross-attention blocks (perceiver) / MLP layers (t2l)
    mlp_ratio: int = 2
    targets: list[str] = field(default_factory=lambda: ["q", "k", "v", "o", "gate", "up", "down"])
    b_init: float = 0.0  # std of the B head's weights at init; 0 = a fresh hypernet changes nothing
    # Both heads' outputs are multiplied by out_scale (the A head's init compensates, so A starts at
    # std 1/sqrt(d_in)). Under Adam a head weight moves by ~lr per step, so an output moves by
    # ~lr·|z|₁·out_scale ≈ lr·width·out_scale: 1/width makes the factors move at ~lr, as LoRA weights do.
    out_scale: float = 0.01
    # perceiver: where a slot's factors come from. "content": one more attention read whose result (a
    # mix of projected skill states, no query residual) is the slot, so every factor is made of the
    # skill's own states and the queries only choose where to look. "query": the slot's query after
    # the blocks (its learned embedding plus what it read), so a generic adapter is the easy optimum.
    readout: str = "content"
    # Normalisation of the slots before the heads. "batch": each slot feature centred and scaled over
    # the batch (running statistics when compiling), so what all skills share is removed before the
    # heads and the read part is O(1) apart between skills; the shared adapter (shared_rank) is then
    # the only place for the generic part. "layer": LayerNorm per slot.
    norm: str = "batch"
    # > 0: each normalised slot's norm is capped at slot_clip·sqrt(width), so the slots of a chunk
    # unlike the training population (random text, a one-line skill) cannot blow up the adapter
    slot_clip: float = 3.0
    seed: int = 0


@dataclass
class EncoderConfig:
    token_budget: int = 512  # tokens per chunk (bundle.json encoder.token_budget)
    chunk_overlap: int = 64


@dataclass
class DataConfig:
    base: str = "training/.cache/runs/base2/model"  # HF folder of the frozen base LM ("random:NAME" for a random one)
    tokenizer: str = "training/.cache/tokenizer/tokenizer.json"
    corpus: str = "training/.cache/corpus"  # skills_train/, skills_val/
    trajectories_train: str = "training/.cache/trajectories/train.jsonl"  # stage 2
    trajectories_val: str = "training/.cache/trajectories/val.jsonl"
    max_skill_tokens: int = 2048  # skills are cut to their first N tokens for training (chunks = N / stride)
    target_window: int = 192  # stage 1 target tokens per example (long targets: a random window)
    max_seq: int = 384  # stage 2: prompt + answer tokens per example (longer: cut at the end)
    val_examples: int = 32  # fixed examples per objective for the validation loss


@dataclass
class Stage1Config:
    weights: dict[str, float] = field(default_factory=lambda: {"full": 0.4, "prefix": 0.3, "cloze": 0.3})
    prompt: str = "<skill>\n"  # fixed prompt of full reconstruction and prefix completion
    prefix_min: float = 0.2
    prefix_max: float = 0.6


@dataclass
class Stage2Config:
    # In-batch negatives: each example's loss with another skill's adapter (the next row's) must exceed
    # the loss with its own by `margin` nats/token; weight 0 turns the term off.
    contrast_weight: float = 0.0
    margin: float = 0.5
    # Examples of one micro-batch come from distinct skills (so the negatives are other skills).
    distinct_skills: bool = True
    # Stop a run whose adapters stay alike: after `cos_check_step` steps, if the mean in-batch cosine of
    # ΔW over the last log window is above `cos_stop_above`, the run ends (metrics say why).
    cos_check_step: int = 0
    cos_stop_above: float = 1.0
    # Share of each episode source (the part of its "source" before ":", e.g. skillworld, real) among the
    # skills of a micro-batch; empty = every skill equally likely (4,000 SkillWorld worlds then drown
    # ~500 real skills). With shares, validation is reported per source as well (val_loss_chat_<source>).
    source_shares: dict[str, float] = field(default_factory=dict)
    # With source_shares: every micro-batch from one source (drawn by share), so batch-normalised slots
    # are centred among skills of one kind, not by the SkillWorld-vs-real difference.
    stratify: bool = False


@dataclass
class RunConfig:
    out: str = "training/.cache/runs/hyper1"
    init: str = ""  # checkpoint to start from (stage 2: the stage-1 ckpt.pt; either: an earlier run, new base)
    max_steps: int = 300
    batch_size: int = 8  # examples per optimizer step
    micro_batch: int = 4
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_steps: int = 20
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    eval_every: int = 50
    ckpt_every: int = 25
    log_every: int = 5
    seed: int = 1234
    threads: int = 0  # 0 = all cores
    device: str = "auto"  # auto (cuda when present) | cpu | cuda (hyper/placement.py)
    bf16: bool | str = "auto"  # autocast; auto = on for cuda with bf16 support, off on cpu
    # > 0: stop after the step that ends past this many minutes of training (a lent GPU's time limit):
    # validate, save the checkpoint and return, as at max_steps; the lr schedule still runs to max_steps
    max_minutes: float = 0.0

    def out_path(self) -> Path:
        return repo_path(self.out)


SECTIONS = ("net", "encoder", "data", "stage1", "stage2", "run1", "run2")

# Settings of experiments measured null and removed (docs/results.md, "Removed experiments", names the
# commit whose code still runs them). Configs and bundle training cards written before keep them at the
# value that meant "off"; that value is accepted and dropped, any other is refused.
RETIRED: dict[str, dict[str, Any]] = {
    "net": {"center": False, "keys": "read", "copy_gain_init": 0.0},
    "stage2": {"answer_only_share": 0.0},
}
RETIRED_READOUTS = ("transition", "copy")


def drop_retired(section: str, raw: dict[str, Any], where: str) -> dict[str, Any]:
    """`raw` without the retired keys of `section`; a retired experiment switched on is an error."""
    out = dict(raw)
    for key, off in RETIRED.get(section, {}).items():
        if key in out:
            value = out.pop(key)
            if value != off:
                raise ValueError(f"{where}.{key} = {value!r}: that experiment was measured null and removed "
                                 f"(docs/results.md, Removed experiments); only {off!r} is accepted")
    if section == "net" and out.get("readout") in RETIRED_READOUTS:
        raise ValueError(f"{where}.readout {out['readout']!r}: that readout was measured null and removed "
                         "(docs/results.md, Removed experiments); use content or query")
    return out


def net_config(raw: dict[str, Any], where: str = "net") -> NetConfig:
    """NetConfig from a checkpoint's or a training card's `net` dict (retired keys at their off value)."""
    out: NetConfig = build(NetConfig, drop_retired("net", raw, where), where)
    return out


@dataclass
class HyperConfig:
    net: NetConfig = field(default_factory=NetConfig)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    data: DataConfig = field(default_factory=DataConfig)
    stage1: Stage1Config = field(default_factory=Stage1Config)
    stage2: Stage2Config = field(default_factory=Stage2Config)
    run1: RunConfig = field(default_factory=RunConfig)
    run2: RunConfig = field(default_factory=lambda: RunConfig(out="training/.cache/runs/hyper2"))

    @classmethod
    def from_dict(cls, raw: dict[str, Any], where: str = "config") -> HyperConfig:
        unknown = sorted(k for k in raw if k not in SECTIONS and not k.startswith("_"))
        if unknown:
            raise ValueError(f"{where}: unknown sections {unknown}")
        types = {"net": NetConfig, "encoder": EncoderConfig, "data": DataConfig, "stage1": Stage1Config,
                 "stage2": Stage2Config, "run1": RunConfig, "run2": RunConfig}
        built = {s: build(t, drop_retired(s, raw[s], f"{where}.{s}"), f"{where}.{s}")
                 for s, t in types.items() if s in raw}
        out = cls(**built)
        out.check()
        return out

    @classmethod
    def load(cls, path: str | Path, overrides: Sequence[str] = ()) -> HyperConfig:
        return cls.from_dict(read_config(path, overrides), str(path))

    def to_dict(self) -> dict[str, Any]:
        return {s: asdict(getattr(self, s)) for s in SECTIONS}

    def check(self) -> None:
        if self.net.kind not in ("perceiver", "t2l"):
            raise ValueError(f"net.kind must be perceiver or t2l, got {self.net.kind!r}")
        if self.net.readout not in ("content", "query"):
            raise ValueError(f"net.readout must be content or query, got {self.net.readout!r}")
        if self.net.norm not in ("batch", "layer"):
            raise ValueError(f"net.norm must be batch or layer, got {self.net.norm!r}")
        if not 0 <= self.encoder.chunk_overlap < self.encoder.token_budget:
            raise ValueError("encoder.chunk_overlap must be in 0 .. token_budget - 1")
        for run in (self.run1, self.run2):
            if run.batch_size % run.micro_batch:
                raise ValueError(f"batch_size {run.batch_size} is not a multiple of micro_batch {run.micro_batch}")
        bad = set(self.stage1.weights) - {"full", "prefix", "cloze"}
        if bad:
            raise ValueError(f"stage1.weights: unknown objectives {sorted(bad)}")
