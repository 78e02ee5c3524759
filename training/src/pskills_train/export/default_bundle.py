"""Export a pretraining run as the studio's default bundle, with its training card.

    python -m pskills_train.export.default_bundle --config training/configs/pretrain.json \
        --out resources/bundles/default [--created 2026-12-02T00:00:00Z] [--force]

The card (bundle.json `training_card`) records what reproduces the weights: the full pretrain config,
the config file's path and sha256, seed, steps and tokens seen, sha256 of the corpus manifest and the
tokenizer, the last held-out metrics and the compression baselines of the same held-out bytes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from ..config_io import config_record
from ..data.data_sets import episodes_sets, merged
from ..model import LORA_MODULES, load_hf
from ..train.checkpoint import CKPT, load_checkpoint
from ..train.config import PretrainConfig
from .bundle import created_now, report_written, write_bundle
from .manifest import BundleSpec, sha256_file

# The encoder reads skills in windows as long as the base LM was trained on (data.seq_len).
DEFAULT_RANK = 8


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing (is the run finished?)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def training_card(cfg: PretrainConfig, source: str | Path, rows: list[dict[str, Any]],
                  phases: Sequence[dict[str, Any]] = (), overrides: Sequence[str] = ()) -> dict[str, Any]:
    """`source`: the config file `cfg` was loaded from (its hash goes in the card's `config_file`);
    `phases`: the earlier runs this one continued (run.init_from), each {config, from_step, to_step}."""
    evals = [r for r in rows if "val_bpb_docs_val" in r]
    if not evals:
        raise ValueError("metrics.jsonl has no evaluation rows")
    last = evals[-1]
    corpus = cfg.data.path("corpus")
    tok_file = cfg.data.path("tokenizer")
    # Logged intervals carry their throughput; their sum is the training time without evaluations.
    log_every = cfg.run.log_every
    step_tokens = cfg.run.batch_size * cfg.data.seq_len
    seconds, prev = 0.0, 0
    for r in rows:
        seconds += (r["step"] - prev) * step_tokens / max(r["tokens_per_s"], 1e-9)
        prev = r["step"]
    baseline = subprocess.run([sys.executable, "-m", "pskills_train.train.compress_baseline", "--config",
                               str(source)], check=True, capture_output=True, text=True).stdout
    return {
        "kind": "pretrained",
        "data_sets": base_data_sets(cfg.to_dict(), phases),
        "config": cfg.to_dict(),
        "config_file": config_record(source, overrides),
        "earlier_phases": list(phases),
        "seed": cfg.run.seed,
        "steps": last["step"],
        "tokens_seen": last["tokens"],
        "train_seconds": round(seconds),
        "log_every": log_every,
        "data": {
            "corpus_manifest_sha256": sha256_file(corpus / "manifest.json"),
            "tokenizer_sha256": sha256_file(tok_file),
            "splits": {"train": ["docs_train", "skills_train"], "held_out": ["docs_val", "skills_val"]},
        },
        "metrics": {k: last[k] for k in last if k.startswith("val_")} | {"train_loss": last["loss"]},
        "compression_baselines": json.loads(baseline),
        # fp32 or bf16 and the timings that chose it (run.bf16 "auto", train/precision.py)
        "precision": json.loads(p.read_text()) if (p := cfg.run.out_path() / "precision.json").exists()
        else {"bf16": cfg.run.bf16, "measured": False},
    }


def base_data_sets(config: dict[str, Any], phases: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The split and seed of every set this run and its earlier phases read (data/data_sets.py): the
    corpus's train packages and the episodes of each phase (the SkillWorld worlds they were built from)."""
    sets: list[dict[str, Any]] = [{"kind": "corpus", "split": "train", "seed": None, "sets": ["docs_train",
                                   "skills_train"], "split_by": "package lists (training/configs/corpus.json)",
                                   "used_by": ["base"]}]
    for c in [*(p["config"] for p in phases), config]:
        name = (c.get("run") or {}).get("out", "base")
        data = c.get("data") or {}
        for key in ("episodes", "probe_episodes"):
            if data.get(key):
                sets += episodes_sets(data[key], f"base {name} data.{key}")
    return merged(sets)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.default_bundle",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True, type=Path, help="the pretrain config the run used")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE", help="as pretrain's --set")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--id", default="pskills-base-5m")
    ap.add_argument("--created", help="ISO 8601 time (default: now, or SOURCE_DATE_EPOCH)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    ap.add_argument("--lora-targets", default=",".join(LORA_MODULES), metavar="q,v,...",
                    help="modules whose LoRA factors lm.onnx takes as inputs "
                         f"(default: all of {','.join(LORA_MODULES)})")
    a = ap.parse_args(argv)

    cfg = PretrainConfig.load(a.config, a.set)
    run = cfg.run.out_path()
    lm = load_hf(run / "model", lora_targets=tuple(t for t in a.lora_targets.split(",") if t)).eval()
    tok_file = cfg.data.path("tokenizer")
    tok = Tokenizer.from_file(str(tok_file))
    tcfg = json.loads((tok_file.parent / "tokenizer_config.json").read_text())
    phases = load_checkpoint(run).get("phases", []) if (run / CKPT).exists() else []
    card = training_card(cfg, a.config, read_metrics(run / "metrics.jsonl"), phases, a.set)
    spec = BundleSpec(id=a.id, created=a.created or created_now(), default_rank=DEFAULT_RANK, alpha=float(DEFAULT_RANK),
                      token_budget=cfg.data.seq_len, chunk_overlap=cfg.data.seq_len // 8, encoder_graph=True,
                      training_card={"model": lm.cfg.to_dict(), **card})
    report_written(write_bundle(lm, tok, tcfg, a.out, spec, force=a.force), lm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
