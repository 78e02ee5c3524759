#!/usr/bin/env bash
# The default bundle from an empty cache, step by step; every step resumes or is skipped when its output
# exists, so the same line continues after an interruption. Run from the repository root:
#   nohup bash training/scripts/train_default_bundle.sh >> training/.cache/default-bundle.log 2>&1 &
# Steps and their measured times on the 2-core CPU are in training/configs/README.md.
set -euo pipefail
py=training/.venv/bin/python
c=training/.cache
bash training/setup_venv.sh

# 1. corpus and tokenizer (warm re-runs are quick and byte-identical)
[[ -f $c/corpus/manifest.json ]] || $py -m pskills_train.data.build_corpus --out $c/corpus
[[ -f $c/tokenizer/tokenizer.json ]] || $py -m pskills_train.data.train_tokenizer --corpus $c/corpus --out $c/tokenizer

# 2. base LM: phase 1 (cosine), then phase 2 continuing it (warmup-stable-decay; configs/README.md)
phase() {  # config run-folder
  [[ -f $2/model/model.safetensors ]] || $py -m pskills_train.train.pretrain --config "$1" $( [[ -f $2/ckpt.pt ]] && echo --resume )
}
phase training/configs/pretrain.json $c/runs/base
phase training/configs/pretrain-phase2.json $c/runs/base2
cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/base2/model/  # an HF folder, whole
# lm.onnx takes LoRA inputs for the hypernetwork's targets (configs/hyper.json net.targets)
targets=$($py -c 'import json; print(",".join(json.load(open("training/configs/hyper.json"))["net"]["targets"]))')
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase2.json --out $c/bundles/base \
  --lora-targets "$targets" --force

# 3. trajectories (template synthesizer, offline)
[[ -f $c/trajectories/train.jsonl ]] || $py -m pskills_train.synth --skills $c/corpus/skills_train --out $c/trajectories/train.jsonl
[[ -f $c/trajectories/val.jsonl ]] || $py -m pskills_train.synth --skills $c/corpus/skills_val --out $c/trajectories/val.jsonl

# 4. hypernetworks, stage 1 then stage 2: the Perceiver and the T2L-style baseline side by side, one core each
hyper() {  # kind
  local k=$1 sets=()
  [[ $k == t2l ]] && sets=(--set net.kind=t2l --set run1.out=$c/runs/t2l1 --set run2.out=$c/runs/t2l2 --set run2.init=$c/runs/t2l1/ckpt.pt)
  local r1=$c/runs/${k/perceiver/hyper}1 r2=$c/runs/${k/perceiver/hyper}2
  [[ -f $r1/done ]] || { $py -m pskills_train.hyper.train --config training/configs/hyper.json --stage 1 "${sets[@]}" \
    $( [[ -f $r1/ckpt.pt ]] && echo --resume ) && touch $r1/done; }
  [[ -f $r2/done ]] || { $py -m pskills_train.hyper.train --config training/configs/hyper.json --stage 2 "${sets[@]}" \
    $( [[ -f $r2/ckpt.pt ]] && echo --resume ) && touch $r2/done; }
}
hyper perceiver > $c/runs/perceiver.log 2>&1 &
hyper t2l > $c/runs/t2l.log 2>&1 &
wait

# 5. the complete bundle
# (+ the evaluation's ablations, so `pskills eval` runs all eight conditions from the bundle alone)
$py -m pskills_train.hyper.export --base-bundle $c/bundles/base --checkpoint $c/runs/hyper2/ckpt.pt \
  --ablation stage1_only=$c/runs/hyper1/ckpt.pt --ablation t2l_baseline=$c/runs/t2l2/ckpt.pt \
  --out resources/bundles/default --kind perceiver --force
echo "default bundle: resources/bundles/default"
