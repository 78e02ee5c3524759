"""Recover a bundle's base LM as a PyTorch LlamaLM from its lm.onnx alone.

A fresh clone has the default bundle but not the run folder that trained it; continuing that base
(a longer context, episodes that need the skill) starts here. The exporter keeps the embedding and
norm weights under their module names and turns every projection into an anonymous MatMul
initializer stored as W.T ([d_in, d_out]). Those are read in graph order: per layer q, k, v, o,
gate, up, down (the order LlamaLM.forward calls them), then the LM head when it is untied. The
caller checks logits parity against onnxruntime (`parity`), so a wrong mapping cannot pass quietly.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from .backend import OrtBackend, config_from_manifest
from .hf_load import save_hf
from .llama import LlamaLM

PROJ = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")


def _config(bundle: Path):
    manifest = json.loads((bundle / "bundle.json").read_text())
    return config_from_manifest(manifest), manifest


def load_onnx_lm(bundle: str | Path) -> LlamaLM:
    """The bundle's lm.onnx as a LlamaLM (fp32, eval mode); raises naming the file on any mismatch."""

    bundle = Path(bundle)
    cfg, manifest = _config(bundle)
    path = bundle / manifest["io"]["lm"]["file"]
    graph = onnx.load(str(path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    # The exporter stores equal weights once and aliases the rest with Identity nodes (untrained norms).
    aliases = {n.output[0]: inits[n.input[0]] for n in graph.node if n.op_type == "Identity" and n.input[0] in inits}
    named = {k.removeprefix("lm."): v for k, v in {**inits, **aliases}.items() if k.startswith("lm.")}
    seen: list[str] = []
    for node in graph.node:
        if node.op_type in ("MatMul", "Gemm") and len(node.input) > 1:
            w = node.input[1]
            if w in inits and w not in named and w not in seen:
                seen.append(w)
    # Bundles with lora.groups hold q|k|v as one fused [d, q + 2kv] weight (docs/bundle-format.md).
    fused = "groups" in manifest["lora"]
    per_layer = len(PROJ) - 2 if fused else len(PROJ)
    want = cfg.num_layers * per_layer + (0 if cfg.tie_embeddings else 1)
    # A tied head still appears as one transposed copy of the embedding at the end.
    if len(seen) not in (want, want + 1):
        raise ValueError(f"{path}: {len(seen)} projection weights, expected {want} for {cfg.num_layers} layers")
    state: dict[str, torch.Tensor] = {k: torch.from_numpy(np.array(v)) for k, v in named.items()}
    q, kv = cfg.num_heads * cfg.head_dim, cfg.num_kv_heads * cfg.head_dim
    for i in range(cfg.num_layers):
        ws = [np.array(inits[seen[i * per_layer + j]].T) for j in range(per_layer)]  # [d_out, d_in] each
        if fused:
            ws = [ws[0][:q], ws[0][q:q + kv], ws[0][q + kv:], *ws[1:]]
        for proj, w in zip(PROJ, ws, strict=True):
            state[f"model.layers.{i}.{proj}.weight"] = torch.from_numpy(np.ascontiguousarray(w))
    if not cfg.tie_embeddings:
        state["lm_head.weight"] = torch.from_numpy(np.array(inits[seen[want - 1]].T))
    lm = LlamaLM(cfg)
    own = lm.state_dict()
    if cfg.tie_embeddings and "lm_head.weight" in own:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    missing = sorted(k for k in own if k not in state)
    if missing:
        raise ValueError(f"{path}: no weights for {missing[:4]}{' …' if len(missing) > 4 else ''}")
    for k, v in own.items():
        if tuple(state[k].shape) != tuple(v.shape):
            raise ValueError(f"{path}: {k} has shape {tuple(state[k].shape)}, "
                             f"the bundle's config says {tuple(v.shape)}")
    lm.load_state_dict({k: state[k] for k in own})
    return lm.eval()


@torch.no_grad()
def parity(lm: LlamaLM, bundle: str | Path, seq: int = 32, seed: int = 0) -> float:
    """Max |logit difference| between `lm` and the bundle's lm.onnx on one random sequence."""
    ort = OrtBackend(bundle)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, lm.cfg.vocab_size, (1, seq), generator=g)
    mask = torch.ones_like(ids)
    pos = torch.arange(seq)[None]
    ref = ort.forward(ids, mask, pos, None, None)[0]
    got = lm(ids, mask, pos, None, None)[0]
    return float((ref - got).abs().max())


def main(argv: list[str] | None = None) -> int:
    """python -m pskills_train.model.from_onnx BUNDLE OUT: the bundle's base LM as an HF folder (+ tokenizer)."""


    ap = argparse.ArgumentParser(prog="python -m pskills_train.model.from_onnx", description=main.__doc__)
    ap.add_argument("bundle", type=Path)
    ap.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    lm = load_onnx_lm(a.bundle)
    err = parity(lm, a.bundle)
    if err > 1e-3:
        raise SystemExit(f"{a.bundle}: recovered weights differ from lm.onnx (max |Δlogit| {err:.2e})")
    save_hf(lm, a.out)
    manifest = json.loads((a.bundle / "bundle.json").read_text())
    for key in ("file", "config"):
        shutil.copyfile(a.bundle / manifest["tokenizer"][key], a.out / manifest["tokenizer"][key])
    print(f"{a.out}: {lm.num_params() / 1e6:.2f} M parameters, max |Δlogit| vs lm.onnx {err:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
