"""Train the hypernetwork: stage 1 (skill reconstruction) or stage 2 (skill exploitation), docs/design.md §1.

    python -m pskills_train.hyper.train --config training/configs/hyper/hyper9.json --stage 1|2 [--resume]
        [--set run1.max_steps=20]   (an experiment's override; the checkpoint records it beside the file's hash)
    torchrun --nproc_per_node N -m pskills_train.hyper.train ...   (DDP; hyper/placement.py)

The trainer is hyper/trainer.py (steps, validation, checkpoints), its data hyper/batches.py, the loss
hyper/loss.py and the frozen base LM hyper/base.py. `--resume` continues from <run.out>/ckpt.pt exactly.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..config_io import config_record
from ..train.distributed import shutdown
from .config import HyperConfig
from .placement import resolve
from .trainer import HyperTrainer


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
          f"{trainer.lm.num_params() / 1e6:.2f} M (frozen); {len(trainer.data.train_items)} training items")
    if resume:
        print(f"resuming at step {trainer.step}")
    trainer.fit()
    print(json.dumps(trainer.last_metrics))


if __name__ == "__main__":
    main()
