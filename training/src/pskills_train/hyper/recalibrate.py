"""Re-estimate a stage-2 checkpoint's slot batch-norm statistics over a chosen population of skills.

    python -m pskills_train.hyper.recalibrate --config training/configs/hyper/hyper9.json \
        --checkpoint runs/hyper5/ckpt.pt --sources real,skillworld --batches 64 [--out runs/hyper5/recal.pt]

Compile normalises each slot with running statistics. Trained with stratified micro-batches
(stage2.stratify), those are an exponential average of alternating per-source statistics, so they
depend on which batches came last and sit between the sources. This replaces them with the exact
average over `--batches` micro-batches drawn as `--sources` lists (each micro-batch mixing them by
stage2.source_shares, or one source alone), prints the validation per source before and after, and
writes the checkpoint with the new statistics (`--out`).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

import torch

from .batches import Stage2Data
from .config import HyperConfig
from .net import SlotBatchNorm
from .trainer import HyperTrainer


@torch.no_grad()
def recalibrate(tr: HyperTrainer, sources: list[str], batches: int, seed: int = 0, stratify: bool = False) -> int:
    """Set every SlotBatchNorm's running stats to the mean batch statistics over `batches` micro-batches
    of skills from `sources`: mixed within a micro-batch, or (`stratify`, as stage2.stratify trains)
    each micro-batch from one source in turn. Returns the norms updated."""
    norms = [m for m in tr.net.modules() if isinstance(m, SlotBatchNorm)]
    if not norms:
        return 0
    data = tr.data
    if not isinstance(data, Stage2Data):
        raise ValueError("recalibration draws stage-2 episodes: a stage-2 trainer is needed")
    pools = [sorted(data.group_skills.get(s, [])) for s in sources] if stratify else \
        [sorted({n for s in sources for n in data.group_skills.get(s, [])})]
    for pool in pools:
        if len(pool) < tr.run.micro_batch:
            raise ValueError(f"--sources {sources}: {len(pool)} skills, fewer than micro_batch {tr.run.micro_batch}")
    sums = [(torch.zeros_like(m.running_mean), torch.zeros_like(m.running_var)) for m in norms]
    saved = [m.momentum for m in norms]
    rng = random.Random(seed)
    tr.net.train()
    try:
        for i in range(batches):
            pool = pools[i % len(pools)]
            for m in norms:  # momentum 1: running stats = this batch's, then summed below
                m.momentum = 1.0
            names = rng.sample(pool, tr.run.micro_batch)
            examples = [data.chat(data.train_items[data.by_skill[n][rng.randrange(len(data.by_skill[n]))]])
                        for n in names]
            tr.losses(examples, net=tr.net)
            for m, (sm, sv) in zip(norms, sums, strict=True):
                sm += m.running_mean
                sv += m.running_var
    finally:
        for m, mom in zip(norms, saved, strict=True):
            m.momentum = mom
        tr.net.eval()
    for m, (sm, sv) in zip(norms, sums, strict=True):
        m.running_mean.copy_(sm / batches)
        m.running_var.copy_(sv / batches)
    return len(norms)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.hyper.recalibrate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, default=Path("training/configs/hyper/hyper9.json"),
                    help="only for a checkpoint without its config")
    ap.add_argument("--checkpoint", required=True, type=Path)
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                    help="only for a checkpoint without its config")
    ap.add_argument("--sources", default="real,skillworld", help="comma-separated episode sources")
    ap.add_argument("--batches", type=int, default=64)
    ap.add_argument("--stratify", action="store_true", help="each micro-batch from one source, in turn")
    ap.add_argument("--out", type=Path, help="write the checkpoint with the new statistics here")
    a = ap.parse_args(argv)
    ck = torch.load(a.checkpoint, map_location="cpu", weights_only=False)
    # the run's own config (net, data), with validation per source of --sources
    cfg = HyperConfig.from_dict(ck["config"]) if "config" in ck else HyperConfig.load(a.config, a.set)
    cfg.stage2.source_shares = {s: 1.0 for s in a.sources.split(",")}
    cfg.stage2.stratify = False
    cfg.run2.threads = 1
    cfg.run2.init = ""  # the weights come from --checkpoint
    cfg.run2.out = str(Path(tempfile.mkdtemp(prefix="recal-")))  # the trainer's metrics log: not the run's
    tr = HyperTrainer(cfg, 2)
    tr.net.load_state_dict(ck["model"])
    before = tr.evaluate()
    n = recalibrate(tr, a.sources.split(","), a.batches, stratify=a.stratify)
    after = tr.evaluate()
    print(json.dumps({"norms": n, "sources": a.sources, "batches": a.batches, "stratify": a.stratify,
                      "before": {k: round(v, 4) for k, v in before.items()},
                      "after": {k: round(v, 4) for k, v in after.items()}}, indent=1))
    if a.out:
        ck["model"] = tr.net.state_dict()
        ck["recalibrated"] = {"sources": a.sources, "batches": a.batches, "stratify": a.stratify,
                              "before": before, "after": after}
        tmp = a.out.with_name(f".{a.out.name}.tmp")
        torch.save(ck, tmp)
        tmp.replace(a.out)


if __name__ == "__main__":
    main()
