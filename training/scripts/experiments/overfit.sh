#!/usr/bin/env bash
# Diagnostic: can the Perceiver store a skill's made-up words at all? Stage 2 from the shipped
# hypernetwork (hyper.from_onnx) on 8 SkillWorld worlds (32 episodes), validated on the same 32, then the
# checkpoint scored on 64 unseen validation episodes. Needs the episodes (train_default_bundle.sh steps
# 1 and 3). Run from the repository root: bash training/scripts/experiments/overfit.sh [STEPS]
set -euo pipefail
py=training/.venv/bin/python
c=training/.cache
steps=${1:-60}
mkdir -p $c/overfit $c/runs
[[ -d $c/runs/base-default ]] || $py -m pskills_train.model.from_onnx resources/bundles/default $c/runs/base-default
[[ -f $c/runs/h9-from-onnx.pt ]] || $py -m pskills_train.hyper.from_onnx resources/bundles/default $c/runs/h9-from-onnx.pt
$py - <<'PY'
import collections, json
by = collections.defaultdict(list)
for line in open("training/.cache/episodes/sw-real/stage2.jsonl"):
    if json.loads(line)["source"].startswith("skillworld"):
        by[json.loads(line)["skill"]].append(line)
with open("training/.cache/overfit/train.jsonl", "w") as f:
    for name in sorted(by)[:8]:
        f.writelines(by[name])
with open("training/.cache/overfit/unseen.jsonl", "w") as f:
    f.writelines(l for l in open("training/.cache/episodes/sw-real-val/stage2.jsonl")
                 if json.loads(l)["source"].startswith("skillworld"))
PY
common=(--config training/configs/hyper/hyper9.json --stage 2
  --set 'stage2.source_shares={"skillworld":1.0}'
  --set data.base=$c/runs/base-default --set data.tokenizer=$c/runs/base-default/tokenizer.json
  --set data.trajectories_train=$c/overfit/train.jsonl --set run2.batch_size=8 --set run2.micro_batch=4
  --set stage2.cos_check_step=0 --set run2.threads=1)
$py -m pskills_train.hyper.train "${common[@]}" --set data.trajectories_val=$c/overfit/train.jsonl \
  --set run2.init=$c/runs/h9-from-onnx.pt --set run2.out=$c/runs/overfit --set run2.max_steps=$steps \
  --set run2.lr=1e-3 --set run2.min_lr=1e-3 --set run2.warmup_steps=5 --set run2.eval_every=30 \
  --set run2.ckpt_every=30 --set run2.log_every=10 --set data.val_examples=32
# the trained worlds' checkpoint on unseen worlds, and the shipped hypernetwork on the same episodes
for init in $c/runs/overfit/ckpt.pt $c/runs/h9-from-onnx.pt; do
  $py - "$init" "${common[@]}" --set data.trajectories_val=$c/overfit/unseen.jsonl --set data.val_examples=64 \
    --set "run2.init=$init" --set run2.out=/tmp/overfit-eval <<'PY'
import json, sys
from pskills_train.hyper.config import HyperConfig
from pskills_train.hyper.trainer import HyperTrainer
args = sys.argv[2:]
sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
cfg = HyperConfig.load(args[args.index("--config") + 1], sets)
print(json.dumps({"init": sys.argv[1], **HyperTrainer(cfg, 2).evaluate()}))
PY
done
