#!/usr/bin/env bash
# Pack what a hypernetwork stage-2 run on a lent GPU needs and git does not carry into .device/hyper (ignored):
# the stage-2 episodes, xz-compressed (their real-skill part comes from the npm registry, which the GPU machine
# cannot reach). The base LM and the starting hypernetwork travel in git as the default bundle's lm.onnx and
# hypernet.onnx; device-train-hyper.sh rebuilds both there (model.from_onnx, hyper.from_onnx, parity-checked).
# A run from other weights packs them too: BASE (an HF folder) and INIT (a ckpt.pt), then only its weights.
#   bash training/scripts/device-pack.sh                      # episodes alone (~7 MiB)
#   BASE=training/.cache/runs/base5b/model INIT=training/.cache/runs/hyper9/ckpt.pt bash training/scripts/device-pack.sh
# The episodes: train_default_bundle.sh steps 1 and 3 (corpus, trajectories, SkillWorld, build_episodes).
set -euo pipefail
c=training/.cache
for f in "$c/episodes/sw-real/stage2.jsonl" "$c/episodes/sw-real-val/stage2.jsonl" ${BASE:+"$BASE/config.json"} \
         ${INIT:+"$INIT"}; do
  [[ -f $f ]] || { echo "device-pack: $f is missing" >&2; exit 1; }
done
out=.device/hyper
tmp=.device/hyper.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
nice -n 19 xz -6 -T1 -c "$c/episodes/sw-real/stage2.jsonl" > "$tmp/train.jsonl.xz"
nice -n 19 xz -6 -T1 -c "$c/episodes/sw-real-val/stage2.jsonl" > "$tmp/val.jsonl.xz"
if [[ -n ${BASE:-} ]]; then
  mkdir -p "$tmp/base"
  cp "$BASE/config.json" "$BASE/model.safetensors" "$tmp/base/"
  # the base folder's own tokenizer (+ chat template config) when it has one, else the corpus tokenizer
  if [[ -f $BASE/tokenizer.json ]]; then cp "$BASE/tokenizer.json" "$tmp/base/"; else cp "$c/tokenizer/tokenizer.json" "$tmp/base/"; fi
  [[ -f $BASE/tokenizer_config.json ]] && cp "$BASE/tokenizer_config.json" "$tmp/base/"
fi
if [[ -n ${INIT:-} ]]; then
  training/.venv/bin/python - "$INIT" "$tmp/init.pt" <<'PY'
import sys
import torch
ck = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
keep = ("model", "step", "config", "lm_config", "stage", "history", "last_metrics", "params")
torch.save({k: ck[k] for k in keep if k in ck}, sys.argv[2])
PY
fi
printf '%s\n' "base ${BASE:-resources/bundles/default/lm.onnx}" "init ${INIT:-resources/bundles/default/hypernet.onnx}" \
  "packed $(date -u +%FT%TZ)" > "$tmp/SOURCES"
rm -rf "$out"
mv "$tmp" "$out"
du -b "$out"/* | sort -rn
total=$(du -sb "$out" | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
echo "pack $total bytes ($((total / 1048576)) MiB); tracked tree $((tree / 1048576)) MiB; the device tool takes 64 MiB in all"
(( total + tree < 64 * 1048576 )) || { echo "device-pack: tree + pack is over 64 MiB" >&2; exit 1; }
