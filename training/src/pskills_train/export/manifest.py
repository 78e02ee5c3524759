"""bundle.json, format pskills.bundle/2 (docs/bundle-format.md is the contract; keep the two in step)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..distill_recipe import bundle_entry as distill_entry
from ..model.config import ModelConfig
from .staging import MARKER as BUNDLE_MARKER

FORMAT = "pskills.bundle/2"  # 1 = the same without lora.groups (one LoRA pair per target)
MANIFEST = "bundle.json"

# Name templates of lm.onnx's graph I/O; `{i}` = layer, `{group}` = LoRA group (lora.groups). Bundles
# written before groups existed have one pair per target, `lora.{i}.{module}.A|B` (LM_LORA_INPUTS_V1).
LM_INPUTS = ["input_ids", "attention_mask", "position_ids", "logits_to_keep", "past_key_values.{i}.key",
             "past_key_values.{i}.value"]
LM_LORA_INPUTS = ["lora.{i}.{group}.A", "lora.{i}.{group}.B"]
LM_LORA_INPUTS_V1 = ["lora.{i}.{module}.A", "lora.{i}.{module}.B"]
LM_OUTPUTS = ["logits", "present.{i}.key", "present.{i}.value", "hidden_states"]
LM_OUTPUTS_FUSED = ["logits", "step.{i}.key", "step.{i}.value", "hidden_states"]  # onnx_attention.py


@dataclass
class BundleSpec:
    """What a bundle says beyond the model itself."""

    id: str
    created: str  # ISO 8601 UTC
    default_rank: int = 8
    alpha: float = 16.0
    token_budget: int = 512  # encoder tokens per chunk
    chunk_overlap: int = 64
    lora_inputs: bool = True
    encoder_graph: bool = False  # also write encoder.onnx (export/onnx_encoder.py)
    # (batch, length) shapes of the train-step graphs to write (export/train_step.py); none: no graph
    train_buckets: tuple[tuple[int, int], ...] = ()
    training_card: dict[str, Any] = field(default_factory=dict)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_table(folder: Path) -> dict[str, dict[str, Any]]:
    """{name: {sha256, bytes}} for every file in the folder except bundle.json and the studio's marker
    (staging.py), sorted by name."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name not in (MANIFEST, BUNDLE_MARKER))
    return {p.name: {"sha256": sha256_file(p), "bytes": p.stat().st_size} for p in files}


def architecture(cfg: ModelConfig) -> dict[str, Any]:
    return {
        "family": cfg.family,
        "hidden": cfg.hidden_size,
        "layers": cfg.num_layers,
        "heads": cfg.num_heads,
        "kv_heads": cfg.num_kv_heads,
        "head_dim": cfg.head_dim,
        "intermediate": cfg.intermediate_size,
        "vocab": cfg.vocab_size,
        "max_positions": cfg.max_positions,
        "rms_eps": cfg.rms_eps,
        "rope": {"theta": cfg.rope_theta, "scaling": cfg.rope_scaling},
        "tie_embeddings": cfg.tie_embeddings,
        "qkv_bias": cfg.qkv_bias,
        "o_bias": cfg.o_bias,
        "sliding_window": cfg.sliding_window,
    }


def groups_entry(cfg: ModelConfig) -> list[dict[str, Any]]:
    """bundle.json `lora.groups`: how the engine packs each target's factors into lm.onnx's inputs."""
    return [{"name": g.name, "d_in": g.d_in, "d_out": g.d_out,
             "modules": [{"module": m, "offset": off} for m, off in g.members]} for g in cfg.lora_groups()]


def expand_names(templates: list[str], num_layers: int, lora_layers: list[int], modules: list[str]) -> set[str]:
    """The graph names templates stand for: `{i}` over all layers (LoRA names: over `lora_layers`),
    `{group}` / `{module}` over `modules` (the group names, or the targets of a V1 bundle)."""
    names: set[str] = set()
    for t in templates:
        if "{group}" in t or "{module}" in t:
            names |= {t.replace("{group}", "{module}").format(i=i, module=m) for i in lora_layers for m in modules}
        elif "{i}" in t:
            names |= {t.format(i=i) for i in range(num_layers)}
        else:
            names.add(t)
    return names


def build_manifest(cfg: ModelConfig, spec: BundleSpec, files: dict[str, dict[str, Any]],
                   special: dict[str, Any], tokenizer_vocab: int, attention: str = "ops") -> dict[str, Any]:
    """`attention` "fused": lm.onnx's attention is onnxruntime's GroupQueryAttention (onnx_attention.py),
    recorded as io.lm.attention, with the step.* outputs; "ops" writes no such key."""
    inputs = LM_INPUTS + (LM_LORA_INPUTS if spec.lora_inputs else [])
    lm_io = {"file": "lm.onnx", "float_dtype": "float32", "inputs": inputs, "outputs": LM_OUTPUTS}
    if attention == "fused":
        lm_io = {**lm_io, "outputs": LM_OUTPUTS_FUSED, "attention": "fused"}
    return {
        "format": FORMAT,
        "id": spec.id,
        "created": spec.created,
        "files": files,
        "architecture": architecture(cfg),
        "lora": {
            "targets": [{"module": m, "d_in": cfg.lora_dims(m)[0], "d_out": cfg.lora_dims(m)[1]}
                        for m in cfg.lora_targets],
            "layers": list(range(cfg.num_layers)),
            **({"groups": groups_entry(cfg)} if spec.lora_inputs else {}),
            "default_rank": spec.default_rank,
            "alpha": spec.alpha,
        },
        "encoder": {
            "kind": "lm_hidden",
            "layer": cfg.encoder_layer_index,
            "output": "hidden_states",
            "token_budget": spec.token_budget,
            "chunk_overlap": spec.chunk_overlap,
        },
        "tokenizer": {"file": "tokenizer.json", "config": "tokenizer_config.json", "vocab_size": tokenizer_vocab},
        "special_tokens": special,
        "io": {"lm": lm_io},
        "hypernet": None,
        "distill": distill_entry(),  # the studio's distil recipe (distill_recipe.py)
        "training_card": spec.training_card,
    }


# hypernet.onnx (docs/bundle-format.md "hypernet.onnx and compiling a skill").
HYPERNET_FILE = "hypernet.onnx"
HYPERNET_INPUTS = ["states", "mask"]
HYPERNET_OUTPUTS = ["A.{module}", "B.{module}"]
HYPERNET_KINDS = ("perceiver", "t2l")


def hypernet_entry(kind: str, rank: int, d_enc: int, params: int, file: str = HYPERNET_FILE) -> dict[str, Any]:
    """bundle.json `hypernet` object."""
    if kind not in HYPERNET_KINDS:
        raise ValueError(f"hypernet kind must be one of {HYPERNET_KINDS}, got {kind!r}")
    return {"file": file, "kind": kind, "rank": rank, "d_enc": d_enc, "inputs": list(HYPERNET_INPUTS),
            "outputs": list(HYPERNET_OUTPUTS), "chunk_combine": "mean", "params": params}


def hypernet_output_names(modules: list[str]) -> list[str]:
    """Graph output names in order: A then B per module, modules in lora.targets order."""
    return [t.format(module=m) for m in modules for t in HYPERNET_OUTPUTS]


def with_hypernet(manifest: dict[str, Any], files: dict[str, dict[str, Any]], hypernet: dict[str, Any],
                  token_budget: int, chunk_overlap: int, training_card: dict[str, Any]) -> dict[str, Any]:
    """A base bundle's manifest with a hypernetwork: new file table, `hypernet`, the encoder chunking the
    hypernetwork was trained with, rank r with α = r (the factors are folded), the extended card."""
    out = dict(manifest)
    out["files"] = files
    out["lora"] = {**manifest["lora"], "default_rank": hypernet["rank"], "alpha": float(hypernet["rank"])}
    out["encoder"] = {**manifest["encoder"], "token_budget": token_budget, "chunk_overlap": chunk_overlap}
    out["hypernet"] = hypernet
    out["training_card"] = training_card
    return out
