"""A bundle from a local Hugging Face checkpoint (Llama, Qwen2, Mistral): `pskills bundle create --from-hf`.

    python -m pskills_train.commands.from_hf --from-hf HF_DIR --out DIR [--dtype fp32|fp16]
        [--lora-targets q,k,v,o,gate,up,down] [--encoder-layer K] [--hypernet none|init|CKPT]

The checkpoint's weights load into our LlamaLM by HF key names (model/hf_load.py) and export to
lm.onnx with the LoRA inputs and KV cache; tokenizer.json is copied as it is and the chat template
(tokenizer_config.json, or chat_template.jinja beside it) goes into the bundle's tokenizer_config.json.
fp16 stores the weights as float16 behind Cast nodes (graph I/O stays float32, format 1); weights
over 2 GB go to ONNX external data (`lm.onnx.data`). Before the folder is renamed into place the
graph's I/O names and fixed dimensions are checked against bundle.json, and onnxruntime runs a short
prompt whose logits must equal the PyTorch model's.

A checkpoint brings no hypernetwork. `--hypernet none` (default) writes a base bundle: it generates,
and compile refuses it by name. `--hypernet init` attaches a freshly initialised hypernetwork whose B
heads are zero, so every compiled adapter is ΔW = 0 until one is trained (hyper/train.py): the
compile → generate path runs end to end and equals the base model. `--hypernet CKPT` attaches a
trained one (a ckpt.pt of pskills_train.hyper.train on this base).

This module is the command (the studio runs it by this name): the checkpoint is read in
export/hf_checkpoint.py, the bundle written in export/bundle_writer.py, and the hypernetwork comes from
hyper/, which itself builds on export/, so the command sits above both packages.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..export.bundle_writer import FromHfOptions, add_bundle_args, options_from_args, progress, run_build
from ..export.hf_checkpoint import write_base_bundle
from ..export.manifest import MANIFEST
from ..export.staging import check_replaceable
from ..hyper.attach import initial_hypernet, trained_hypernet
from ..hyper.export import write_hyper_bundle


def create_bundle(folder: Path, out: Path, opts: FromHfOptions, hypernet: str = "none",
                  hyper_config: Path | None = None) -> Path:
    """A base bundle, or (with a hypernet) the base assembled beside `out` and extended into `out`."""
    check_replaceable(out, opts.force)  # before the checkpoint is read
    if hypernet == "none":
        return write_base_bundle(folder, out, opts)
    if opts.weights != "fp32":
        raise ValueError(f"--weights {opts.weights} with --hypernet: the hypernetwork's encoder reads lm.onnx's "
                         f"float32 weights; attach it to an fp32 bundle")
    base = out.with_name(f".{out.name}.base")
    try:
        write_base_bundle(folder, base, FromHfOptions(**{**vars(opts), "force": True, "steps": 5}))
        progress(5, 5, f"attaching the hypernetwork ({'fresh' if hypernet == 'init' else Path(hypernet).name})")
        manifest = json.loads((base / MANIFEST).read_text())
        model_cfg = manifest["training_card"]["model"]
        net, card, budget, overlap = initial_hypernet(model_cfg, hyper_config) if hypernet == "init" \
            else trained_hypernet(Path(hypernet), manifest)
        return write_hyper_bundle(base, net, out, budget, overlap, card, force=opts.force)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.commands.from_hf", description=__doc__.split("\n")[0])
    ap.add_argument("--from-hf", required=True, type=Path, help="checkpoint folder: config.json, safetensors, "
                    "tokenizer.json, tokenizer_config.json")
    ap.add_argument("--out", required=True, type=Path)
    add_bundle_args(ap, "the checkpoint folder")
    ap.add_argument("--hypernet", default="none", help="none | init | a hyper/train.py ckpt.pt")
    ap.add_argument("--hyper-config", type=Path, help="with --hypernet init: net and encoder settings")
    a = ap.parse_args(argv)
    opts = options_from_args(ap, a)
    return run_build(lambda: create_bundle(a.from_hf, a.out, opts, a.hypernet, a.hyper_config), a.dtype,
                     lambda m: m["architecture"]["family"])


if __name__ == "__main__":
    sys.exit(main())
