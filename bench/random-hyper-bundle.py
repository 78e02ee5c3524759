"""A random bundle of the bench-10m shape (d 256, 8 layers, vocab 8192, 2048 positions) with a random,
perturbed Perceiver hypernetwork shaped like configs/hyper/hyper9.json (rank 8, width 128, 2 blocks; encoder
budget 512, overlap 64): what `npm run bench:compile -- --random` measures until the default bundle
has a trained hypernetwork. Not a fixture; written under .cache/, never committed.

    training/.venv/bin/python bench/random-hyper-bundle.py OUT_DIR
"""
import sys, tempfile
from pathlib import Path
import torch
from pskills_train.export.bundle import random_model, write_bundle
from pskills_train.export.manifest import BundleSpec
from pskills_train.hyper.config import NetConfig
from pskills_train.hyper.export import write_hyper_bundle
from pskills_train.hyper.net import build_hypernet, perturb
from pskills_train.tokenizer import tokenizer_config
out = Path(sys.argv[1])
torch.set_num_threads(1)
lm, tok = random_model("bench-10m", seed=0)
tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=lm.cfg.max_positions)
net = build_hypernet(lm.cfg, NetConfig(kind="perceiver", rank=8, width=128, heads=4, blocks=2, mlp_ratio=2, targets=list(lm.cfg.lora_targets), seed=0))
perturb(net, seed=1)
net.eval()
with tempfile.TemporaryDirectory() as tmp:
    base = write_bundle(lm, tok, tcfg, Path(tmp) / "base", BundleSpec(id="bench-10m-hyper", created="2025-01-01T00:00:00Z", default_rank=8, alpha=8.0, token_budget=512, chunk_overlap=64, training_card={"kind": "random init"}))
    write_hyper_bundle(base, net, out, 512, 64, {"kind": "random init (perturbed)"}, force=True)
print("ok", out)
