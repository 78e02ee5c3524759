"""Python side of bench/distill.ts: seconds per train step of each bucket of a bundle, in onnxruntime
(the same train_step graph the studio runs) and in eager torch autograd (the same objective.py functions
on the recovered LlamaLM), with the same threads. Prints JSON.

    training/.venv/bin/python bench/distill_step.py BUNDLE THREADS REPS
"""

import json
import statistics
import sys
import time
from pathlib import Path

import onnxruntime as ort
import torch

from pskills_train.export.train_step import StepSpec, example_inputs, io_names, lora_keys, torch_step
from pskills_train.model.backend import config_from_manifest
from pskills_train.model.from_onnx import load_onnx_lm

bundle, threads, reps = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
manifest = json.loads((bundle / "bundle.json").read_text())
cfg = config_from_manifest(manifest)
layers = manifest["lora"]["layers"]
keys = lora_keys(cfg, layers)
ins, outs = io_names(cfg, layers)
lm = load_onnx_lm(bundle)
for p in lm.parameters():
    p.requires_grad_(False)
out = {}
for b in manifest["train_step"]["buckets"]:
    spec = StepSpec(b["batch"], b["length"], manifest["train_step"]["rank"])
    x = example_inputs(cfg, keys, spec, seed=1)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(bundle / b["file"]), opts, providers=["CPUExecutionProvider"])
    feeds = {n: t.numpy() for n, t in zip(ins, x, strict=True)}
    sess.run(outs, feeds)
    o_times, t_times = [], []
    for _ in range(reps):  # interleaved, so load on the machine hits both alike
        t0 = time.perf_counter()
        sess.run(outs, feeds)
        o_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        torch_step(lm, keys, spec, x)
        t_times.append(time.perf_counter() - t0)
    out[f"{b['batch']}x{b['length']}"] = {"ort_python_s_per_step": statistics.median(o_times),
                                          "torch_s_per_step": statistics.median(t_times)}
print(json.dumps(out))
