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

# 2. base LM: phase 1 (cosine), phase 2 continuing it (warmup-stable-decay), phase 3 (1,024-token windows,
#    real-skill episodes) and phase 4 (SkillWorld + real-skill episodes); configs/README.md
phase() {  # config run-folder [--set ...]
  [[ -f $2/model/model.safetensors ]] || $py -m pskills_train.train.pretrain --config "$1" "${@:3}" \
    $( [[ -f $2/ckpt.pt ]] && echo --resume )
}
phase training/configs/pretrain.json $c/runs/base
phase training/configs/pretrain-phase2.json $c/runs/base2

# 3. episodes that need the skill: template trajectories of real skills, SkillWorld train/val worlds
[[ -f $c/trajectories/train.jsonl ]] || $py -m pskills_train.synth --skills $c/corpus/skills_train --out $c/trajectories/train.jsonl
[[ -f $c/trajectories/val.jsonl ]] || $py -m pskills_train.synth --skills $c/corpus/skills_val --out $c/trajectories/val.jsonl
[[ -f $c/sw/train/tasks.jsonl ]] || $py -m pskills_train.skillworld generate --split train --n 4000 --seed 0 --out $c/sw/train
[[ -f $c/sw/val/tasks.jsonl ]] || $py -m pskills_train.skillworld generate --split val --n 200 --seed 0 --out $c/sw/val
eps() { [[ -f $1/stage2.jsonl ]] || $py -m pskills_train.train.build_episodes --out-dir "$1" "${@:2}"; }
eps $c/episodes/real --trajectories $c/trajectories/train.jsonl
eps $c/episodes/sw-real --skillworld $c/sw/train --trajectories $c/trajectories/train.jsonl
eps $c/episodes/sw-real-val --skillworld $c/sw/val --trajectories $c/trajectories/val.jsonl
cp $c/episodes/real/base.jsonl $c/episodes/base.jsonl  # phase 3 reads episodes/base.jsonl
# phase 3 starts from the phase-2 weights as a bundle (run.init_bundle: fresh optimizer, its own schedule)
cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/base2/model/
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase2.json --out $c/bundles/base2 --force
phase training/configs/pretrain-phase3.json $c/runs/base3 --set run.init_bundle=$c/bundles/base2
phase training/configs/pretrain-phase4.json $c/runs/base4
cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/base4/model/  # an HF folder, whole
# lm.onnx takes LoRA inputs for the hypernetwork's targets (configs/hyper.json net.targets)
targets=$($py -c 'import json; print(",".join(json.load(open("training/configs/hyper.json"))["net"]["targets"]))')
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase4.json --out $c/bundles/base4 \
  --lora-targets "$targets" --force

# 4. hypernetworks, stage 2 with in-batch negatives (run2.init empty: this bundle has no stage 1): the
#    Perceiver and the T2L-style baseline with the same settings, one core each
hyper() {  # kind
  local k=$1 sets=()
  [[ $k == t2l ]] && sets=(--set net.kind=t2l --set run2.out=$c/runs/t2l2)
  local r2=$c/runs/${k/perceiver/hyper}2
  [[ -f $r2/done ]] || { $py -m pskills_train.hyper.train --config training/configs/hyper.json --stage 2 "${sets[@]}" \
    $( [[ -f $r2/ckpt.pt ]] && echo --resume ) && touch $r2/done; }
}
hyper perceiver > $c/runs/perceiver.log 2>&1 &
hyper t2l > $c/runs/t2l.log 2>&1 &
wait

# 5. the complete bundle (+ the T2L ablation, so `pskills eval` runs its condition from the bundle alone,
#    + encoder.onnx, recovered from the base's lm.onnx when the base bundle has none: compile reads it).
#    To add encoder.onnx alone to an existing bundle, in place (same bytes on every run):
#      $py -m pskills_train.export.onnx_encoder resources/bundles/default
$py -m pskills_train.hyper.export --base-bundle $c/bundles/base4 --checkpoint $c/runs/hyper2/ckpt.pt \
  --ablation t2l_baseline=$c/runs/t2l2/ckpt.pt --out resources/bundles/default --kind perceiver --force
echo "default bundle: resources/bundles/default"
