"""Re-export a bundle's graphs in the current format, weights unchanged.

    python -m pskills_train.export.reexport OLD_BUNDLE --out NEW_BUNDLE [--force]

lm.onnx, encoder.onnx and the train-step graphs (export/train_step.py, or train_layers.py when the old
bundle's are layered; the old bundle's buckets, else the defaults) are written again from the weights
lm.onnx holds (model/from_onnx.py), so a bundle gains what the exporter learned since (format 2's LoRA
groups, attention without copying the cache, a tied head stored once); every other file is copied as
is. Before anything is written the old and new lm.onnx run side by side in onnxruntime, with and
without an adapter, from an empty and a filled cache: their logits must agree within TOL. bundle.json
keeps id, created and the card, and the card gains `reexport` {of: sha256 of the old bundle.json,
logits_max_abs_diff}: the studio's store
treats such a bundle as the model it was re-exported from (docs/store.md), so adapters made with the
old files stay usable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch

from ..model.from_onnx import load_onnx_lm, parity
from ..model.llama import LlamaLM
from ..model.lora import LoraInputs
from .bundle import check_graph
from .manifest import FORMAT, LM_INPUTS, LM_LORA_INPUTS, MANIFEST, file_table, groups_entry
from .onnx_encoder import ENCODER_FILE, export_encoder
from .onnx_lm import LMExportConfig, export_lm, lora_graph_feeds
from .staging import staged_folder
from .train_layers import KIND as LAYERED
from .train_layers import add_layered_files
from .train_step import DEFAULT_BUCKETS, STEP_PREFIXES, add_train_step_files, parse_buckets

TOL = 1e-4
GRAPHS = ("lm.onnx", "lm.onnx.data", ENCODER_FILE)


def _feeds(sess, cfg, manifest: dict[str, Any], ids: np.ndarray, past: dict[str, np.ndarray] | None,
           adapter: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] | None) -> dict[str, np.ndarray]:
    """Feeds for either layout: a pair per target (format 1) or per group (manifest lora.groups)."""
    b, s = ids.shape
    p = 0 if past is None else next(iter(past.values())).shape[2]
    feeds: dict[str, np.ndarray] = {"input_ids": ids, "attention_mask": np.ones((b, p + s), np.int64),
                                    "position_ids": np.arange(p, p + s, dtype=np.int64)[None].repeat(b, 0),
                                    "logits_to_keep": np.zeros(1, np.int64)}
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            name = f"past_key_values.{i}.{kind}"
            feeds[name] = past[name] if past else np.zeros((b, cfg.num_kv_heads, 0, cfg.head_dim), np.float32)
    r = next(iter(adapter.values()))[0].shape[1] if adapter else 0
    lora: LoraInputs = {}
    for i in manifest["lora"]["layers"]:
        for m in cfg.lora_targets:
            d_in, d_out = cfg.lora_dims(m)
            a, bb = adapter[(i, m)] if adapter else (np.zeros((d_in, r), np.float32), np.zeros((r, d_out), np.float32))
            lora[(i, m)] = (torch.from_numpy(a)[None].expand(b, -1, -1), torch.from_numpy(bb)[None].expand(b, -1, -1))
    if "groups" in manifest["lora"]:
        feeds.update({k: v.numpy() for k, v in lora_graph_feeds(cfg, lora).items()})
    else:
        feeds.update({f"lora.{i}.{m}.{ab}": t.contiguous().numpy()
                      for (i, m), pair in lora.items() for ab, t in zip("AB", pair, strict=True)})
    wanted = {x.name for x in sess.get_inputs()}
    return {k: v for k, v in feeds.items() if k in wanted}


def logits_diff(old: Path, new: Path, lm: LlamaLM, seed: int = 0) -> float:
    """Max |logits| difference of the two bundles' lm.onnx: prefill and a cached step, no adapter and
    a random rank-4 one on every target."""

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sessions = [(ort.InferenceSession(str(d / "lm.onnx"), opts, providers=["CPUExecutionProvider"]),
                 json.loads((d / MANIFEST).read_text())) for d in (old, new)]
    cfg = lm.cfg
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, cfg.vocab_size, (2, 12)).astype(np.int64)
    adapter = {(i, m): ((rng.standard_normal((cfg.lora_dims(m)[0], 4)) * 0.1).astype(np.float32),
                        (rng.standard_normal((4, cfg.lora_dims(m)[1])) * 0.1).astype(np.float32))
               for i in range(cfg.num_layers) for m in cfg.lora_targets}
    worst = 0.0
    for ad in (None, adapter):
        outs = []
        for sess, manifest in sessions:
            names = [o.name for o in sess.get_outputs()]
            first = dict(zip(names, sess.run(names, _feeds(sess, cfg, manifest, ids[:, :8], None, ad)), strict=True))
            past = {n.replace("present.", "past_key_values."): first[n] for n in names if n.startswith("present.")}
            step = dict(zip(names, sess.run(names, _feeds(sess, cfg, manifest, ids[:, 8:], past, ad)), strict=True))
            outs.append(np.concatenate([first["logits"], step["logits"]], axis=1))
        worst = max(worst, float(np.abs(outs[0] - outs[1]).max()))
    return worst


def reexport(old: Path, out: Path, force: bool = False,
             train_buckets: list[tuple[int, int]] | None = None) -> dict[str, Any]:
    """`train_buckets`: None = the old bundle's train-step shapes, else the defaults; [] = no graphs."""
    manifest = json.loads((old / MANIFEST).read_text())
    if train_buckets is None:
        old_buckets = manifest.get("train_step", {}).get("buckets", [])
        train_buckets = [(b["batch"], b["length"]) for b in old_buckets] or list(DEFAULT_BUCKETS)
    lm = load_onnx_lm(old)
    recovered = parity(lm, old)
    if recovered > TOL:
        raise AssertionError(f"{old}/lm.onnx: the recovered model differs from it by {recovered:.2e}")
    with staged_folder(out, force) as tmp:
        for name in manifest["files"]:
            if name not in GRAPHS and not name.startswith(STEP_PREFIXES):
                shutil.copyfile(old / name, tmp / name)
        with torch.no_grad():
            export_lm(lm, tmp / "lm.onnx", LMExportConfig(lora_inputs=True))
            if ENCODER_FILE in manifest["files"]:
                export_encoder(lm, tmp / ENCODER_FILE)
        tmp_manifest = {**{k: v for k, v in manifest.items() if k != "train_step"}, "format": FORMAT,
                        "lora": {**manifest["lora"], "groups": groups_entry(lm.cfg)},
                        "io": {**manifest["io"], "lm": {**manifest["io"]["lm"],
                                                        "inputs": LM_INPUTS + LM_LORA_INPUTS}}}
        (tmp / MANIFEST).write_text(json.dumps(tmp_manifest))
        diff = logits_diff(old, tmp, lm)
        if diff > TOL:
            raise AssertionError(f"re-exported lm.onnx differs from {old}/lm.onnx by {diff:.2e} (> {TOL})")
        of = hashlib.sha256((old / MANIFEST).read_bytes()).hexdigest()
        card = {**manifest["training_card"], "reexport": {"of": of, "logits_max_abs_diff": diff}}
        new = {**tmp_manifest, "files": file_table(tmp), "training_card": card}
        check_graph(tmp / "lm.onnx", new)
        (tmp / MANIFEST).write_text(json.dumps(new, indent=2) + "\n")
        if train_buckets:  # they read lm.onnx's bytes at fixed offsets, so they follow the new lm.onnx
            layered = manifest.get("train_step", {}).get("kind") == LAYERED
            new = (add_layered_files if layered else add_train_step_files)(tmp, lm, train_buckets)
            (tmp / MANIFEST).write_text(json.dumps(new, indent=2) + "\n")
    return new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    ap.add_argument("--train-step-buckets", help="train_step graphs BATCHxLENGTH,… or none (default: the old "
                    f"bundle's, else {','.join(f'{b}x{s}' for b, s in DEFAULT_BUCKETS)})")
    args = ap.parse_args(argv)
    buckets = None if args.train_step_buckets is None else \
        [] if args.train_step_buckets == "none" else parse_buckets(args.train_step_buckets)
    new = reexport(args.bundle, args.out, args.force, buckets)
    sizes = {k: v["bytes"] for k, v in new["files"].items() if k in GRAPHS}
    print(f"wrote {args.out} ({new['format']}; logits max abs diff "
          f"{new['training_card']['reexport']['logits_max_abs_diff']:.1e}; {sizes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
