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

# 4. hypernetworks. Round 2: stage 2 with in-batch negatives from scratch (run2.init empty), 300 steps, the
#    Perceiver and the T2L-style baseline with the same settings, one core each
run() {  # out-dir log args…: train once (resume a cut run; `done` marks a finished one)
  local out=$1 log=$2; shift 2
  [[ -f $out/done ]] || { $py -m pskills_train.hyper.train --config training/configs/hyper.json "$@" \
    --set run2.out=$out --set run1.out=$out $( [[ -f $out/ckpt.pt ]] && echo --resume ) > "$log" 2>&1 \
    && touch "$out/done"; }
}
run $c/runs/hyper2 $c/runs/perceiver.log --stage 2 &
run $c/runs/t2l2 $c/runs/t2l.log --stage 2 --set net.kind=t2l &
wait
# Round 3 (shipped): both continue 600 steps with half the skills of each step real (stage2.source_shares;
# uniform skill sampling gave real skills 11 %), every micro-batch from one source (stage2.stratify: a
# real skill's negative is another real skill), slots capped (net.slot_clip 3), lr 5e-4; stage 1 alone
# (300 steps) for the stage1_only ablation
r3=(--stage 2 --set net.slot_clip=3.0 --set 'stage2.source_shares={"real":0.5,"skillworld":0.5}'
    --set stage2.stratify=true --set run2.lr=5e-4 --set run2.max_steps=600 --set run2.eval_every=50)
run $c/runs/hyper5 $c/runs/hyper5.log "${r3[@]}" --set run2.init=$c/runs/hyper2/ckpt.pt &
run $c/runs/t2l5 $c/runs/t2l5.log "${r3[@]}" --set net.kind=t2l --set run2.init=$c/runs/t2l2/ckpt.pt &
wait
run $c/runs/hyper1s $c/runs/hyper1s.log --stage 1 --set net.slot_clip=3.0 --set run1.max_steps=300
# running statistics of the slot batch norm: the exact average over 64 micro-batches taken as training
# took them (one source each, in turn), not the exponential average of the last ones
[[ -f $c/runs/hyper5/recal.pt ]] || $py -m pskills_train.hyper.recalibrate --checkpoint $c/runs/hyper5/ckpt.pt \
  --sources real,skillworld --stratify --batches 64 --out $c/runs/hyper5/recal.pt

# Round 4: the phase-5 base (each episode's answer weighted beside all its tokens; train/probe.py measures
# greedy exact match with the skill in context at each eval), and every hypernetwork continued on it
phase training/configs/pretrain-phase5.json $c/runs/base5
cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/base5/model/
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase5.json --out $c/bundles/base5 \
  --lora-targets "$targets" --force
r4=("${r3[@]}" --set data.base=$c/runs/base5/model --set run2.max_steps=150)
run $c/runs/hyper7 $c/runs/hyper7.log "${r4[@]}" --set run2.init=$c/runs/hyper5/ckpt.pt &
run $c/runs/t2l7 $c/runs/t2l7.log "${r4[@]}" --set net.kind=t2l --set run2.init=$c/runs/t2l5/ckpt.pt &
run $c/runs/hyper1s7 $c/runs/hyper1s7.log --stage 1 --set net.slot_clip=3.0 --set data.base=$c/runs/base5/model \
  --set run1.max_steps=80 --set run1.init=$c/runs/hyper1s/ckpt.pt &
wait
[[ -f $c/runs/hyper7/recal.pt ]] || $py -m pskills_train.hyper.recalibrate --checkpoint $c/runs/hyper7/ckpt.pt \
  --set data.base=$c/runs/base5/model --sources real,skillworld --stratify --batches 64 --out $c/runs/hyper7/recal.pt
# the round-4 candidate, measured (docs/results.md "Round 4"), not shipped (skills bpb 1.677 > 1.643): ROUND4=1
if [[ ${ROUND4:-0} == 1 ]]; then
  $py -m pskills_train.hyper.export --base-bundle $c/bundles/base5 --checkpoint $c/runs/hyper7/recal.pt \
    --ablation t2l_baseline=$c/runs/t2l7/ckpt.pt --ablation stage1_only=$c/runs/hyper1s7/ckpt.pt \
    --out $c/bundles/round4 --kind perceiver --force
fi

# Round 5 (shipped, issue 12): phase 5b (fewer episode rows, half the answer weight: skills bpb back down),
# the Perceiver 300 steps more on phase 5 (runs/hyper8c, the control of the transition-readout run; docs/results.md
# "Round 5 experiments") and then it and the T2L baseline 100 steps on phase 5b
phase training/configs/pretrain-phase5b.json $c/runs/base5b
cp $c/tokenizer/tokenizer.json $c/tokenizer/tokenizer_config.json $c/runs/base5b/model/
$py -m pskills_train.export.default_bundle --config training/configs/pretrain-phase5b.json --out $c/bundles/base5b \
  --lora-targets "$targets" --force
r5=("${r3[@]}" --set run2.warmup_steps=10)
run $c/runs/hyper8c $c/runs/hyper8c.log "${r5[@]}" --set data.base=$c/runs/base5/model --set run2.max_steps=300 \
  --set run2.init=$c/runs/hyper7/ckpt.pt
r5b=("${r5[@]}" --set data.base=$c/runs/base5b/model --set run2.max_steps=100)
run $c/runs/hyper9 $c/runs/hyper9.log "${r5b[@]}" --set run2.init=$c/runs/hyper8c/ckpt.pt &
run $c/runs/t2l9 $c/runs/t2l9.log "${r5b[@]}" --set net.kind=t2l --set run2.init=$c/runs/t2l7/ckpt.pt &
wait
[[ -f $c/runs/hyper9/recal.pt ]] || $py -m pskills_train.hyper.recalibrate --checkpoint $c/runs/hyper9/ckpt.pt \
  --set data.base=$c/runs/base5b/model --sources real,skillworld --stratify --batches 64 --out $c/runs/hyper9/recal.pt

# 5. the complete bundle (+ the stage1_only and T2L ablations, so `pskills eval` runs their conditions from
#    the bundle alone, + encoder.onnx, recovered from the base's lm.onnx when the base bundle has none:
#    compile reads it). To add encoder.onnx alone to an existing bundle, in place (same bytes every run):
#      $py -m pskills_train.export.onnx_encoder resources/bundles/default
$py -m pskills_train.hyper.export --base-bundle $c/bundles/base5b --checkpoint $c/runs/hyper9/recal.pt \
  --ablation t2l_baseline=$c/runs/t2l9/ckpt.pt --ablation stage1_only=$c/runs/hyper1s7/ckpt.pt \
  --out resources/bundles/default --kind perceiver --force
echo "default bundle: resources/bundles/default"
