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

# 2. base LM: one config per phase (training/configs/README.md): phase 1 (cosine), phase 2 continuing it
#    (warmup-stable-decay), phase 3 (1,024-token windows, real-skill episodes, from the phase-2 bundle),
#    phase 4 (SkillWorld + real-skill episodes), phase 5 and 5b (the answer weighted; 5b ships)
phase() {  # config run-folder
  [[ -f $2/model/model.safetensors ]] || $py -m pskills_train.train.pretrain --config "$1" \
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
# phase 3 starts from the phase-2 weights as a bundle (its run.init_bundle: fresh optimizer, its own schedule)
cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/base2/model/
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase2.json --out $c/bundles/base2 --force
phase training/configs/pretrain-phase3.json $c/runs/base3
phase training/configs/pretrain-phase4.json $c/runs/base4
phase training/configs/pretrain-phase5.json $c/runs/base5
phase training/configs/pretrain-phase5b.json $c/runs/base5b
for r in base4 base5 base5b; do  # the bases the hypernetworks read, each an HF folder, whole
  cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/$r/model/
done
# the shipped base as a bundle whose lm.onnx takes LoRA inputs for the hypernetwork's targets
targets=$($py -c 'import json; print(",".join(json.load(open("training/configs/hyper/hyper9.json"))["net"]["targets"]))')
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase5b.json --out $c/bundles/base5b \
  --lora-targets "$targets" --force

# 4. hypernetworks: one config per run, training/configs/hyper/<run>.json, whose run.out is runs/<run>
#    (the lineage and what each run changed: training/configs/README.md). Runs side by side take one core each.
run() {  # stage run: train once (resume a cut run; `done` marks a finished one)
  local out=$c/runs/$2
  [[ -f $out/done ]] || { $py -m pskills_train.hyper.train --config "training/configs/hyper/$2.json" --stage "$1" \
    $( [[ -f $out/ckpt.pt ]] && echo --resume ) > "$c/runs/$2.log" 2>&1 && touch "$out/done"; }
}
run 2 hyper2 & run 2 t2l2 & wait  # round 2: from scratch on the phase-4 base
run 2 hyper5 & run 2 t2l5 & wait  # round 3
run 1 hyper1s                     # stage 1 alone (the stage1_only ablation)
run 2 hyper7 & run 2 t2l7 & run 1 hyper1s7 & wait  # round 4: on the phase-5 base
run 2 hyper8c                     # round 5: 300 steps more on phase 5
run 2 hyper9 & run 2 t2l9 & wait  # round 5: 100 steps on phase 5b (shipped)
# running statistics of the slot batch norm: the exact average over 64 micro-batches taken as training
# took them (one source each, in turn), not the exponential average of the last ones (the checkpoint's
# own config names the base)
[[ -f $c/runs/hyper9/recal.pt ]] || $py -m pskills_train.hyper.recalibrate --checkpoint $c/runs/hyper9/ckpt.pt \
  --sources real,skillworld --stratify --batches 64 --out $c/runs/hyper9/recal.pt

# 5. the complete bundle (+ the stage1_only and T2L ablations, so `pskills eval` runs their conditions from
#    the bundle alone, + encoder.onnx, recovered from the base's lm.onnx when the base bundle has none:
#    compile reads it). To add encoder.onnx alone to an existing bundle, in place (same bytes every run):
#      $py -m pskills_train.export.onnx_encoder resources/bundles/default
$py -m pskills_train.hyper.export --base-bundle $c/bundles/base5b --checkpoint $c/runs/hyper9/recal.pt \
  --ablation t2l_baseline=$c/runs/t2l9/ckpt.pt --ablation stage1_only=$c/runs/hyper1s7/ckpt.pt \
  --out $c/bundles/round5 --kind perceiver --force

# 6. the hypernetwork taught from distillation (docs/distill.md, "Teaching the hypernetwork"): the top-k
#    KL to the skill-in-context teacher on SkillWorld train worlds' practice questions, 500 steps from
#    round 5's hypernetwork, the best by val KL exported (configs/distill-meta.json)
[[ -f $c/sw/meta-train/tasks.jsonl ]] || $py -m pskills_train.skillworld generate --split train --n 900 --seed 0 \
  --out $c/sw/meta-train
[[ -f $c/sw/meta-val/tasks.jsonl ]] || $py -m pskills_train.skillworld generate --split val --n 90 --seed 0 \
  --out $c/sw/meta-val
$py -m pskills_train.commands.distill_meta --bundle $c/bundles/round5 --train $c/sw/meta-train --val $c/sw/meta-val \
  --out $c/runs/meta6 $( [[ -f $c/runs/meta6/ckpt.pt ]] && echo --resume ) --export resources/bundles/default
echo "default bundle: resources/bundles/default"
