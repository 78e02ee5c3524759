"""Writing a base bundle from a loaded model: lm.onnx (+ external data), checked against PyTorch with
onnxruntime, the tokenizer, bundle.json and the train-step graphs. A checkpoint folder
(hf_checkpoint.py) and a GGUF file (from_gguf.py) both come through `write_loaded_bundle`, so their
bundles are the same kind; `add_bundle_args` / `options_from_args` are the command-line options they share.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from tokenizers import Tokenizer

from ..model import LlamaLM
from ..model.config import LORA_MODULES, ModelConfig
from .bundle import check_graph, created_now
from .lm_q4 import ACCURACY_LEVEL, BLOCK_SIZE, HEAD_BITS, WEIGHTS, to_q4, write_float_twin
from .manifest import MANIFEST, BundleSpec, build_manifest, file_table
from .onnx_attention import ATTENTIONS
from .onnx_lm import LMExportConfig, export_lm
from .onnx_structure import read_structure
from .onnx_weights import EXTERNAL_DATA_BYTES, round_weights_fp16, save_graph, to_fp16_storage
from .staging import staged_folder
from .train_layers import KIND as LAYERED
from .train_layers import LAYERED_BUCKETS, add_layered_files, lm_from_lm_onnx
from .train_step import DEFAULT_BUCKETS, add_train_step_files, parse_buckets

TRAIN_KINDS = ("layered", "whole")

DTYPES = ("fp32", "fp16")
VERIFY_TOL = 1e-3  # onnxruntime vs PyTorch on the check prompt, relative (tests hold tiny models to 1e-4)


@dataclass
class FromHfOptions:
    dtype: str = "fp32"
    lora_targets: tuple[str, ...] = tuple(LORA_MODULES)
    encoder_layer: int | None = None  # None: the middle layer
    rank: int = 8
    alpha: float = 16.0
    token_budget: int = 512
    chunk_overlap: int = 64
    bundle_id: str | None = None
    created: str | None = None
    chat_template: str | None = None  # replaces the checkpoint's
    external_threshold: int = EXTERNAL_DATA_BYTES
    force: bool = False
    extra_card: dict[str, Any] = field(default_factory=dict)
    steps: int = 4  # progress lines count to this (5 when a hypernetwork is attached after the base)
    # train_step graphs (export/train_step.py), (batch, length) each; the command line asks for the defaults
    train_buckets: tuple[tuple[int, int], ...] = ()
    # layered (export/train_layers.py): distilling and exporting need one layer's memory; whole
    # (export/train_step.py): one graph per bucket, faster for a small base but the model's memory many times
    train_kind: str = LAYERED
    weights: str = "fp32"  # lm.onnx's MatMul weights: fp32, or q4 (lm_q4.py; layered train steps read it too)
    attention: str = "fused"  # lm.onnx's attention: onnxruntime's fused nodes, or ONNX ops (onnx_attention.py)


def progress(step: int, steps: int, what: str) -> None:
    """`[step/steps] what` on stderr: the studio's Models page reads these lines as its progress."""
    print(f"[{step}/{steps}] {what}", file=sys.stderr, flush=True)


def export_graph(lm: LlamaLM, folder: Path, dtype: str, external_threshold: int, attention: str = "ops") -> list[Path]:
    """lm.onnx (+ lm.onnx.data) in `folder`. float32 comes from the exporter in the bundle's layout, weight
    by weight (export_lm); float16 storage is converted in memory in a scratch folder, then re-saved."""
    ecfg = LMExportConfig(attention=attention)
    if dtype == "fp32":
        path = export_lm(lm, folder / "lm.onnx", ecfg, external_threshold)
        data = path.with_name(path.name + ".data")
        return [path, data] if data.exists() else [path]
    with tempfile.TemporaryDirectory(dir=folder, prefix=".export-") as scratch:
        raw = export_lm(lm, Path(scratch) / "lm.onnx", ecfg)
        model = onnx.load(str(raw))
        to_fp16_storage(model)
        return save_graph(model, folder / "lm.onnx", external_threshold)


def _shape(v: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]


def check_shapes(path: Path, manifest: dict[str, Any]) -> None:
    """Every graph input and output has the contract's rank; its fixed dimensions equal bundle.json's
    numbers and the others are symbolic (docs/bundle-format.md, `lm.onnx`)."""
    a = manifest["architecture"]
    kv, hd = a["kv_heads"], a["head_dim"]
    lora = manifest["lora"]
    dims = ({g["name"]: (g["d_in"], g["d_out"]) for g in lora["groups"]} if "groups" in lora
            else {t["module"]: (t["d_in"], t["d_out"]) for t in lora["targets"]})
    graph = read_structure(path)[0].graph
    for v in list(graph.input) + list(graph.output):
        n = v.name
        if n in ("input_ids", "attention_mask", "position_ids"):
            want: list[int | None] = [None, None]
        elif n == "logits_to_keep":
            want = [1]
        elif n.startswith(("past_key_values.", "present.")):
            want = [None, kv, None, hd]
        elif n.startswith("step."):  # fused attention: the step's keys or values
            want = [None, None, kv * hd]
        elif n.startswith("lora."):
            d_in, d_out = dims[n.split(".")[2]]
            want = [None, d_in, None] if n.endswith(".A") else [None, None, d_out]
        elif n == "logits":
            want = [None, None, a["vocab"]]
        elif n == "hidden_states":
            want = [None, None, a["hidden"]]
        else:
            raise AssertionError(f"{path.name}: unexpected graph name {n}")
        got = _shape(v)
        ok = len(got) == len(want) and all(isinstance(g, str) if w is None else g == w
                                           for g, w in zip(got, want, strict=False))
        if not ok:
            shown = ["*" if w is None else w for w in want]
            raise AssertionError(f"{path.name}: {n} has shape {got}, the contract says {shown} (* = symbolic)")


def ort_feeds(cfg: ModelConfig, ids: np.ndarray) -> dict[str, np.ndarray]:
    """One unpadded row, no past, LoRA rank 0 (what compile's encoder run feeds)."""
    s = ids.shape[1]
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "position_ids": np.arange(s)[None].astype(np.int64),
             "logits_to_keep": np.zeros(1, np.int64)}
    for i in range(cfg.num_layers):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{i}.{kind}"] = np.zeros((1, cfg.num_kv_heads, 0, cfg.head_dim), np.float32)
        for g in cfg.lora_groups():
            feeds[f"lora.{i}.{g.name}.A"] = np.zeros((1, g.d_in, 0), np.float32)
            feeds[f"lora.{i}.{g.name}.B"] = np.zeros((1, 0, g.d_out), np.float32)
    return feeds


@torch.no_grad()
def verify_with_ort(lm: LlamaLM, path: Path, tokens: int = 6, tol: float = VERIFY_TOL,
                    outputs: tuple[str, ...] = ("logits", "hidden_states")) -> float:
    """Max |logits| and |hidden_states| difference of onnxruntime against PyTorch on a seeded prompt, each
    relative to that output's largest magnitude when it exceeds 1: real models carry hidden states in the
    tens of thousands (SmolLM2's reach 2·10⁴), where float32 rounding alone is a few 1e-2."""

    ids = np.random.default_rng(0).integers(0, lm.cfg.vocab_size, (1, tokens), dtype=np.int64)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    # One run: packing each MatMul's weights for speed would hold another copy of the model beside PyTorch's.
    opts.add_session_config_entry("session.disable_prepacking", "1")
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, ort_feeds(lm.cfg, ids)), strict=True))
    logits, _, hidden = lm(torch.from_numpy(ids))
    diff = max(float(np.abs(out[k] - ref).max()) / max(1.0, float(np.abs(ref).max()))
               for k, ref in (("logits", logits.numpy()), ("hidden_states", hidden.numpy())) if k in outputs)
    if not diff <= tol:
        raise AssertionError(f"{path.name}: onnxruntime differs from PyTorch by {diff:.3g} (relative; tolerance {tol})")
    return diff


@dataclass
class LoadedBase:
    """A base model with what the bundle needs besides its graphs: from a checkpoint folder here, from a
    GGUF file in from_gguf.py. Both go through `write_loaded_bundle`, so the bundles are the same kind."""

    lm: LlamaLM
    tokenizer_json: bytes  # written as tokenizer.json, byte for byte
    tokenizer_config: dict[str, Any]  # chat_template included
    special: dict[str, Any]  # bos, eos, pad, stop
    card: dict[str, Any]  # training_card; the writer adds ort_parity_max_rel
    default_id: str


def write_loaded_bundle(src: LoadedBase, out: Path, opts: FromHfOptions) -> Path:
    """Steps 2… of a base-only bundle (hypernet null) at `out`, written under a temporary name."""
    lm = src.lm
    lm.eval()
    if opts.weights not in WEIGHTS:
        raise ValueError(f"--weights: {opts.weights!r} is not one of {WEIGHTS}")
    if opts.train_kind not in TRAIN_KINDS:
        raise ValueError(f"--train-step-kind: {opts.train_kind!r} is not one of {TRAIN_KINDS}")
    if opts.weights == "q4" and opts.dtype != "fp32":
        raise ValueError("--weights q4 quantizes float32 weights: it needs --dtype fp32")
    if opts.dtype == "fp16":
        round_weights_fp16(lm)
    with staged_folder(out, opts.force) as tmp:
        progress(2, opts.steps, f"exporting lm.onnx ({opts.dtype})")
        written = export_graph(lm, tmp, opts.dtype, opts.external_threshold, opts.attention)
        progress(3, opts.steps, "checking onnxruntime against PyTorch")
        parity = verify_with_ort(lm, written[0])
        progress(4, opts.steps, "writing the tokenizer and bundle.json")
        (tmp / "tokenizer.json").write_bytes(src.tokenizer_json)
        (tmp / "tokenizer_config.json").write_text(json.dumps(src.tokenizer_config, indent=2, ensure_ascii=False)
                                                   + "\n")
        vocab = Tokenizer.from_file(str(tmp / "tokenizer.json")).get_vocab_size()
        spec = BundleSpec(id=opts.bundle_id or src.default_id, created=opts.created or created_now(),
                          default_rank=opts.rank, alpha=opts.alpha, token_budget=opts.token_budget,
                          chunk_overlap=opts.chunk_overlap,
                          training_card={**src.card, "ort_parity_max_rel": parity})
        manifest = build_manifest(lm.cfg, spec, file_table(tmp), src.special, vocab, opts.attention)
        check_graph(tmp / "lm.onnx", manifest)
        check_shapes(tmp / "lm.onnx", manifest)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        # Layered graphs on a 4-bit bundle read its 4-bit weights, so they are exported after requantizing.
        layered_q4 = opts.weights == "q4" and opts.train_kind == LAYERED
        if opts.train_buckets and not layered_q4:
            progress(4, opts.steps, f"exporting the train-step graphs ({opts.train_kind}; distilling in the studio)")
            add = add_layered_files if opts.train_kind == LAYERED else add_train_step_files
            manifest = add(tmp, lm, list(opts.train_buckets))
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        if opts.weights == "q4":
            progress(4, opts.steps, f"requantizing lm.onnx's weights to 4 bits (MatMulNBits, block {BLOCK_SIZE})")
            to_q4(tmp, manifest, opts.external_threshold)
            check_graph(tmp / "lm.onnx", manifest)
            check_shapes(tmp / "lm.onnx", manifest)
            # recorded, not checked: a second quantization moves the logits (greedy parity: test_lm_q4.py)
            q4_rel = verify_with_ort(lm, tmp / "lm.onnx", tol=math.inf, outputs=("logits",))
            card = {**manifest["training_card"], "lm_weights": {
                "kind": "MatMulNBits", "bits": 4, "block_size": BLOCK_SIZE, "symmetric": True,
                "accuracy_level": ACCURACY_LEVEL, "tied_head_bits": HEAD_BITS if lm.cfg.tie_embeddings else None,
                "float32_for": "train_step graphs (train_step.data)" if opts.train_buckets and not layered_q4
                else None, "logits_vs_float32_max_rel": q4_rel}}
            manifest = {**manifest, "files": file_table(tmp), "training_card": card}
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
            if opts.train_buckets and layered_q4:
                progress(4, opts.steps, "exporting the train-step graphs (layered, on the 4-bit weights)")
                lm_q4 = lm_from_lm_onnx(tmp / manifest["io"]["lm"]["file"], lm.cfg)
                twin = write_float_twin(tmp / "lm.onnx", tmp / "lm.float-twin.onnx")  # lm.onnx in float32 arithmetic
                try:
                    verify_with_ort(lm_q4, twin[0], outputs=("logits",))  # the dequantized model is lm.onnx's
                finally:
                    for f in twin:
                        f.unlink(missing_ok=True)
                manifest = add_layered_files(tmp, lm_q4, list(opts.train_buckets))
                (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return out


def _buckets(buckets: tuple[tuple[int, int], ...]) -> str:
    return ",".join(f"{b}x{s}" for b, s in buckets)


def add_bundle_args(ap: argparse.ArgumentParser, source: str) -> None:
    """The options every `pskills bundle create` source takes; `source` names it in the help ("the file")."""
    ap.add_argument("--dtype", choices=DTYPES, default="fp32", help="weight storage (graph I/O stays float32)")
    ap.add_argument("--lora-targets", default=",".join(LORA_MODULES), help="comma-separated, of " +
                    ",".join(LORA_MODULES))
    ap.add_argument("--encoder-layer", type=int, help="residual stream the encoder reads (default: the middle)")
    ap.add_argument("--chat-template", type=Path, help=f"jinja file replacing {source}'s chat template")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=16.0)
    ap.add_argument("--id", help=f"bundle id (default: {source}'s name)")
    ap.add_argument("--created", help="ISO 8601 time (default: now, or SOURCE_DATE_EPOCH)")
    ap.add_argument("--external-data-bytes", type=int, default=EXTERNAL_DATA_BYTES, help=argparse.SUPPRESS)
    ap.add_argument("--train-step-buckets", default="",
                    help="train_step graphs BATCHxLENGTH,… (export/train_step.py), or none (default: "
                    f"{_buckets(LAYERED_BUCKETS)} for layered steps, {_buckets(DEFAULT_BUCKETS)} for whole ones)")
    ap.add_argument("--train-step-kind", choices=TRAIN_KINDS, default=LAYERED,
                    help="layered: one layer's graphs, distilling in one layer's memory (default); whole: one graph "
                    "of the whole model per bucket (export/train_step.py)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    ap.add_argument("--weights", choices=WEIGHTS, default="fp32",
                    help="lm.onnx's MatMul weights: fp32, or q4 (4-bit MatMulNBits; layered train steps train on "
                    "them, whole ones on float32 copies)")
    ap.add_argument("--attention", choices=ATTENTIONS, default="fused",
                    help="lm.onnx's attention: fused (onnxruntime's RotaryEmbedding and GroupQueryAttention nodes, "
                    "faster decoding) or ops (standard ONNX operators, for other runtimes)")


def options_from_args(ap: argparse.ArgumentParser, a: argparse.Namespace) -> FromHfOptions:
    """FromHfOptions from `add_bundle_args`' options; an unknown LoRA target is a usage error."""
    targets = tuple(t.strip() for t in a.lora_targets.split(",") if t.strip())
    unknown = [t for t in targets if t not in LORA_MODULES]
    if unknown or not targets:
        ap.error(f"--lora-targets: unknown {unknown or 'none given'}; known: {','.join(LORA_MODULES)}")
    return FromHfOptions(dtype=a.dtype, lora_targets=targets, encoder_layer=a.encoder_layer, rank=a.rank,
                         alpha=a.alpha, bundle_id=a.id, created=a.created, force=a.force,
                         chat_template=a.chat_template.read_text(encoding="utf-8") if a.chat_template else None,
                         external_threshold=a.external_data_bytes,
                         train_buckets=() if a.train_step_buckets == "none"
                         else tuple(parse_buckets(a.train_step_buckets)) if a.train_step_buckets
                         else LAYERED_BUCKETS if a.train_step_kind == LAYERED else DEFAULT_BUCKETS, weights=a.weights,
                         train_kind=a.train_step_kind, attention=a.attention)


def run_build(build: Callable[[], Path], dtype: str, source: Callable[[dict[str, Any]], str]) -> int:
    """A bundle command's exit code: an expected failure is one `error:` line on stderr (1); a bundle
    written is one `wrote OUT: <source(manifest)>, …` line (0)."""
    try:
        out = build()
    except (FileNotFoundError, FileExistsError, ValueError, KeyError) as e:
        print(f"error: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 1
    manifest = json.loads((out / MANIFEST).read_text())
    total = sum(p.stat().st_size for p in out.iterdir())
    hypernet = "none" if manifest["hypernet"] is None else manifest["hypernet"]["kind"]
    print(f"wrote {out}: {source(manifest)}, {manifest['training_card']['parameters'] / 1e6:.1f} M parameters, "
          f"{dtype}, {total / 1e6:.1f} MB, files {sorted(manifest['files'])}, hypernet {hypernet}")
    return 0
