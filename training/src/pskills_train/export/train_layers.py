"""The layered train step (docs/bundle-format.md "train_step", kind "layered"): one decoder layer's forward,
its vector-Jacobian product and the head's loss and gradient, as three graphs per bucket that serve every
layer, so distilling needs one layer's memory, not the model's.

The weights are graph inputs in lm.onnx's own layout and dtype (fused q|k|v stored as Wᵀ, float16 where
lm.onnx stores float16); bundle.json `train_step.weights` says where lm.onnx (or lm.onnx.data) holds each
one's bytes, so the bundle stores no second copy and the runner reads a layer's weights when its step
runs. The step (embed gather, the layers' forward keeping each input, the head, the layers' VJPs from the
top, Adam) is run by the studio (Node) and by `LayeredRunner` here, which is the reference the export
checks against `train_step.torch_step`.

    python -m pskills_train.export.train_layers BUNDLE [--buckets 8x64,8x128,8x256]

adds (or replaces) the layered graphs of an existing bundle, in place.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

import numpy as np
import onnx
import onnx_ir
import onnxruntime as ort
import onnxscript.optimizer
import torch
import torch.nn.functional as F
from onnx import TensorProto
from onnx.external_data_helper import ExternalDataInfo, uses_external_data
from torch import Tensor
from torch.fx.experimental.proxy_tensor import make_fx

from ..model.backend import config_from_manifest
from ..model.config import ModelConfig
from ..model.distill_objective import adam_update, distill_loss
from ..model.layers import RMSNorm, Rotary, attention_mask_4d
from ..model.llama import DecoderLayer, LlamaLM
from .layer_split import prune, saved_bytes, split_joint
from .manifest import MANIFEST, file_table
from .onnx_structure import read_structure
from .staging import staged_folder
from .train_step import (
    OPSET,
    STEP_PREFIXES,
    StepSpec,
    _answer_rows_only,
    _lm_spans,
    _pow_as_mul,
    _slim,
    lora_keys,
    parse_buckets,
    step_graph_files,
    step_rank,
    torch_step,
    train_step_entry,
    warm_inputs,
)

KIND = "layered"
# A real base distils 4 rows a step (the 5 M default's whole step takes 8), for time: on SmolLM2-135M, 2
# shared cores, a 4-row step took 2.4 s against 3.6 s for 8, and 20 of them brought a 512-token skill's
# loss over all its practice rows from 1.98 to 0.46 (8 rows: 0.26; bench/results/distill-rows.json,
# docs/distill.md "Layered train step"). Pass 8xS buckets for 8.
LAYERED_BUCKETS = ((4, 64), (4, 128), (4, 256))
# max |Δ| of the factors after two steps, the layered graphs against torch autograd on the whole model (fp32):
# the tiny fixture holds 1e-5 (test_train_layers.py), a real checkpoint's deeper sums a little more.
PARITY_TOL = 1e-4
GRAPH_TOL = 1e-4  # one graph's outputs against torch, relative to the output's largest magnitude when above 1
QKV, QKV_BIAS = "self_attn.qkv_proj.weight", "self_attn.qkv_proj.bias"
LAYER_ROLES = ("input_layernorm.weight", QKV, "self_attn.o_proj.weight", "post_attention_layernorm.weight",
               "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight")
HEAD_NORM, HEAD_W = "norm.weight", "lm_head.weight"
DTYPES: dict[int, str] = {TensorProto.FLOAT: "float32", TensorProto.FLOAT16: "float16", TensorProto.UINT8: "uint8"}
# A 4-bit lm.onnx (export/lm_q4.py) stores a projection as MatMulNBits' packed nibbles and block scales; the
# layer graph takes both (`{name}.q4` uint8 [N, K/32, 16], `{name}.scales` float32 [N, K/32]) and dequantizes.
Q4, SCALES = ".q4", ".scales"


@dataclass(frozen=True)
class LayerSpec(StepSpec):
    @property
    def layer_file(self) -> str:
        return f"train_layer-{self.batch}x{self.length}.onnx"

    @property
    def vjp_file(self) -> str:
        return f"train_layer_vjp-{self.batch}x{self.length}.onnx"

    @property
    def bwd_file(self) -> str:
        return f"train_layer_bwd-{self.batch}x{self.length}.onnx"

    @property
    def head_file(self) -> str:
        return f"train_head-{self.batch}x{self.length}.onnx"

    @property
    def files(self) -> tuple[str, str, str, str]:
        return self.layer_file, self.vjp_file, self.bwd_file, self.head_file


# ---------------------------------------------------------------------------------------------------
# Where lm.onnx holds each weight


def _span(t: onnx.TensorProto, where: Any, lm_path: Path) -> dict[str, Any]:
    if t.data_type not in DTYPES:
        raise ValueError(f"{lm_path}: initializer {t.name} has ONNX type {t.data_type}; the layered train step "
                         "reads float32, float16 or 4-bit (uint8) weights")
    shape = [int(d) for d in t.dims]
    length = int(np.prod(shape, dtype=np.int64)) * np.dtype(DTYPES[t.data_type]).itemsize
    if where is None or where.length not in (0, length):
        raise ValueError(f"{lm_path}: initializer {t.name} is not stored as raw bytes the runner can read")
    return {"file": where.location, "offset": int(where.offset), "length": length, "dtype": DTYPES[t.data_type],
            "shape": shape}


def lm_layout(lm_path: Path, cfg: ModelConfig) -> dict[str, Any]:
    """bundle.json `train_step.weights`: the spans of lm.onnx's embedding, each layer's weights (named by
    LAYER_ROLES, + QKV_BIAS) and the head's (HEAD_NORM, HEAD_W), read as model/from_onnx.py maps them:
    named `lm.*` tensors (directly, behind an Identity alias, or float16 behind a Cast), then the
    projections in graph order (per layer the fused q|k|v, o, gate, up, down; then an untied head)."""
    if cfg.o_bias:
        raise ValueError(f"{lm_path}: an o_proj bias is not supported by the layered train step")
    graph = read_structure(lm_path)[0].graph  # names, types and shapes; the weights stay on disk
    inits = {t.name: t for t in graph.initializer}
    source = {n.output[0]: n.input[0] for n in graph.node
              if n.op_type in ("Identity", "Cast") and n.input[0] in inits}

    def src(name: str) -> str:
        return source.get(name, name)

    named = {n.removeprefix("lm."): src(n) for n in [*inits, *source]
             if n.startswith("lm.") and not n.endswith(".fp16")}
    seen: list[str] = []
    matmul_of: dict[str, onnx.NodeProto] = {}
    for node in graph.node:
        if node.op_type in ("MatMul", "Gemm", "MatMulNBits") and len(node.input) > 1:
            w = node.input[1]
            if (w in inits or w in source) and not w.startswith("lm.") and w not in seen:
                seen.append(w)
                matmul_of[w] = node
                if node.op_type == "MatMulNBits" and (len(node.input) > 3 and node.input[3] or
                                                      {a.name: a.i for a in node.attribute}.get("bits") != 4):
                    raise ValueError(f"{lm_path}: {node.name}: only symmetric 4-bit MatMulNBits (export/lm_q4.py)")

    def mat(role: str, w: str) -> dict[str, str]:
        node = matmul_of[w]
        if node.op_type != "MatMulNBits":
            return {role: src(w)}
        return {role + Q4: node.input[1], role + SCALES: node.input[2]}
    per_layer = 5  # q|k|v fused (onnx_lm.fused_projections), o, gate, up, down
    want = cfg.num_layers * per_layer + (0 if cfg.tie_embeddings else 1)
    if len(seen) not in (want, want + 1):
        raise ValueError(f"{lm_path}: {len(seen)} projection weights, expected {want} for {cfg.num_layers} layers "
                         "with q|k|v fused (a format 1 lm.onnx: re-export it first, export/reexport.py)")
    adds: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        if n.op_type == "Add":
            for i in n.input:
                adds.setdefault(i, []).append(n)
    width = (cfg.num_heads + 2 * cfg.num_kv_heads) * cfg.head_dim

    def need(key: str) -> str:
        if key not in named:
            raise ValueError(f"{lm_path}: no initializer lm.{key}")
        return named[key]

    layers: list[dict[str, str]] = []
    for i in range(cfg.num_layers):
        ws = seen[i * per_layer:(i + 1) * per_layer]
        roles = {"input_layernorm.weight": need(f"model.layers.{i}.input_layernorm.weight"),
                 "post_attention_layernorm.weight": need(f"model.layers.{i}.post_attention_layernorm.weight")}
        for role, w in zip((QKV, *LAYER_ROLES[2:3], *LAYER_ROLES[4:]), ws, strict=True):
            roles.update(mat(role, w))
        if cfg.qkv_bias:  # the exporter folds cat(q, k, v biases) into one anonymous initializer added after the MatMul
            bias = [src(x) for a in adds.get(matmul_of[ws[0]].output[0], []) for x in a.input
                    if src(x) in inits and list(inits[src(x)].dims) == [width]]
            if len(bias) != 1:
                raise ValueError(f"{lm_path}: layer {i}: no q|k|v bias of {width} found after its fused MatMul")
            roles[QKV_BIAS] = bias[0]
        layers.append(roles)
    embed = need("model.embed_tokens.weight")
    head = {HEAD_NORM: need("model.norm.weight"),
            **({HEAD_W: embed} if cfg.tie_embeddings else mat(HEAD_W, seen[want - 1]))}
    names = {embed, *head.values(), *(n for roles in layers for n in roles.values())}
    spans = _lm_spans(lm_path, names)
    out: dict[str, dict[str, Any]] = {}
    for n in names:
        t = inits[n]
        if uses_external_data(t):
            info = ExternalDataInfo(t)
            where = spans.get(n)
            if where is not None and not info.length:
                where = type(where)(where.location, where.offset, 0)
        else:
            where = spans.get(n)
        out[n] = _span(t, where, lm_path)
    return {"embed": out[embed], "head": {k: out[v] for k, v in head.items()},
            "layers": [{k: out[v] for k, v in roles.items()} for roles in layers]}


def read_weight(folder: Path, span: dict[str, Any]) -> np.ndarray:
    """One SPAN's array, in its stored dtype."""
    count = int(np.prod(span["shape"], dtype=np.int64))
    a = np.fromfile(folder / span["file"], dtype=np.dtype(span["dtype"]).newbyteorder("<"), count=count,
                    offset=span["offset"])
    if a.size != count:
        raise ValueError(f"{folder / span['file']}: {span['length']} bytes at {span['offset']} run past the file")
    return a.astype(span["dtype"]).reshape(span["shape"])


# ---------------------------------------------------------------------------------------------------
# The traced functions


def dequant_q4(packed: Tensor, scales: Tensor, k: int) -> Tensor:
    """MatMulNBits' symmetric 4-bit blocks -> W [N, K] float32 (onnxruntime's layout: value 2j of a block in
    byte j's low nibble, 2j + 1 in its high nibble, zero point 8; blocks padded past K)."""
    n, nb, half = packed.shape  # [N, K/block, block/2] uint8
    byte = packed.float()  # nibbles by float arithmetic, exact for 0…255 (the exporter mistypes uint8 shifts)
    hi = torch.floor(byte * 0.0625)
    q = torch.stack([byte - 16.0 * hi, hi], -1).reshape(n, nb, 2 * half) - 8.0  # [N, nb, block]
    return (q * scales.reshape(n, nb, 1)).reshape(n, nb * 2 * half)[:, :k]


def stored(w: dict[str, Tensor], role: str, k: int) -> Tensor:
    """A projection as lm.onnx's MatMul reads it, [K = d_in, d_out] float32: the input itself, or its 4-bit
    blocks dequantized."""
    if role in w:
        return w[role].float()
    return dequant_q4(w[role + Q4], w[role + SCALES], k).t()


def layer_params(cfg: ModelConfig, w: dict[str, Tensor]) -> dict[str, Tensor]:
    """DecoderLayer's parameters from the layer's inputs in lm.onnx's layout (projections stored as Wᵀ)."""
    d, q, kv = cfg.hidden_size, cfg.num_heads * cfg.head_dim, cfg.num_kv_heads * cfg.head_dim
    qkv = stored(w, QKV, d).t()  # [q + 2kv, d]
    p = {"input_layernorm.weight": w["input_layernorm.weight"].float(),
         "post_attention_layernorm.weight": w["post_attention_layernorm.weight"].float(),
         "self_attn.q_proj.weight": qkv[:q], "self_attn.k_proj.weight": qkv[q:q + kv],
         "self_attn.v_proj.weight": qkv[q + kv:],
         "self_attn.o_proj.weight": stored(w, "self_attn.o_proj.weight", q).t()}
    for m, k in (("gate", d), ("up", d), ("down", cfg.intermediate_size)):
        p[f"mlp.{m}_proj.weight"] = stored(w, f"mlp.{m}_proj.weight", k).t()
    if QKV_BIAS in w:
        b = w[QKV_BIAS].float()
        for name, part in (("q", b[:q]), ("k", b[q:q + kv]), ("v", b[q + kv:])):
            p[f"self_attn.{name}_proj.bias"] = part
    return p


def layer_fns(cfg: ModelConfig, roles: list[str]):
    """(forward, vjp, joint) over flat tensors: (hidden, attention_mask, position_ids, *weights in `roles`
    order, *factors (A, B per lora target)[, grad_out]); joint returns the forward's output, then the vjp's."""
    with torch.device("meta"):  # every parameter comes from the inputs
        layer = DecoderLayer(cfg)
    rotary = Rotary(cfg)
    modules = list(cfg.lora_targets)
    n_w = len(roles)

    def forward(hidden: Tensor, mask: Tensor, pos: Tensor, *rest: Tensor) -> Tensor:
        w = dict(zip(roles, rest[:n_w], strict=True))
        f = rest[n_w:]
        lora = {m: (f[2 * j], f[2 * j + 1]) for j, m in enumerate(modules)}
        cos, sin = rotary(pos, hidden.dtype)  # [b, 1, s, hd]
        mask4 = attention_mask_4d(mask, hidden.shape[1], hidden.dtype, cfg.sliding_window)  # [b, 1, s, s]
        return torch.func.functional_call(layer, layer_params(cfg, w), (hidden, cos, sin, mask4, None, lora))[0]

    def vjp(hidden: Tensor, mask: Tensor, pos: Tensor, *rest: Tensor) -> tuple[Tensor, ...]:
        weights, factors, grad_out = rest[:n_w], rest[n_w:-1], rest[-1]
        pull = torch.func.vjp(lambda h, *fs: forward(h, mask, pos, *weights, *fs), hidden, *factors)[1]
        return tuple(pull(grad_out))

    def joint(hidden: Tensor, mask: Tensor, pos: Tensor, *rest: Tensor) -> tuple[Tensor, ...]:
        weights, factors, grad_out = rest[:n_w], rest[n_w:-1], rest[-1]
        res = torch.func.vjp(lambda h, *fs: forward(h, mask, pos, *weights, *fs), hidden, *factors)
        out, pull = res[0], res[1]
        return (out, *pull(grad_out))

    return forward, vjp, joint


def head_fn(cfg: ModelConfig, spec: StepSpec, roles: list[str]):
    """(hidden, *head weights in `roles` order, answer_mask, teacher_ids, teacher_logp) -> (loss, grad_hidden)."""
    with torch.device("meta"):
        norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)

    def head(hidden: Tensor, *rest: Tensor):
        ws = dict(zip(roles, rest[:len(roles)], strict=True))
        ans, top_ids, top_logp = rest[len(roles):]
        w = ws[HEAD_W].float() if cfg.tie_embeddings else stored(ws, HEAD_W, cfg.hidden_size).t()  # [V, d]

        def loss_of(h: Tensor) -> Tensor:
            x = torch.func.functional_call(norm, {"weight": ws[HEAD_NORM].float()}, (h,))
            return distill_loss(F.linear(x, w), top_ids, top_logp, ans, spec.ce_weight)

        g, loss = torch.func.grad_and_value(loss_of)(hidden)
        return loss, g

    return head


def factor_shapes(cfg: ModelConfig, rank: int) -> list[tuple[int, int]]:
    out = []
    for m in cfg.lora_targets:
        d_in, d_out = cfg.lora_dims(m)
        out += [(d_in, rank), (rank, d_out)]
    return out


def layer_io(cfg: ModelConfig, roles: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(forward inputs, vjp outputs, factor names) of the layer graphs."""
    factors = [f"lora.{m}.{ab}" for m in cfg.lora_targets for ab in "AB"]
    return ["hidden", "attention_mask", "position_ids", *roles, *factors], \
        ["grad_in", *[f"grad.{m}.{ab}" for m in cfg.lora_targets for ab in "AB"]], factors


def head_inputs(roles: list[str]) -> list[str]:
    return ["hidden", *roles, "answer_mask", "teacher_ids", "teacher_logp"]


def _export(fn, args: list[Tensor], ins: list[str], outs: list[str], mode: str) -> onnx.ModelProto:
    """make_fx over static shapes, the dynamo exporter, constant folding only (train_step.py's route)."""
    gm = make_fx(fn, tracing_mode=cast(Any, mode))(*args)
    quiet = [logging.getLogger(n) for n in ("onnxscript", "onnx_ir")]
    levels = [q.level for q in quiet]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for q in quiet:  # the optimizer's per-node INFO lines would bury bundle create's progress
            q.setLevel(logging.WARNING)
        prog = torch.onnx.export(gm, tuple(args), dynamo=True, input_names=ins, output_names=outs,
                                 opset_version=OPSET, optimize=False, verbose=False)
    assert prog is not None
    irm = prog.model
    onnxscript.optimizer.fold_constants(irm)
    onnxscript.optimizer.remove_unused_nodes(irm)
    for q, level in zip(quiet, levels, strict=True):
        q.setLevel(level)
    model = onnx_ir.serde.serialize_model(irm)
    _slim(model)
    _pow_as_mul(model)
    got = [i.name for i in model.graph.input]
    if got != ins:
        raise AssertionError(f"traced graph inputs {got}, expected {ins}")
    return model


def _save(model: onnx.ModelProto, path: Path) -> None:
    model.producer_name, model.producer_version = "pskills_train.export.train_layers", "1"
    tmp = path.with_name(path.name + ".tmp")
    onnx.save_model(model, str(tmp))
    os.replace(tmp, path)


def export_layered(folder: Path, cfg: ModelConfig, spec: LayerSpec, weights: dict[str, Any]) -> list[Path]:
    """Write the bucket's three graphs into `folder`, traced on layer 0's weights (one layer's memory; the
    head is traced on fake tensors, so no [b, s, vocab] tensor is ever allocated)."""
    roles = list(weights["layers"][0])
    _, _, joint = layer_fns(cfg, roles)
    ins, vjp_outs, _ = layer_io(cfg, roles)
    b, s = spec.batch, spec.length
    g = torch.Generator().manual_seed(0)
    w0 = [torch.from_numpy(read_weight(folder, weights["layers"][0][r])) for r in roles]
    factors = [torch.randn(*shape, generator=g) * 0.05 for shape in factor_shapes(cfg, spec.rank)]
    hidden = torch.randn(b, s, cfg.hidden_size, generator=g)
    mask = torch.ones(b, s, dtype=torch.int64)
    pos = torch.arange(s).expand(b, s).contiguous()
    args = [hidden, mask, pos, *w0, *factors]
    written = []
    # One trace of the forward and its VJP together, split three ways: the forward that also returns what
    # the backward keeps (saved.*), the backward from those, and the VJP that recomputes the forward (for
    # the layers a step's memory budget does not keep; docs/distill.md "Layered train step").
    both = _export(joint, [*args, torch.randn(b, s, cfg.hidden_size, generator=g)], [*ins, "grad_out"],
                   ["hidden_out", *vjp_outs], "real")
    forward, backward, kept = split_joint(both, "grad_out", ["hidden_out"])
    vjp = prune(both, vjp_outs)
    for model, file in ((forward, spec.layer_file), (vjp, spec.vjp_file), (backward, spec.bwd_file)):
        _save(model, folder / file)
        written.append(folder / file)
    head_roles = list(weights["head"])
    head_w = [torch.from_numpy(read_weight(folder, weights["head"][r])) for r in head_roles]
    k = spec.top_k
    head_args = [hidden, *head_w, (torch.rand(b, s, generator=g) < 0.5).float(),
                 torch.randint(0, cfg.vocab_size, (b, s, k), generator=g),
                 torch.log_softmax(torch.randn(b, s, k, generator=g), -1)]
    model = _export(head_fn(cfg, spec, head_roles), head_args, head_inputs(head_roles), ["loss", "grad_hidden"], "fake")
    if not _answer_rows_only(model):
        raise AssertionError(f"{spec.head_file}: the head's traced form was not recognised (answer rows only)")
    _save(model, folder / spec.head_file)
    written.append(folder / spec.head_file)
    return written


# ---------------------------------------------------------------------------------------------------
# The reference runner


def _session(path: Path) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


class LayeredRunner:
    """One bucket's step over the three graphs with onnxruntime, as the studio runs it: the weights come
    from bundle.json's spans, not from lm.onnx's graph."""

    def __init__(self, folder: Path, bucket: dict[str, Any], manifest: dict[str, Any],
                 keep: Callable[[int], bool] = lambda i: i % 2 == 0):
        """`keep(i)`: layer i's backward runs layer_bwd on what its forward kept (else layer_vjp, which
        recomputes the forward); the default takes both ways, alternately."""
        self.folder = Path(folder)
        self.keep = keep if "layer_bwd" in bucket else (lambda i: False)
        self.bwd = _session(self.folder / bucket["layer_bwd"]) if "layer_bwd" in bucket else None
        self.entry = manifest["train_step"]
        self.cfg = config_from_manifest(manifest)
        self.lora_layers = list(manifest["lora"]["layers"])
        self.layer, self.vjp, self.head = (_session(self.folder / bucket[k]) for k in ("layer", "layer_vjp", "head"))
        w = self.entry["weights"]
        self.embed = np.memmap(self.folder / w["embed"]["file"], dtype=w["embed"]["dtype"], mode="r",
                               offset=w["embed"]["offset"], shape=tuple(w["embed"]["shape"]))

    def _weights(self, spans: dict[str, dict[str, Any]]) -> dict[str, np.ndarray]:
        return {k: read_weight(self.folder, v) for k, v in spans.items()}

    def step(self, keys: list[tuple[int, str]], inputs: list[Tensor]) -> list[Tensor]:
        """`train_step.torch_step`'s inputs and outputs (io_names order)."""
        cfg, rank = self.cfg, int(self.entry["rank"])
        n_f = 2 * len(keys)
        factors, m, v = inputs[:n_f], inputs[n_f:2 * n_f], inputs[2 * n_f:3 * n_f]
        step, lr, ids, mask, pos, ans, top_ids, top_logp = inputs[3 * n_f:]
        index = {key: j for j, key in enumerate(keys)}
        zeros = [np.zeros(s, np.float32) for s in factor_shapes(cfg, rank)]

        def lora(i: int) -> dict[str, np.ndarray]:
            out = {}
            for j, mod in enumerate(cfg.lora_targets):
                at = index.get((i, mod))
                for t, ab in enumerate("AB"):
                    out[f"lora.{mod}.{ab}"] = zeros[2 * j + t] if at is None else factors[2 * at + t].numpy()
            return out

        data = {"attention_mask": mask.numpy(), "position_ids": pos.numpy()}
        h = np.asarray(self.embed[ids.numpy()], dtype=np.float32)  # [b, s, d]
        kept = []
        saved: dict[int, dict[str, np.ndarray]] = {}
        outs_f = [o.name for o in self.layer.get_outputs()]
        for i, spans in enumerate(self.entry["weights"]["layers"]):
            kept.append(h)
            fetch = outs_f if self.keep(i) else ["hidden_out"]
            got = self.layer.run(fetch, {"hidden": h, **data, **self._weights(spans), **lora(i)})
            h = got[0]
            if self.keep(i):
                saved[i] = dict(zip(fetch[1:], got[1:], strict=True))
        loss, g = self.head.run(["loss", "grad_hidden"], {
            "hidden": h, **self._weights(self.entry["weights"]["head"]), "answer_mask": ans.numpy(),
            "teacher_ids": top_ids.numpy(), "teacher_logp": top_logp.numpy()})
        grads: list[Tensor | None] = [None] * n_f
        outs = ["grad_in", *[f"grad.{mod}.{ab}" for mod in cfg.lora_targets for ab in "AB"]]
        for i in reversed(range(len(kept))):
            feeds = {"hidden": kept[i], **data, **self._weights(self.entry["weights"]["layers"][i]), **lora(i),
                     "grad_out": g}
            if i in saved:
                assert self.bwd is not None
                names = {x.name for x in self.bwd.get_inputs()}
                feeds = {k: v for k, v in {**feeds, **saved.pop(i)}.items() if k in names}
                got = self.bwd.run(outs, feeds)
            else:
                got = self.vjp.run(outs, feeds)
            g = got[0]
            for j, mod in enumerate(cfg.lora_targets):
                at = index.get((i, mod))
                if at is not None:
                    grads[2 * at] = torch.from_numpy(got[1 + 2 * j])
                    grads[2 * at + 1] = torch.from_numpy(got[2 + 2 * j])
        new_p, new_m, new_v = adam_update(list(factors), [t for t in grads if t is not None], list(m), list(v), step,
                                          lr, float(self.entry["max_norm"]))
        return [*new_p, *new_m, *new_v, torch.tensor(loss)]


def lm_from_weights(folder: Path, cfg: ModelConfig, weights: dict[str, Any]) -> LlamaLM:
    """The float32 model `weights` (bundle.json's spans) hold, 4-bit blocks dequantized as the graphs do:
    the model a 4-bit bundle's layered step trains, which load_onnx_lm cannot read."""
    def t(span: dict[str, Any]) -> Tensor:
        return torch.from_numpy(read_weight(folder, span))

    head = {k: t(v) for k, v in weights["head"].items()}
    state = {"model.embed_tokens.weight": t(weights["embed"]).float(), "model.norm.weight": head[HEAD_NORM].float()}
    state["lm_head.weight"] = state["model.embed_tokens.weight"] if cfg.tie_embeddings else \
        stored(head, HEAD_W, cfg.hidden_size).t()
    for i, spans in enumerate(weights["layers"]):
        params = layer_params(cfg, {k: t(s) for k, s in spans.items()})
        state.update({f"model.layers.{i}.{k}": v for k, v in params.items()})
    lm = LlamaLM(cfg)
    lm.load_state_dict({k: v.contiguous() for k, v in state.items()})
    return lm.eval()


def lm_from_lm_onnx(lm_path: Path, cfg: ModelConfig) -> LlamaLM:
    return lm_from_weights(lm_path.parent, cfg, lm_layout(lm_path, cfg))


def next_inputs(inputs: list[Tensor], outputs: list[Tensor], n_f: int) -> list[Tensor]:
    """The inputs of the following step: the updated factors and moments, step + 1, the same batch."""
    return [*outputs[:3 * n_f], inputs[3 * n_f] + 1, *inputs[3 * n_f + 1:]]


@contextmanager
def checkpointed_layers(lm: LlamaLM) -> Iterator[LlamaLM]:
    """`lm` with each decoder layer under activation checkpointing: the same operations (recomputed in
    the backward, deterministic on the CPU), without every layer's activations held at once, so torch's
    reference step on a 0.5 B model stays within what the export may use."""
    layers = list(lm.model.layers)
    for layer in layers:
        layer.forward = partial(torch.utils.checkpoint.checkpoint, type(layer).forward.__get__(layer),
                                use_reentrant=False)
    try:
        yield lm
    finally:
        for layer in layers:
            del layer.forward


def check_layered(folder: Path, lm: LlamaLM, manifest: dict[str, Any], bucket: dict[str, Any], steps: int = 2,
                  seed: int = 1, tol: float = PARITY_TOL) -> tuple[float, float]:
    """`steps` steps of the layered runner against `torch_step` from the same warm Adam state; returns the
    max |Δ| over the factors after the last step and over the losses, and raises past `tol`."""
    cfg = lm.cfg
    keys = lora_keys(cfg, manifest["lora"]["layers"])
    spec = StepSpec(bucket["batch"], bucket["length"], int(manifest["train_step"]["rank"]))
    runner = LayeredRunner(folder, bucket, manifest)
    x_ref = x_got = warm_inputs(cfg, keys, spec, seed)
    x_ref[-3][0, : spec.length // 3] = 0.0  # an answer mask with holes
    x_ref[3 * 2 * len(keys) + 3][-1, :2] = 0  # and a left-padded row
    n_f = 2 * len(keys)
    loss_diff = 0.0
    for _ in range(steps):
        with checkpointed_layers(lm):
            want = torch_step(lm, keys, spec, x_ref)
        got = runner.step(keys, x_got)
        loss_diff = max(loss_diff, abs(float(want[-1]) - float(got[-1])))
        x_ref, x_got = next_inputs(x_ref, want, n_f), next_inputs(x_got, got, n_f)
    diff = max(float((a - b).abs().max()) for a, b in zip(x_ref[:n_f], x_got[:n_f], strict=True))
    if not diff <= tol:
        raise AssertionError(f"{bucket['layer']}: factors after {steps} layered steps differ from torch autograd by "
                             f"{diff:.3g} (tolerance {tol})")
    return diff, loss_diff


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max()) / max(1.0, float(np.abs(b).max()))


def check_graphs(folder: Path, lm: LlamaLM, manifest: dict[str, Any], bucket: dict[str, Any], seed: int = 2) -> float:
    """Each graph of a bucket against torch on the same inputs (layer 0 and the head, answer rows only in
    the torch head too: a [b, s, vocab] reference would cost what the layered step avoids)."""
    cfg, entry = lm.cfg, manifest["train_step"]
    b, s, k = bucket["batch"], bucket["length"], int(entry["top_k"])
    roles = list(entry["weights"]["layers"][0])
    forward, vjp, _ = layer_fns(cfg, roles)
    ins, vjp_outs, _ = layer_io(cfg, roles)
    g = torch.Generator().manual_seed(seed)
    w0 = [torch.from_numpy(read_weight(folder, entry["weights"]["layers"][0][r])) for r in roles]
    factors = [torch.randn(*shape, generator=g) * 0.05 for shape in factor_shapes(cfg, int(entry["rank"]))]
    mask = torch.ones(b, s, dtype=torch.int64)
    mask[-1, :2] = 0
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    args = [torch.randn(b, s, cfg.hidden_size, generator=g), mask, pos, *w0, *factors]
    grad_out = torch.randn(b, s, cfg.hidden_size, generator=g)
    feeds = {n: t.numpy() for n, t in zip(ins, args, strict=True)}
    layer = _session(folder / bucket["layer"])
    fwd = layer.run(None, feeds)
    diff = _rel(fwd[0], forward(*args).detach().numpy())
    want = vjp(*args, grad_out)
    got = _session(folder / bucket["layer_vjp"]).run(vjp_outs, {**feeds, "grad_out": grad_out.numpy()})
    diff = max(diff, *(_rel(a, w.detach().numpy()) for a, w in zip(got, want, strict=True)))
    if "layer_bwd" in bucket:
        bwd = _session(folder / bucket["layer_bwd"])
        every = {**feeds, **{o.name: a for o, a in zip(layer.get_outputs(), fwd, strict=True)},
                 "grad_out": grad_out.numpy()}
        got = bwd.run(vjp_outs, {i.name: every[i.name] for i in bwd.get_inputs()})
        diff = max(diff, *(_rel(a, w.detach().numpy()) for a, w in zip(got, want, strict=True)))
    head_roles = list(entry["weights"]["head"])
    head_w = [torch.from_numpy(read_weight(folder, entry["weights"]["head"][r])) for r in head_roles]
    ans = torch.zeros(b, s)
    ans[0, s // 2:] = 1.0
    ans[-1, -3:] = 1.0
    head_args = [args[0], *head_w, ans, torch.randint(0, cfg.vocab_size, (b, s, k), generator=g),
                 torch.log_softmax(torch.randn(b, s, k, generator=g), -1)]
    loss, grad = _session(folder / bucket["head"]).run(["loss", "grad_hidden"],
                                                       {n: t.numpy() for n, t in zip(head_inputs(head_roles), head_args,
                                                                                     strict=True)})
    rows = ans.reshape(-1) > 0
    spec = StepSpec(b, s, int(entry["rank"]), top_k=k, ce_weight=float(entry["ce_weight"]))
    def pick(t: Tensor) -> Tensor:  # [b, s, …] -> [1, answer rows, …]
        return t.reshape(b * s, *t.shape[2:])[rows][None]

    flat = [pick(head_args[0]), *head_w, *(pick(t) for t in head_args[-3:])]
    want_loss, want_g = head_fn(cfg, spec, head_roles)(*flat)
    full_g = torch.zeros(b * s, cfg.hidden_size)
    full_g[rows] = want_g[0]
    diff = max(diff, _rel(np.asarray(loss), want_loss.numpy()), _rel(grad, full_g.reshape(b, s, -1).numpy()))
    if not diff <= GRAPH_TOL:
        raise AssertionError(f"{bucket['layer']}: a layered graph differs from torch by {diff:.3g} (relative; "
                             f"tolerance {GRAPH_TOL})")
    return diff


# ---------------------------------------------------------------------------------------------------
# The bundle


def layered_entry(specs: list[LayerSpec], cfg: ModelConfig, layers: list[int], weights: dict[str, Any]
                  ) -> dict[str, Any]:
    """bundle.json `train_step` for kind "layered" (docs/bundle-format.md)."""
    whole = train_step_entry(specs, cfg, layers)
    buckets = [{"batch": s.batch, "length": s.length, "layer": s.layer_file, "layer_vjp": s.vjp_file,
                "layer_bwd": s.bwd_file, "head": s.head_file} for s in specs]
    return {"kind": KIND, **{k: v for k, v in whole.items() if k != "buckets"}, "buckets": buckets, "weights": weights}


def add_layered_files(folder: Path, lm: LlamaLM | None, buckets: list[tuple[int, int]],
                      tol: float = PARITY_TOL) -> dict[str, Any]:
    """Export the layered graphs per bucket into a bundle folder being assembled (lm.onnx and bundle.json
    written), check them against torch (two full steps on the smallest bucket, each graph on the others)
    and return the new manifest (the caller writes it). Records the checks in `train_step.parity`."""
    manifest = json.loads((folder / MANIFEST).read_text())
    for old in step_graph_files(manifest):
        (folder / old).unlink(missing_ok=True)
    files = {k: v for k, v in manifest["files"].items() if not k.startswith(STEP_PREFIXES)}
    cfg = config_from_manifest(manifest)
    layers = manifest["lora"]["layers"]
    weights = lm_layout(folder / manifest["io"]["lm"]["file"], cfg)
    specs = [LayerSpec(b, s, step_rank(manifest)) for b, s in buckets]
    for spec in specs:
        export_layered(folder, cfg, spec, weights)
    new = {**manifest, "train_step": layered_entry(specs, cfg, layers, weights)}
    for b in new["train_step"]["buckets"]:  # what layer_bwd's way keeps per layer, for the memory budget
        b["saved_bytes"] = saved_bytes(onnx.load(str(folder / b["layer"])))
    lm = lm if lm is not None else lm_from_weights(folder, cfg, weights)  # load_onnx_lm reads no q|k|v bias
    first, *rest = new["train_step"]["buckets"]
    factors, losses = check_layered(folder, lm, new, first, tol=tol)
    graphs = max([check_graphs(folder, lm, new, b) for b in rest], default=0.0)
    new["train_step"]["parity"] = {"bucket": [first["batch"], first["length"]], "steps": 2,
                                   "factors_max_abs": factors, "loss_max_abs": losses, "graphs_max_rel": graphs}
    table = file_table(folder)
    files.update({f: table[f] for s in specs for f in s.files})
    return {**new, "files": files}


def add_layered(bundle: str | os.PathLike, buckets: list[tuple[int, int]] | None = None,
                lm: LlamaLM | None = None) -> dict[str, Any]:
    """Add or replace an existing bundle's train-step graphs with layered ones, assembled in a copy and
    renamed into place; every other file keeps its bytes."""
    bundle = Path(bundle)
    with staged_folder(bundle, force=True) as tmp:
        for p in bundle.iterdir():
            if p.is_file() and not p.name.startswith(STEP_PREFIXES):
                shutil.copyfile(p, tmp / p.name)
        new = add_layered_files(tmp, lm, buckets or list(LAYERED_BUCKETS))
        (tmp / MANIFEST).write_text(json.dumps(new, indent=2) + "\n")
    return new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.train_layers", description=__doc__.split("\n")[0])
    ap.add_argument("bundle", type=Path, help="bundle folder (changed in place)")
    ap.add_argument("--buckets", default=",".join(f"{b}x{s}" for b, s in LAYERED_BUCKETS),
                    help="static shapes, BATCHxLENGTH,… (default %(default)s)")
    a = ap.parse_args(argv)
    new = add_layered(a.bundle, parse_buckets(a.buckets))
    files = [f for f in step_graph_files(new)]
    added = sum(new["files"][f]["bytes"] for f in files)
    rest = sum(v["bytes"] for k, v in new["files"].items() if k not in files)
    p = new["train_step"]["parity"]
    print(f"{a.bundle}: layered train step, {len(files)} graphs, {added / 1e6:.3f} MB (+{100 * added / rest:.2f} % "
          f"of the bundle); factors after 2 steps within {p['factors_max_abs']:.2g} of torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())

