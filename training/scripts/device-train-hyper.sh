#!/usr/bin/env bash
# Hypernetwork stage 2 on a lent GPU, in one call: run from the repository root with .device/hyper carried
# (scripts/device-pack.sh), by the machine's python3 (torch, tokenizers, tqdm, numpy, safetensors, onnx and
# onnxruntime are there; no venv). It rebuilds the base and the starting hypernetwork from BUNDLE (default: the
# shipped bundle) unless the pack has its own, times CALIB_STEPS steps, sizes max_steps so training fills
# MINUTES, trains with run2.max_minutes as the guard, recalibrates the slot batch norm, and writes to $OUT:
#   ckpt.pt (weights), recal.pt (weights, recalibrated: what export takes), ckpt-full.pt (+ optimizer:
#   --resume), metrics.jsonl, calib.jsonl, train.log. The call: training/README.md, "Hypernetwork on a lent GPU".
# Arguments: more --set overrides for both runs. On CPU (the dry run, ~6 min on one loaded core):
#   OUT=/tmp/o DEVICE=cpu MINUTES=0.3 BATCH=4 MICRO=2 CALIB_STEPS=3 THREADS=1 RECAL_BATCHES=2 \
#     PY=training/.venv/bin/python bash training/scripts/device-train-hyper.sh --set data.val_examples=4
set -euo pipefail
out=${OUT:?OUT: the folder whose files come back}
pack=${PACK:-.device/hyper}
py=${PY:-python3}
device=${DEVICE:-cuda}
minutes=${MINUTES:-6}  # training wall clock; loading, calibration and recalibration add ~1-2 min
batch=${BATCH:-64}
micro=${MICRO:-32}
calib=${CALIB_STEPS:-15}
work=${WORK:-/tmp/hyper-device}
export PYTHONPATH=training/src PYTHONUNBUFFERED=1
bundle=${BUNDLE:-resources/bundles/default}
[[ -f $pack/train.jsonl.xz ]] || { echo "$pack/train.jsonl.xz missing: run training/scripts/device-pack.sh and carry $pack" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
log=$out/train.log
{ echo "device-train-hyper $(date -u +%FT%TZ): device $device, batch $batch/$micro, $minutes min"; cat "$pack/SOURCES"
  [[ $device != cuda ]] || nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; } | tee "$log"
# the base and the starting hypernetwork: the pack's, else rebuilt from the bundle (onnx + onnxruntime are in the
# GPU machine's image; both commands check parity against onnxruntime and fail on a mismatch)
base=$pack/base
[[ -d $base ]] || { base=$work/base; $py -m pskills_train.model.from_onnx "$bundle" "$base" 2>&1 | tee -a "$log"; }
init=$pack/init.pt
[[ -f $init ]] || { init=$work/init.pt; $py -m pskills_train.hyper.from_onnx "$bundle" "$init" 2>&1 | tee -a "$log"; }
# the shipped hypernetwork's recipe (configs/hyper/hyper9.json); the overrides are this machine's paths,
# device, batch and time, recorded beside the file's hash in the checkpoint
args=(--config training/configs/hyper/hyper9.json --stage 2
  --set "data.base=$base" --set "data.tokenizer=$base/tokenizer.json"
  --set "data.trajectories_train=$pack/train.jsonl.xz" --set "data.trajectories_val=$pack/val.jsonl.xz"
  --set "run2.init=$init" --set "run2.device=$device" --set "run2.bf16=${BF16:-auto}"
  --set "run2.batch_size=$batch" --set "run2.micro_batch=$micro" --set "run2.lr=${LR:-5e-4}"
  --set "run2.threads=${THREADS:-0}" --set stage2.cos_check_step=0)
extra=("$@")  # more --set overrides, to both runs
train() { $py -m pskills_train.hyper.train "${args[@]}" "${extra[@]}" "$@" 2>&1 | tr '\r' '\n' | grep -v '%|' | tee -a "$log"; }
if [[ -z ${STEPS:-} ]]; then
  # seconds per step after warm-up: the last log window of a short run
  train --set "run2.out=$work/calib" --set "run2.max_steps=$calib" --set "run2.log_every=$(( (calib + 2) / 3 ))" \
    --set run2.eval_every=100000 --set run2.warmup_steps=1
  cp "$work/calib/metrics.jsonl" "$out/calib.jsonl"
  STEPS=$($py -c 'import json,sys; r=[json.loads(x) for x in open(sys.argv[1])]; s=[x["s_per_step"] for x in r if "s_per_step" in x][-1]
print(max(20, int(float(sys.argv[2]) * 60 * 0.9 / s)))' "$work/calib/metrics.jsonl" "$minutes")
fi
warm=$(( STEPS / 20 > 10 ? STEPS / 20 : 10 ))
every=$(( STEPS / 8 > 1 ? STEPS / 8 : 1 ))
echo "training $STEPS steps (warmup $warm, eval every $every), guard $minutes min" | tee -a "$log"
train --set "run2.out=$work/run" --set "run2.max_steps=$STEPS" --set "run2.warmup_steps=$warm" \
  --set "run2.eval_every=$every" --set "run2.ckpt_every=$every" --set run2.log_every=10 \
  --set "run2.max_minutes=$minutes"
cp "$work/run/metrics.jsonl" "$out/metrics.jsonl"
cp "$work/run/ckpt.pt" "$out/ckpt-full.pt"
$py -m pskills_train.hyper.recalibrate --checkpoint "$work/run/ckpt.pt" --sources real,skillworld --stratify \
  --batches "${RECAL_BATCHES:-64}" --out "$work/run/recal.pt" 2>&1 | grep -v '%|' | tee -a "$log"
$py - "$work/run" "$out" <<'PY'
import sys
from pathlib import Path
import torch
run, out = Path(sys.argv[1]), Path(sys.argv[2])
for name in ("ckpt.pt", "recal.pt"):  # weights alone: what export and recalibrate read
    ck = torch.load(run / name, map_location="cpu", weights_only=False)
    for key in ("optimizer", "rng"):
        ck.pop(key, None)
    torch.save(ck, out / name)
PY
ls -l "$out" | tee -a "$log"
