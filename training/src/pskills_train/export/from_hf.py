"""A bundle from a local Hugging Face checkpoint (Llama, Qwen2, Mistral): `pskills bundle create --from-hf`.

    python -m pskills_train.export.from_hf --from-hf HF_DIR --out DIR [--dtype fp32|fp16]
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
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from tokenizers import Tokenizer

from ..model import LlamaLM, load_hf
from ..model.config import LORA_MODULES, ModelConfig
from .bundle import check_graph, created_now, special_ids
from .manifest import MANIFEST, BundleSpec, build_manifest, file_table, sha256_file
from .onnx_lm import LMExportConfig, export_lm
from .onnx_weights import EXTERNAL_DATA_BYTES, round_weights_fp16, save_graph, to_fp16_storage
from .staging import staged_folder
from .train_step import DEFAULT_BUCKETS, add_train_step_files, parse_buckets

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


def progress(step: int, steps: int, what: str) -> None:
    """`[step/steps] what` on stderr: the studio's Models page reads these lines as its progress."""
    print(f"[{step}/{steps}] {what}", file=sys.stderr, flush=True)


def chat_template_of(folder: Path, tcfg: dict[str, Any]) -> str:
    """The checkpoint's chat template: tokenizer_config.json's `chat_template` (a string, or a list of
    named templates: "default"), else chat_template.jinja, else chat_template.json."""
    t = tcfg.get("chat_template")
    if isinstance(t, list):
        named = {x.get("name"): x.get("template") for x in t if isinstance(x, dict)}
        t = named.get("default")
    if isinstance(t, str):
        return t
    if (folder / "chat_template.jinja").exists():
        return (folder / "chat_template.jinja").read_text(encoding="utf-8")
    if (folder / "chat_template.json").exists():
        t = json.loads((folder / "chat_template.json").read_text()).get("chat_template")
        if isinstance(t, str):
            return t
    raise ValueError(f"{folder / 'tokenizer_config.json'}: no chat_template (nor chat_template.jinja beside it); "
                     f"a base model without one needs --chat-template FILE")


def checkpoint_files(folder: Path) -> None:
    """Refuse a folder that lacks what a bundle needs, naming the file."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"{folder / 'config.json'}: missing (not a Hugging Face checkpoint folder)")
    if not (folder / "model.safetensors").exists() and not (folder / "model.safetensors.index.json").exists():
        legacy = [p.name for p in folder.glob("pytorch_model*.bin")]
        hint = f" ({legacy[0]} found: convert it to safetensors first)" if legacy else ""
        raise FileNotFoundError(f"{folder / 'model.safetensors'}: missing, and no model.safetensors.index.json{hint}")
    if not (folder / "tokenizer.json").exists():
        hint = " (tokenizer.model found: the studio reads only the fast tokenizer.json)" \
            if (folder / "tokenizer.model").exists() else ""
        raise FileNotFoundError(f"{folder / 'tokenizer.json'}: missing{hint}")
    if not (folder / "tokenizer_config.json").exists():
        raise FileNotFoundError(f"{folder / 'tokenizer_config.json'}: missing")


def special_tokens(folder: Path, tok: Tokenizer, tcfg: dict[str, Any]) -> dict[str, Any]:
    """bos/eos/pad from tokenizer_config.json (special_tokens_map.json filling gaps); `stop` adds the
    eos ids of generation_config.json / config.json (Llama 3 ends a turn with <|eot_id|>)."""
    stm = folder / "special_tokens_map.json"
    merged = {**(json.loads(stm.read_text()) if stm.exists() else {}), **{k: v for k, v in tcfg.items() if v}}
    special = special_ids(tok, merged)
    stop = list(special["stop"])
    for name in ("generation_config.json", "config.json"):
        f = folder / name
        ids = json.loads(f.read_text()).get("eos_token_id") if f.exists() else None
        for i in ids if isinstance(ids, list) else [] if ids is None else [ids]:
            if isinstance(i, int) and i < tok.get_vocab_size() and i not in stop:
                stop.append(i)
    return {**special, "stop": stop}


def load_checkpoint(folder: Path, opts: FromHfOptions) -> tuple[LlamaLM, dict[str, Any], dict[str, Any]]:
    """(LM, tokenizer_config for the bundle, special tokens)."""
    checkpoint_files(folder)
    lm = load_hf(folder, lora_targets=opts.lora_targets, encoder_layer=opts.encoder_layer)
    tcfg = json.loads((folder / "tokenizer_config.json").read_text())
    tcfg["chat_template"] = opts.chat_template if opts.chat_template is not None else chat_template_of(folder, tcfg)
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    if tok.get_vocab_size() > lm.cfg.vocab_size:
        raise ValueError(f"{folder / 'tokenizer.json'}: {tok.get_vocab_size()} tokens, more than config.json "
                         f"vocab_size {lm.cfg.vocab_size}")
    return lm, tcfg, special_tokens(folder, tok, tcfg)


def export_graph(lm: LlamaLM, folder: Path, dtype: str, external_threshold: int) -> list[Path]:
    """lm.onnx (+ lm.onnx.data) in `folder`. The exporter writes into a scratch folder first (a model
    over 2 GB comes out as one file per tensor there), then the graph is re-saved in the bundle's layout."""
    with tempfile.TemporaryDirectory(dir=folder, prefix=".export-") as scratch:
        raw = export_lm(lm, Path(scratch) / "lm.onnx", LMExportConfig())
        model = onnx.load(str(raw))
        if dtype == "fp16":
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
    graph = onnx.load(str(path), load_external_data=False).graph
    for v in list(graph.input) + list(graph.output):
        n = v.name
        if n in ("input_ids", "attention_mask", "position_ids"):
            want: list[int | None] = [None, None]
        elif n == "logits_to_keep":
            want = [1]
        elif n.startswith(("past_key_values.", "present.")):
            want = [None, kv, None, hd]
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
def verify_with_ort(lm: LlamaLM, path: Path, tokens: int = 6, tol: float = VERIFY_TOL) -> float:
    """Max |logits| and |hidden_states| difference of onnxruntime against PyTorch on a seeded prompt, each
    relative to that output's largest magnitude when it exceeds 1: real models carry hidden states in the
    tens of thousands (SmolLM2's reach 2·10⁴), where float32 rounding alone is a few 1e-2."""

    ids = np.random.default_rng(0).integers(0, lm.cfg.vocab_size, (1, tokens), dtype=np.int64)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, ort_feeds(lm.cfg, ids)), strict=True))
    logits, _, hidden = lm(torch.from_numpy(ids))
    diff = max(float(np.abs(out[k] - ref).max()) / max(1.0, float(np.abs(ref).max()))
               for k, ref in (("logits", logits.numpy()), ("hidden_states", hidden.numpy())))
    if not diff <= tol:
        raise AssertionError(f"{path.name}: onnxruntime differs from PyTorch by {diff:.3g} (relative; tolerance {tol})")
    return diff


def source_card(folder: Path, opts: FromHfOptions, lm: LlamaLM) -> dict[str, Any]:
    hashed = ["config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors",
              "model.safetensors.index.json", "generation_config.json", "chat_template.jinja"]
    files = {n: sha256_file(folder / n) for n in hashed if (folder / n).exists()}
    return {"kind": "hf checkpoint", "source": folder.name, "source_sha256": files, "model": lm.cfg.to_dict(),
            "dtype": opts.dtype, "parameters": lm.num_params(), "steps": 0, "data": [], **opts.extra_card}


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
    if opts.dtype == "fp16":
        round_weights_fp16(lm)
    with staged_folder(out, opts.force) as tmp:
        progress(2, opts.steps, f"exporting lm.onnx ({opts.dtype})")
        written = export_graph(lm, tmp, opts.dtype, opts.external_threshold)
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
        manifest = build_manifest(lm.cfg, spec, file_table(tmp), src.special, vocab)
        check_graph(tmp / "lm.onnx", manifest)
        check_shapes(tmp / "lm.onnx", manifest)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        if opts.train_buckets:
            progress(4, opts.steps, "exporting the train-step graphs (distilling in the studio)")
            manifest = add_train_step_files(tmp, lm, list(opts.train_buckets))
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return out


def write_base_bundle(folder: Path, out: Path, opts: FromHfOptions) -> Path:
    """The checkpoint as a base-only bundle (hypernet null) at `out`, written under a temporary name."""
    if opts.dtype not in DTYPES:
        raise ValueError(f"--dtype: {opts.dtype!r} is not one of {DTYPES}")
    progress(1, opts.steps, f"loading the checkpoint {folder.name}")
    lm, tcfg, special = load_checkpoint(folder, opts)
    src = LoadedBase(lm=lm, tokenizer_json=(folder / "tokenizer.json").read_bytes(), tokenizer_config=tcfg,
                     special=special, card=source_card(folder, opts, lm), default_id=folder.resolve().name)
    return write_loaded_bundle(src, out, opts)


def initial_hypernet(lm_cfg_dict: dict[str, Any], config: Path | None) -> tuple[Any, dict[str, Any], int, int]:
    """(fresh hypernetwork on the bundle's targets, card, token_budget, chunk_overlap); net and encoder
    settings from a hyper config (configs/hyper-*.json) when given."""
    from ..hyper.config import HyperConfig
    from ..hyper.net import build_hypernet

    hc = HyperConfig.load(config) if config else HyperConfig()
    lm_cfg = ModelConfig.from_dict(lm_cfg_dict)
    hc.net.targets = list(lm_cfg.lora_targets)
    torch.manual_seed(hc.net.seed)
    net = build_hypernet(lm_cfg, hc.net).eval()
    card = {"kind": "untrained hypernetwork", "net": dict(vars(hc.net)), "steps": 0,
            "note": "B heads start at zero: every compiled adapter is ΔW = 0 until the hypernetwork is trained "
                    "(python -m pskills_train.hyper.train) and attached with --hypernet CKPT"}
    return net, card, hc.encoder.token_budget, hc.encoder.chunk_overlap


def trained_hypernet(ckpt_path: Path, manifest: dict[str, Any]) -> tuple[Any, dict[str, Any], int, int]:
    """A hyper/train.py checkpoint, refused unless it was trained on this base's shape and encoder layer."""
    from ..hyper.export import load_hypernet, training_card

    if not ckpt_path.exists():
        raise FileNotFoundError(f"--hypernet {ckpt_path}: no such checkpoint")
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    net, lm_cfg, cfg = load_hypernet(ckpt)
    a = manifest["architecture"]
    got = (lm_cfg.hidden_size, lm_cfg.num_layers, lm_cfg.encoder_layer_index)
    want = (a["hidden"], a["layers"], manifest["encoder"]["layer"])
    if got != want:
        raise ValueError(f"--hypernet {ckpt_path}: trained on a base with (hidden, layers, encoder layer) {got}, "
                         f"this bundle has {want}")
    return net, training_card(ckpt), cfg["encoder"]["token_budget"], cfg["encoder"]["chunk_overlap"]


def create_bundle(folder: Path, out: Path, opts: FromHfOptions, hypernet: str = "none",
                  hyper_config: Path | None = None) -> Path:
    """A base bundle, or (with a hypernet) the base assembled beside `out` and extended into `out`."""
    from ..hyper.export import write_hyper_bundle

    if hypernet == "none":
        return write_base_bundle(folder, out, opts)
    if out.exists() and not opts.force:
        raise FileExistsError(f"{out} exists (pass --force to replace it)")
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
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.from_hf", description=__doc__.split("\n")[0])
    ap.add_argument("--from-hf", required=True, type=Path, help="checkpoint folder: config.json, safetensors, "
                    "tokenizer.json, tokenizer_config.json")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--dtype", choices=DTYPES, default="fp32", help="weight storage (graph I/O stays float32)")
    ap.add_argument("--lora-targets", default=",".join(LORA_MODULES), help="comma-separated, of " +
                    ",".join(LORA_MODULES))
    ap.add_argument("--encoder-layer", type=int, help="residual stream the encoder reads (default: the middle)")
    ap.add_argument("--hypernet", default="none", help="none | init | a hyper/train.py ckpt.pt")
    ap.add_argument("--hyper-config", type=Path, help="with --hypernet init: net and encoder settings")
    ap.add_argument("--chat-template", type=Path, help="jinja file replacing the checkpoint's chat template")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=16.0)
    ap.add_argument("--id", help="bundle id (default: the checkpoint folder's name)")
    ap.add_argument("--created", help="ISO 8601 time (default: now, or SOURCE_DATE_EPOCH)")
    ap.add_argument("--external-data-bytes", type=int, default=EXTERNAL_DATA_BYTES, help=argparse.SUPPRESS)
    ap.add_argument("--train-step-buckets", default=",".join(f"{b}x{s}" for b, s in DEFAULT_BUCKETS),
                    help="train_step graphs BATCHxLENGTH,… (export/train_step.py), or none (default %(default)s)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    a = ap.parse_args(argv)
    targets = tuple(t.strip() for t in a.lora_targets.split(",") if t.strip())
    unknown = [t for t in targets if t not in LORA_MODULES]
    if unknown or not targets:
        ap.error(f"--lora-targets: unknown {unknown or 'none given'}; known: {','.join(LORA_MODULES)}")
    opts = FromHfOptions(dtype=a.dtype, lora_targets=targets, encoder_layer=a.encoder_layer, rank=a.rank,
                         alpha=a.alpha, bundle_id=a.id, created=a.created, force=a.force,
                         chat_template=a.chat_template.read_text(encoding="utf-8") if a.chat_template else None,
                         external_threshold=a.external_data_bytes,
                         train_buckets=() if a.train_step_buckets == "none"
                         else tuple(parse_buckets(a.train_step_buckets)))
    try:
        out = create_bundle(a.from_hf, a.out, opts, a.hypernet, a.hyper_config)
    except (FileNotFoundError, FileExistsError, ValueError, KeyError) as e:
        print(f"error: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 1
    manifest = json.loads((out / MANIFEST).read_text())
    total = sum(p.stat().st_size for p in out.iterdir())
    card = manifest["training_card"]
    print(f"wrote {out}: {manifest['architecture']['family']}, {card['parameters'] / 1e6:.1f} M parameters, "
          f"{a.dtype}, {total / 1e6:.1f} MB, files {sorted(manifest['files'])}, "
          f"hypernet {'none' if manifest['hypernet'] is None else manifest['hypernet']['kind']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
