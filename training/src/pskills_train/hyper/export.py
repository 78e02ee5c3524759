"""Export a trained hypernetwork: hypernet.onnx and a complete bundle folder (docs/bundle-format.md).

    python -m pskills_train.hyper.export --base-bundle DIR --checkpoint CKPT --out DIR [--kind perceiver|t2l]
        [--ablation stage1_only=CKPT --ablation t2l_baseline=CKPT]

The new bundle is the base bundle's files (lm.onnx, tokenizer) + hypernet.onnx + bundle.json with the
`hypernet` object, the encoder chunking the hypernetwork was trained with and a training card
extended by the hypernetwork's config, steps and metrics. Assembled under a temporary name and
renamed into place; the same inputs give the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import onnx
import torch
import torch.nn as nn
from torch import Tensor

from ..data.data_sets import episodes_sets, merged
from ..export.manifest import (
    HYPERNET_FILE,
    HYPERNET_INPUTS,
    MANIFEST,
    file_table,
    hypernet_entry,
    hypernet_output_names,
    with_hypernet,
)
from ..export.onnx_encoder import (
    ENCODER_FILE,
    base_lm,
    check_encoder_graph,
    check_encoder_parity,
    export_encoder,
    with_encoder,
)
from ..export.staging import staged_folder
from ..model.config import ModelConfig
from .config import net_config
from .net import build_hypernet
from .protocol import as_hypernet

OPSET = 17


class FlatHypernet(nn.Module):
    """states [1, n, d], mask [1, n] -> A.{m} [L, d_in, r], B.{m} [L, r, d_out] in output-name order."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, states: Tensor, mask: Tensor):
        out = self.net(states, mask)
        return tuple(t[0] for m in as_hypernet(self.net).modules_ for t in out[m])


def export_hypernet(net: nn.Module, path: str | os.PathLike, trace_n: int = 5) -> Path:
    path = Path(path)
    h = as_hypernet(net)
    flat = FlatHypernet(net).eval()
    g = torch.Generator().manual_seed(0)
    states = torch.randn(1, trace_n, h.d_enc, generator=g)  # [1, n, d_enc]
    mask = torch.ones(1, trace_n)  # [1, n]
    outputs = hypernet_output_names(h.modules_)
    axes = {"states": {1: "n"}, "mask": {1: "n"}}
    tmp = path.with_name(path.name + ".tmp")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(flat, (states, mask), str(tmp), input_names=list(HYPERNET_INPUTS), output_names=outputs,
                          dynamic_axes=axes, opset_version=OPSET, dynamo=False, do_constant_folding=True)
    # The tracer leaves dimensions computed through Reshape symbolic; the contract fixes L, d_in, r, d_out.
    model = onnx.load(str(tmp))
    for v in model.graph.output:
        ab, m = v.name.split(".", 1)
        d_in, d_out = h.dims[m]
        want = [h.num_layers, d_in, h.rank] if ab == "A" else [h.num_layers, h.rank, d_out]
        dims = v.type.tensor_type.shape.dim
        for d, size in zip(dims, want, strict=True):  # the tracer gives each output its rank, 3
            d.Clear()
            d.dim_value = size
    onnx.checker.check_model(model)
    onnx.save(model, str(tmp))
    os.replace(tmp, path)
    return path


def check_hypernet_graph(path: Path, manifest: dict[str, Any]) -> None:
    """Names, ranks and fixed dimensions of hypernet.onnx equal what bundle.json says."""
    graph = onnx.load(str(path)).graph
    arch, lora, hyper = manifest["architecture"], manifest["lora"], manifest["hypernet"]
    modules = [t["module"] for t in lora["targets"]]
    dims = {t["module"]: (t["d_in"], t["d_out"]) for t in lora["targets"]}

    def shape(v):
        return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]

    got_in = {v.name: shape(v) for v in graph.input}
    want_in = {"states": [1, "n", arch["hidden"]], "mask": [1, "n"]}
    if got_in != want_in:
        raise AssertionError(f"{path.name} inputs {got_in} != {want_in}")
    got_out = [v.name for v in graph.output]
    if got_out != hypernet_output_names(modules):
        raise AssertionError(f"{path.name} outputs {got_out} != {hypernet_output_names(modules)}")
    n_layers, r = len(lora["layers"]), hyper["rank"]
    for v in graph.output:
        ab, m = v.name.split(".", 1)
        d_in, d_out = dims[m]
        want = [n_layers, d_in, r] if ab == "A" else [n_layers, r, d_out]
        if shape(v) != want:
            raise AssertionError(f"{path.name} {v.name} shape {shape(v)} != {want}")


ABLATIONS = ("stage1_only", "t2l_baseline")  # the evaluation's hypernetwork conditions (docs/design.md §5)


def write_hyper_bundle(base: str | os.PathLike, net: nn.Module, out: str | os.PathLike, token_budget: int,
                       chunk_overlap: int, card: dict[str, Any], force: bool = False,
                       ablations: dict[str, tuple[nn.Module, dict[str, Any]]] | None = None,
                       encoder: bool = False) -> Path:
    """Base bundle + hypernet.onnx (+ the evaluation's ablation hypernetworks, `hypernet-<name>.onnx`,
    so `pskills eval` runs every condition from the bundle alone) -> a complete bundle folder at `out`.
    `encoder`: also ship encoder.onnx (export/onnx_encoder.py), made from the base's lm.onnx when the base
    bundle has none."""
    ablations = ablations or {}
    base, out = Path(base), Path(out)
    manifest = json.loads((base / MANIFEST).read_text())
    if manifest.get("hypernet") is not None:
        raise ValueError(f"{base}: already has a hypernet; export from a base-only bundle")
    arch = manifest["architecture"]
    modules = [t["module"] for t in manifest["lora"]["targets"]]
    h = as_hypernet(net)
    for name, (other_net, _) in [("hypernet", (net, {})), *ablations.items()]:
        other = as_hypernet(other_net)
        if name != "hypernet" and name not in ABLATIONS:
            raise ValueError(f"ablation {name!r}: expected one of {ABLATIONS}")
        if list(other.modules_) != modules or other.rank != h.rank:
            raise ValueError(f"{name}: targets {other.modules_} / rank {other.rank} differ from the bundle's "
                             f"{modules} / {h.rank}")
        if other.d_enc != arch["hidden"] or other.num_layers != len(manifest["lora"]["layers"]):
            raise ValueError(f"{name}: d_enc / layers do not match the base bundle")
    add_encoder = encoder and "encoder" not in manifest["io"]
    with staged_folder(out, force) as tmp:
        for name in manifest["files"]:
            shutil.copyfile(base / name, tmp / name)
        if add_encoder:
            export_encoder(base_lm(base), tmp / ENCODER_FILE)
        export_hypernet(net, tmp / HYPERNET_FILE)
        for name, (ablation, _) in sorted(ablations.items()):
            export_hypernet(ablation, tmp / f"hypernet-{name}.onnx")
        entry = hypernet_entry(h.kind, h.rank, h.d_enc, h.num_params())
        if ablations:
            entry["ablations"] = {name: f"hypernet-{name}.onnx" for name in sorted(ablations)}
            card = {**card, "ablations": {name: c for name, (_, c) in sorted(ablations.items())}}
        new = with_hypernet(manifest, file_table(tmp), entry, token_budget, chunk_overlap,
                            {**manifest.get("training_card", {}), "hypernet": card})
        if add_encoder:
            new = with_encoder(new, new["files"])
            check_encoder_graph(tmp / ENCODER_FILE, new)
        check_hypernet_graph(tmp / HYPERNET_FILE, new)
        for file in entry.get("ablations", {}).values():
            check_hypernet_graph(tmp / file, new)
        (tmp / MANIFEST).write_text(json.dumps(new, indent=2) + "\n")
        if add_encoder:
            check_encoder_parity(tmp)
    return out


def load_hypernet(ckpt: dict[str, Any], kind: str | None = None) -> tuple[nn.Module, ModelConfig, dict[str, Any]]:
    """(hypernet in eval mode, the base LM's config, the hyper config dict) from a training checkpoint."""
    cfg = ckpt["config"]
    net_cfg = net_config(cfg["net"], "checkpoint config.net")
    if kind is not None and kind != net_cfg.kind:
        raise ValueError(f"--kind {kind} but the checkpoint holds a {net_cfg.kind} hypernetwork")
    lm_cfg = ModelConfig.from_dict(ckpt["lm_config"])
    net = build_hypernet(lm_cfg, net_cfg)
    net.load_state_dict(ckpt["model"])
    return net.eval(), lm_cfg, cfg


def training_card(ckpt: dict[str, Any]) -> dict[str, Any]:
    cfg = ckpt["config"]
    card = {"kind": "hypernetwork", "stage": ckpt.get("stage"), "steps": ckpt.get("step"),
            "history": ckpt.get("history", []),
            "config": {k: cfg[k] for k in ("net", "encoder", "data", "stage1", "stage2") if k in cfg},
            "run": cfg.get(f"run{ckpt.get('stage', 1)}"), "metrics": ckpt.get("last_metrics", {})}
    if "config_file" in ckpt:  # the file the run read and its sha256 (config_io.config_record)
        card["config_file"] = ckpt["config_file"]
    if "recalibrated" in ckpt:  # hyper.recalibrate: the batch-norm statistics the bundle compiles with
        card["recalibrated"] = ckpt["recalibrated"]
    data = cfg.get("data") or {}  # the episodes it trained and validated on (data/data_sets.py)
    card["data_sets"] = merged([r for k in ("trajectories_train", "trajectories_val") if data.get(k)
                                for r in episodes_sets(data[k], f"hypernetwork data.{k}")])
    return card


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.hyper.export", description=__doc__.split("\n")[0])
    ap.add_argument("--base-bundle", required=True, type=Path)
    ap.add_argument("--checkpoint", required=True, type=Path, help="ckpt.pt of pskills_train.hyper.train")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--kind", choices=["perceiver", "t2l"], help="check the checkpoint holds this kind")
    ap.add_argument("--ablation", action="append", default=[], metavar="NAME=CKPT",
                    help=f"also ship an evaluation hypernetwork, NAME in {ABLATIONS}")
    ap.add_argument("--no-encoder-graph", action="store_true",
                    help="do not add encoder.onnx when the base bundle has none (compile then runs lm.onnx)")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    ckpt = torch.load(a.checkpoint, map_location="cpu", weights_only=False)
    net, lm_cfg, cfg = load_hypernet(ckpt, a.kind)
    ablations = {}
    for item in a.ablation:
        name, _, path = item.partition("=")
        if not path:
            raise SystemExit(f"--ablation {item!r}: expected NAME=CKPT")
        other_ckpt = torch.load(path, map_location="cpu", weights_only=False)
        other, other_lm, _ = load_hypernet(other_ckpt)
        if other_lm.encoder_layer_index != lm_cfg.encoder_layer_index:
            raise SystemExit(f"--ablation {name}: trained on encoder layer {other_lm.encoder_layer_index}, "
                             f"the hypernet on {lm_cfg.encoder_layer_index}")
        ablations[name] = (other, training_card(other_ckpt))
    base = json.loads((a.base_bundle / MANIFEST).read_text())
    if base["encoder"]["layer"] != lm_cfg.encoder_layer_index:
        raise SystemExit(f"the base bundle's encoder.layer {base['encoder']['layer']} != the layer the hypernet "
                         f"was trained on ({lm_cfg.encoder_layer_index})")
    out = write_hyper_bundle(a.base_bundle, net, a.out, cfg["encoder"]["token_budget"], cfg["encoder"]["chunk_overlap"],
                             training_card(ckpt), force=a.force, ablations=ablations,
                             encoder=not a.no_encoder_graph)
    h = as_hypernet(net)
    print(f"wrote {out} (hypernet {h.kind}, {h.num_params() / 1e6:.2f} M parameters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
