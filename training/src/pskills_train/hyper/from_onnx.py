"""Recover a bundle's Perceiver hypernetwork as a training checkpoint from its hypernet.onnx alone.

A fresh clone has the shipped bundle but not the run folder that trained it, so continuing stage 2
(here, or on a lent GPU) starts here. The exporter keeps most tensors under their module names; it
stores every Linear weight as an anonymous MatMul initializer W.T, named by its node
("/net/blocks.0/q/MatMul"; the per-module heads as "/net/q/MatMul" for A and "/net/q_1/MatMul" for
B), the learned queries as the constant of "/net/Expand", and the slot batch norm's 1/sqrt(var + eps)
as the constant of "/net/out_norm/Mul". The net is rebuilt from the bundle's training card and
checked against onnxruntime (`parity`), so a wrong mapping cannot pass quietly.

    python -m pskills_train.hyper.from_onnx BUNDLE OUT.pt
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from ..model.backend import config_from_manifest
from .config import HyperConfig
from .export import FlatHypernet
from .net import PerceiverHypernet, SlotBatchNorm, build_hypernet

_NODE = re.compile(r"^/net/(.+)/MatMul$")


def _card(manifest: dict[str, Any], where: Path) -> dict[str, Any]:
    card = (manifest.get("training_card") or {}).get("hypernet")
    if not card or "config" not in card:
        raise ValueError(f"{where}: bundle.json has no training_card.hypernet.config to rebuild the net from")
    return card


def _param_name(path: str, modules: list[str], leaf: str) -> str:
    """A MatMul's module path -> a parameter name ("blocks.0/mlp/mlp.0" -> "blocks.0.mlp.0.weight")."""
    head = path.removesuffix("_1")
    if head in modules and "/" not in path:  # the per-module heads: A first, then B ("_1")
        return f"{'head_b' if path.endswith('_1') else 'head_a'}.{head}.{leaf}"
    parts = path.split("/")
    parts = [p for i, p in enumerate(parts) if not (i + 1 < len(parts) and parts[i + 1].startswith(p + "."))]
    return ".".join(parts) + f".{leaf}"


def load_onnx_hypernet(bundle: str | Path) -> tuple[PerceiverHypernet, dict[str, Any], dict[str, Any]]:
    """(net in eval mode, the hyper config dict, the base LM config dict) of the bundle's hypernet.onnx."""

    bundle = Path(bundle)
    manifest = json.loads((bundle / "bundle.json").read_text())
    card = _card(manifest, bundle / "bundle.json")
    raw = {**card["config"], "run2": card.get("run") or {}}
    cfg = HyperConfig.from_dict(raw, f"{bundle}/bundle.json training_card.hypernet")
    if cfg.net.kind != "perceiver":
        raise ValueError(f"{bundle}: hypernet kind {cfg.net.kind!r}; only the perceiver is recovered from ONNX")
    lm_cfg = config_from_manifest(manifest)
    lm_raw = lm_cfg.to_dict()
    net = build_hypernet(lm_cfg, cfg.net)
    assert isinstance(net, PerceiverHypernet)
    path = bundle / manifest["hypernet"]["file"]
    graph = onnx.load(str(path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:  # a deduplicated tensor keeps its other names as Identity outputs
        if node.op_type == "Identity" and node.input[0] in inits:
            inits[node.output[0]] = inits[node.input[0]]
    own = net.state_dict()
    # Named tensors keep their module names; anonymous ones are named by the node that uses them.
    state: dict[str, torch.Tensor] = {k.removeprefix("net."): torch.from_numpy(np.array(v))
                                      for k, v in inits.items() if k.startswith("net.")}
    for node in graph.node:
        m = _NODE.match(node.name)
        mod = m.group(1) if m else ""
        for x in node.input:
            if x not in inits or node.op_type == "Identity":
                continue
            value = torch.from_numpy(np.array(inits[x]))
            if node.op_type == "MatMul" and mod:
                state[_param_name(mod, net.modules_, "weight")] = value.T.contiguous()
            elif node.name == "/net/Expand" and not x.startswith("net."):
                state["queries"] = value.reshape(net.queries.shape)
            elif node.name == "/net/out_norm/Mul" and isinstance(net.out_norm, SlotBatchNorm):
                # the eval-mode batch norm's 1 / sqrt(running_var + eps)
                state["out_norm.running_var"] = value.reshape(net.num_slots, -1).pow(-2) - net.out_norm.eps
            elif not x.startswith("net."):
                raise ValueError(f"{path}: constant {x} of node {node.name} ({node.op_type}) has no known parameter")
    missing = sorted(k for k in own if k not in state)
    unknown = sorted(k for k in state if k not in own)
    if missing or unknown:
        raise ValueError(f"{path}: parameters missing {missing[:4]}, unexpected {unknown[:4]}")
    for k, v in own.items():
        if tuple(state[k].shape) != tuple(v.shape):
            raise ValueError(f"{path}: {k} has shape {tuple(state[k].shape)}, the card's config says {tuple(v.shape)}")
    net.load_state_dict(state)
    return net.eval(), cfg.to_dict(), lm_raw


@torch.no_grad()
def parity(net: PerceiverHypernet, bundle: str | Path, n: int = 37, seed: int = 0) -> float:
    """Max |factor difference| between `net` and the bundle's hypernet.onnx on random states."""

    bundle = Path(bundle)
    manifest = json.loads((bundle / "bundle.json").read_text())
    sess = ort.InferenceSession(str(bundle / manifest["hypernet"]["file"]), providers=["CPUExecutionProvider"])
    g = torch.Generator().manual_seed(seed)
    states = torch.randn(1, n, net.d_enc, generator=g)
    mask = torch.ones(1, n)
    ref = sess.run(None, {"states": states.numpy(), "mask": mask.numpy()})
    got = FlatHypernet(net).eval()(states, mask)
    return max(float(np.abs(r - t.numpy()).max()) for r, t in zip(ref, got, strict=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.hyper.from_onnx",
                                 description="A bundle's hypernet.onnx as a checkpoint run2.init can start from.")
    ap.add_argument("bundle", type=Path)
    ap.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    net, cfg, lm_raw = load_onnx_hypernet(a.bundle)
    err = parity(net, a.bundle)
    if err > 1e-4:
        raise SystemExit(f"{a.bundle}: recovered hypernetwork differs from hypernet.onnx (max |Δ| {err:.2e})")
    card = json.loads((a.bundle / "bundle.json").read_text())["training_card"]["hypernet"]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_name(a.out.name + ".tmp")
    torch.save({"model": net.state_dict(), "config": cfg, "lm_config": lm_raw, "stage": card.get("stage", 2),
                "step": card.get("steps"), "history": card.get("history", []),
                "last_metrics": card.get("metrics", {}), "source": f"{a.bundle}/hypernet.onnx"}, tmp)
    tmp.replace(a.out)
    print(f"{a.out}: {net.num_params() / 1e6:.2f} M parameters, max |Δ| vs hypernet.onnx {err:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
