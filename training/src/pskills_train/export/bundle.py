"""Write a model bundle folder (docs/design.md §4, docs/bundle-format.md): lm.onnx, tokenizer, bundle.json.

    python -m pskills_train.export.bundle --out DIR --random-config tiny
    python -m pskills_train.export.bundle --out DIR --checkpoint HF_FOLDER [--chat-template FILE]

The folder is assembled under a temporary name and renamed into place, so a failed export never
leaves a half-written bundle. Given the same inputs and `--created`, the bytes are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer

from ..model import LlamaLM, ModelConfig, load_hf
from ..tokenizer import SPECIAL_TOKENS, synthetic_corpus, tokenizer_config, train_bpe
from .manifest import MANIFEST, BundleSpec, build_manifest, expand_names, file_table
from .onnx_encoder import ENCODER_FILE, check_encoder_graph, check_encoder_parity, export_encoder, with_encoder
from .onnx_lm import LMExportConfig, export_lm
from .onnx_structure import read_structure
from .staging import staged_folder
from .train_step import DEFAULT_BUCKETS, add_train_step_files, parse_buckets


@dataclass(frozen=True)
class RandomConfig:
    model: ModelConfig
    corpus_chars: int  # synthetic text the tokenizer is trained on
    vocab_from_tokenizer: bool  # False: keep the model's embedding size over a smaller tokenizer


RANDOM_CONFIGS: dict[str, RandomConfig] = {
    "tiny": RandomConfig(ModelConfig(vocab_size=384, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2,
                                     head_dim=16, intermediate_size=128, max_positions=256), 12_000, True),
    # ~10M parameters with the default model's 8192 embedding and LoRA targets (q, v): what the engine
    # benchmark runs.
    "bench-10m": RandomConfig(ModelConfig(vocab_size=8192, hidden_size=256, num_layers=8, num_heads=8, num_kv_heads=4,
                                          head_dim=32, intermediate_size=1024, max_positions=2048,
                                          lora_targets=("q", "v")), 200_000, False),
}


def random_model(name: str, seed: int = 0, sharpen: float = 1.0) -> tuple[LlamaLM, Tokenizer]:
    """A random-init LM and a BPE trained on synthetic text. `sharpen` scales the projections so that a
    random model's next-token distribution is peaked (greedy parity tests need clear argmax margins)."""
    rc = RANDOM_CONFIGS[name]
    tok = train_bpe(synthetic_corpus(rc.corpus_chars, seed=seed), rc.model.vocab_size, SPECIAL_TOKENS)
    cfg = replace(rc.model, vocab_size=tok.get_vocab_size()) if rc.vocab_from_tokenizer else rc.model
    torch.manual_seed(seed)
    lm = LlamaLM(cfg).eval()
    with torch.no_grad():
        for pname, p in lm.named_parameters():
            if "proj" in pname or "embed" in pname:
                p.mul_(sharpen)
    return lm, tok


def special_ids(tok: Tokenizer, tcfg: dict[str, Any]) -> dict[str, Any]:
    """bos/eos/pad ids from tokenizer_config.json; `stop` = every id that ends generation."""
    def token_id(key: str) -> int | None:
        t = tcfg.get(key)
        t = t.get("content") if isinstance(t, dict) else t
        return None if t is None else tok.token_to_id(t)

    eos = token_id("eos_token")
    if eos is None:
        raise ValueError("tokenizer_config.json: eos_token missing or not in the vocabulary")
    pad = token_id("pad_token")
    stop = [eos] + [i for i in [tok.token_to_id("<|endoftext|>")] if i is not None and i != eos]
    return {"bos": token_id("bos_token"), "eos": eos, "pad": eos if pad is None else pad, "stop": stop}


def write_bundle(lm: LlamaLM, tok: Tokenizer, tcfg: dict[str, Any], out: str | os.PathLike, spec: BundleSpec,
                 force: bool = False) -> Path:
    """Export `lm` and the tokenizer into `out` and write bundle.json with every file's sha256."""
    out = Path(out)
    if tok.get_vocab_size() > lm.cfg.vocab_size:
        raise ValueError(f"tokenizer has {tok.get_vocab_size()} tokens, the model's vocab is {lm.cfg.vocab_size}")
    with staged_folder(out, force) as tmp:
        export_lm(lm, tmp / "lm.onnx", LMExportConfig(lora_inputs=spec.lora_inputs))
        if spec.encoder_graph:
            export_encoder(lm, tmp / ENCODER_FILE)
        tok.save(str(tmp / "tokenizer.json"), pretty=False)
        (tmp / "tokenizer_config.json").write_text(json.dumps(tcfg, indent=2) + "\n")
        manifest = build_manifest(lm.cfg, spec, file_table(tmp), special_ids(tok, tcfg), tok.get_vocab_size())
        check_graph(tmp / "lm.onnx", manifest)
        if spec.encoder_graph:
            manifest = with_encoder(manifest, manifest["files"])
            check_encoder_graph(tmp / ENCODER_FILE, manifest)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        if spec.encoder_graph:
            check_encoder_parity(tmp)
        if spec.train_buckets and spec.lora_inputs:
            manifest = add_train_step_files(tmp, lm, list(spec.train_buckets))
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return out


def check_graph(path: Path, manifest: dict[str, Any]) -> None:
    """The exported graph's I/O names are exactly what bundle.json's io templates expand to."""
    graph = read_structure(path)[0].graph  # the graph without its weights (a 2 GB lm.onnx stays on disk)
    num_layers, lora = manifest["architecture"]["layers"], manifest["lora"]
    modules = [g["name"] for g in lora["groups"]] if "groups" in lora else [t["module"] for t in lora["targets"]]
    io = manifest["io"]["lm"]
    for kind, templates, actual in (("inputs", io["inputs"], graph.input), ("outputs", io["outputs"], graph.output)):
        want, got = expand_names(templates, num_layers, lora["layers"], modules), {v.name for v in actual}
        if want != got:
            raise AssertionError(f"{path.name} {kind} differ from bundle.json io.lm.{kind}: "
                                 f"missing {sorted(want - got)[:5]}, unexpected {sorted(got - want)[:5]}")


def created_now() -> str:
    """ISO time; SOURCE_DATE_EPOCH (the reproducible-builds convention) pins it."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def from_checkpoint(folder: Path, chat_template: str | None) -> tuple[LlamaLM, Tokenizer, dict[str, Any]]:
    lm = load_hf(folder).eval()
    tok_file, cfg_file = folder / "tokenizer.json", folder / "tokenizer_config.json"
    for f in (tok_file, cfg_file):
        if not f.exists():
            raise FileNotFoundError(f"{f}: missing (a bundle needs the checkpoint's tokenizer)")
    tcfg = json.loads(cfg_file.read_text())
    if chat_template is not None:
        tcfg["chat_template"] = chat_template
    if not isinstance(tcfg.get("chat_template"), str):
        raise ValueError(f"{cfg_file}: no chat_template string; pass --chat-template FILE")
    return lm, Tokenizer.from_file(str(tok_file)), tcfg


def report_written(out: Path, lm: LlamaLM) -> None:
    """The line a bundle command ends with."""
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({total / 1e6:.2f} MB, {lm.num_params() / 1e6:.2f} M parameters)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.bundle", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", type=Path, help="Hugging Face folder: config.json, safetensors, tokenizer")
    src.add_argument("--random-config", choices=sorted(RANDOM_CONFIGS))
    ap.add_argument("--chat-template", type=Path, help="jinja file replacing the checkpoint's chat_template")
    ap.add_argument("--id", help="bundle id (default: <config>-random or the checkpoint folder name)")
    ap.add_argument("--created", help="ISO 8601 time (default: now, or SOURCE_DATE_EPOCH)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sharpen", type=float, default=1.0, help="random configs: scale of the projections")
    ap.add_argument("--rank", type=int, default=8, help="default adapter rank the hypernet produces")
    ap.add_argument("--alpha", type=float, default=16.0)
    ap.add_argument("--token-budget", type=int, default=512)
    ap.add_argument("--chunk-overlap", type=int, default=64)
    ap.add_argument("--no-lora-inputs", action="store_true", help="plain graph without lora.* inputs (benchmarks)")
    ap.add_argument("--no-encoder-graph", action="store_true",
                    help="skip encoder.onnx (compile then runs the whole lm.onnx for the encoder states)")
    ap.add_argument("--train-step-buckets", default=",".join(f"{b}x{s}" for b, s in DEFAULT_BUCKETS),
                    help="train_step graphs BATCHxLENGTH,… (export/train_step.py), or none (default %(default)s)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    a = ap.parse_args(argv)
    buckets = () if a.train_step_buckets == "none" else tuple(parse_buckets(a.train_step_buckets))

    if a.random_config:
        lm, tok = random_model(a.random_config, a.seed, a.sharpen)
        tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>",
                                max_length=lm.cfg.max_positions)
        card: dict[str, Any] = {"kind": "random init", "config": a.random_config, "seed": a.seed,
                                "sharpen": a.sharpen, "steps": 0, "data": []}
        bundle_id = a.id or f"{a.random_config}-random"
    else:
        template = a.chat_template.read_text() if a.chat_template else None
        lm, tok, tcfg = from_checkpoint(a.checkpoint, template)
        card = {"kind": "hf checkpoint", "source": a.checkpoint.name}
        bundle_id = a.id or a.checkpoint.name
    spec = BundleSpec(id=bundle_id, created=a.created or created_now(), default_rank=a.rank, alpha=a.alpha,
                      token_budget=a.token_budget, chunk_overlap=a.chunk_overlap,
                      lora_inputs=not a.no_lora_inputs, encoder_graph=not a.no_encoder_graph, train_buckets=buckets,
                      training_card={"model": lm.cfg.to_dict(), **card})
    report_written(write_bundle(lm, tok, tcfg, a.out, spec, force=a.force), lm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
