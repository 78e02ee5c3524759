#!/usr/bin/env bash
# Pack what a hypernetwork stage-2 run on a lent GPU needs and git does not carry into .device/hyper (ignored):
# the frozen base (HF folder), the stage-2 episodes gzipped, and the starting checkpoint's weights alone (no
# optimizer state). Run from the repository root; scripts/device-train-hyper.sh reads it there (carry .device/hyper).
#   bash training/scripts/device-pack.sh [BASE_HF_FOLDER] [INIT_CKPT]
# Defaults: runs/base5b/model (runs/base5/model while 5b is not done) and runs/hyper8c/ckpt.pt (round 5).
set -euo pipefail
c=training/.cache
base=${1:-$c/runs/base5b/model}
[[ -f $base/model.safetensors || $# -gt 0 ]] || base=$c/runs/base5/model
init=${2:-$c/runs/hyper8c/ckpt.pt}
for f in "$base/config.json" "$base/model.safetensors" "$c/tokenizer/tokenizer.json" "$init" \
         "$c/episodes/sw-real/stage2.jsonl" "$c/episodes/sw-real-val/stage2.jsonl"; do
  [[ -f $f ]] || { echo "device-pack: $f is missing" >&2; exit 1; }
done
out=.device/hyper
tmp=.device/hyper.tmp
rm -rf "$tmp"
mkdir -p "$tmp/base"
cp "$base/config.json" "$base/model.safetensors" "$tmp/base/"
# the base folder's own tokenizer (+ chat template config) when it has one, else the corpus tokenizer
if [[ -f $base/tokenizer.json ]]; then cp "$base/tokenizer.json" "$tmp/base/"; else cp "$c/tokenizer/tokenizer.json" "$tmp/base/"; fi
[[ -f $base/tokenizer_config.json ]] && cp "$base/tokenizer_config.json" "$tmp/base/"
nice -n 19 gzip -6 -n -c "$c/episodes/sw-real/stage2.jsonl" > "$tmp/train.jsonl.gz"
nice -n 19 gzip -6 -n -c "$c/episodes/sw-real-val/stage2.jsonl" > "$tmp/val.jsonl.gz"
training/.venv/bin/python - "$init" "$tmp/init.pt" <<'PY'
import sys
import torch
ck = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
keep = ("model", "step", "config", "lm_config", "stage", "history", "last_metrics", "params")
torch.save({k: ck[k] for k in keep if k in ck}, sys.argv[2])
PY
printf '%s\n' "base $base" "init $init" "packed $(date -u +%FT%TZ)" > "$tmp/SOURCES"
rm -rf "$out"
mv "$tmp" "$out"
du -b "$out"/* "$out"/base/* | sort -rn
total=$(du -sb "$out" | cut -f1)
echo "total $total bytes ($((total / 1048576)) MiB)"
(( total < 60 * 1048576 )) || { echo "device-pack: $out is over 60 MiB" >&2; exit 1; }
