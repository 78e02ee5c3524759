"""train_step.onnx: one distillation step as an inference graph (docs/bundle-format.md "train_step").

onnxruntime-node runs inference only, so the studio distils with a graph that is itself the update:
forward of the frozen base + LoRA, the distillation loss, backward to the LoRA factors, and Adam. The
loss and optimizer are exactly `model.distill_objective.distill_loss` and `adam_update`, so the Python
distiller and the studio compute the same step.

Inputs   lora.{i}.{module}.A [d_in, r]   lora.{i}.{module}.B [r, d_out]     (scale folded, ΔW = A·B)
         m.{i}.{module}.A|B, v.{i}.{module}.A|B                               (Adam moments, same shapes)
         step [] float (1-based)   lr [] float
         input_ids, attention_mask, position_ids [b, s] int64   answer_mask [b, s] float
         teacher_ids [b, s, k] int64   teacher_logp [b, s, k] float           (aligned to student positions)
Outputs  new_lora.*, new_m.*, new_v.* (same shapes)   loss [] float (the loss before the update)

Route: `make_fx` traces `torch.func.grad_and_value` of the loss with static shapes, then
`torch.onnx.export(dynamo=True)` writes the traced GraphModule. The base weights enter the traced function
as inputs in lm.onnx's own layout (the fused q|k|v product, projections stored as Wᵀ), and after export
those inputs become initializers whose data is ONNX external data pointing at lm.onnx's bytes
(export/shared_weights.py), so the graph stores no copy of the model. Shapes are static, so a bundle has
one graph per (batch, length) bucket.

    python -m pskills_train.export.train_step BUNDLE [--buckets 8x64,8x128,8x256|fine]

adds (or replaces) the graphs in an existing bundle, in place (`fine`: FINE_BUCKETS, the default bundle's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import onnx
import onnx_ir
import onnxruntime as ort
import onnxscript.optimizer
import torch
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import ExternalDataInfo, set_external_data, uses_external_data
from torch import Tensor, nn
from torch.fx.experimental.proxy_tensor import make_fx

from ..distill_recipe import recipe_default
from ..model.config import ModelConfig
from ..model.distill_objective import BETA1, BETA2, EPS, adam_update, distill_loss
from ..model.from_onnx import PROJ, load_onnx_lm
from ..model.llama import LlamaLM
from .manifest import MANIFEST, file_table
from .onnx_structure import read_structure
from .shared_weights import MIN_SHARED_BYTES, Span, read_span
from .staging import staged_folder

DEFAULT_BUCKETS = ((8, 64), (8, 128), (8, 256))
# The default bundle's: practice rows (a question and an answer of at most the recipe's max_answer tokens)
# run 30–95 tokens and each step runs in the smallest bucket its batch fits, so fine steps keep the padding
# every step pays small. A graph of that 5 M base costs 0.25 MB and a minute to export; other checkpoints
# keep the default.
FINE_BUCKETS = ((8, 32), (8, 40), (8, 48), (8, 56), (8, 64), (8, 80), (8, 96), (8, 128), (8, 256))
OPSET = 18
PARITY_TOL = 1e-4  # max |Δ| of the updated factors, graph against torch autograd (fp32)
STEP_PREFIXES = ("train_step", "train_layer", "train_head")  # the graph files of either kind (and train_step.data)
DATA_INPUTS = ["step", "lr", "input_ids", "attention_mask", "position_ids", "answer_mask", "teacher_ids",
               "teacher_logp"]


@dataclass(frozen=True)
class StepSpec:
    batch: int
    length: int
    rank: int
    # baked into the graph, from the distil recipe (distill_recipe.py)
    top_k: int = field(default_factory=lambda: recipe_default("top_k"))
    ce_weight: float = field(default_factory=lambda: recipe_default("ce_weight"))
    max_norm: float = field(default_factory=lambda: recipe_default("max_norm"))

    @property
    def file(self) -> str:
        return f"train_step-{self.batch}x{self.length}.onnx"


def step_graph_files(manifest: dict[str, Any]) -> list[str]:
    """Every train-step graph a manifest lists, whole (`file`) or layered (export/train_layers.py)."""
    out = []
    for b in manifest.get("train_step", {}).get("buckets", []):
        out += [b[k] for k in ("file", "layer", "layer_vjp", "layer_bwd", "head") if k in b]
    return out


def lora_keys(cfg: ModelConfig, layers: list[int]) -> list[tuple[int, str]]:
    return [(i, m) for i in layers for m in cfg.lora_targets]


def factor_names(prefix: str, keys: list[tuple[int, str]]) -> list[str]:
    return [f"{prefix}.{i}.{m}.{ab}" for i, m in keys for ab in "AB"]


def io_names(cfg: ModelConfig, layers: list[int]) -> tuple[list[str], list[str]]:
    keys = lora_keys(cfg, layers)
    ins = [*factor_names("lora", keys), *factor_names("m", keys), *factor_names("v", keys), *DATA_INPUTS]
    outs = [*factor_names("new_lora", keys), *factor_names("new_m", keys), *factor_names("new_v", keys), "loss"]
    return ins, outs


# ---------------------------------------------------------------------------------------------------
# lm.onnx's weights, in its own layout, and how they become LlamaLM's parameters


@dataclass(frozen=True)
class BaseWeight:
    """One lm.onnx initializer the step reads: its name there, and which LlamaLM parameters it gives
    (param name, how): "id" = as stored, "T" = transposed, ("rows", a, b) = transposed, then rows a:b."""

    name: str
    array: np.ndarray
    uses: tuple[tuple[str, Any], ...]


def base_weights(lm_path: Path, cfg: ModelConfig) -> list[BaseWeight]:
    """The lm.onnx initializers that hold LlamaLM's parameters, mapped as model/from_onnx.py reads them:
    named `lm.*` tensors (directly, behind an Identity alias, or float16 behind a Cast), then the
    projections in graph order (per layer the fused q|k|v, o, gate, up, down; then an untied head)."""
    graph = onnx.load(str(lm_path)).graph
    inits = {t.name: t for t in graph.initializer}
    # value name -> the initializer it reads: Identity aliases (merged equal norms) and float16 Casts
    source = {n.output[0]: n.input[0] for n in graph.node
              if n.op_type in ("Identity", "Cast") and n.input[0] in inits}
    out: dict[str, list[tuple[str, Any]]] = {}
    for name in [*inits, *source]:
        if name.startswith("lm.") and not name.endswith(".fp16"):
            out.setdefault(source.get(name, name), []).append((name.removeprefix("lm."), "id"))
    seen: list[str] = []
    for node in graph.node:
        if node.op_type in ("MatMul", "Gemm") and len(node.input) > 1:
            w = node.input[1]
            if (w in inits or w in source) and not w.startswith("lm.") and w not in seen:
                seen.append(w)
    per_layer = len(PROJ) - 2  # exported graphs fuse q|k|v (onnx_lm.fused_projections)
    want = cfg.num_layers * per_layer + (0 if cfg.tie_embeddings else 1)
    if len(seen) not in (want, want + 1):  # a tied head may appear as one transposed copy at the end
        raise ValueError(f"{lm_path}: {len(seen)} projection weights, expected {want} for {cfg.num_layers} layers "
                         "with q|k|v fused (a format 1 lm.onnx: re-export it first, export/reexport.py)")
    q, kv = cfg.num_heads * cfg.head_dim, cfg.num_kv_heads * cfg.head_dim
    for i in range(cfg.num_layers):
        names = [source.get(w, w) for w in seen[i * per_layer:(i + 1) * per_layer]]
        out.setdefault(names[0], []).extend([(f"model.layers.{i}.{PROJ[0]}.weight", ("rows", 0, q)),
                                             (f"model.layers.{i}.{PROJ[1]}.weight", ("rows", q, q + kv)),
                                             (f"model.layers.{i}.{PROJ[2]}.weight", ("rows", q + kv, q + 2 * kv))])
        for proj, w in zip(PROJ[3:], names[1:], strict=True):
            out.setdefault(w, []).append((f"model.layers.{i}.{proj}.weight", "T"))
    if not cfg.tie_embeddings:
        out.setdefault(source.get(seen[want - 1], seen[want - 1]), []).append(("lm_head.weight", "T"))
    return [BaseWeight(n, numpy_helper.to_array(inits[n]), tuple(uses)) for n, uses in out.items()]


def params_from(weights: list[BaseWeight], tensors: list[Tensor], cfg: ModelConfig) -> dict[str, Tensor]:
    params: dict[str, Tensor] = {}
    for w, t in zip(weights, tensors, strict=True):
        t = t.float()
        for pname, how in w.uses:
            if how == "id":
                params[pname] = t
            elif how == "T":
                params[pname] = t.t()  # stored [d_in, d_out] -> nn.Linear's [d_out, d_in]
            else:
                params[pname] = t.t()[how[1]:how[2]]
    return params  # a tied head: functional_call ties lm_head.weight to the embedding it is given


# ---------------------------------------------------------------------------------------------------
# The step


def make_step(lm: LlamaLM, weights: list[BaseWeight], keys: list[tuple[int, str]], spec: StepSpec):
    """The flat function traced: (base weights, factors, m, v, step, lr, rows, teacher) -> (new factors,
    new m, new v, loss)."""
    cfg, n_w, n_f = lm.cfg, len(weights), 2 * len(keys)
    buffers = dict(lm.named_buffers())

    def loss_fn(factors: list[Tensor], params: dict[str, Tensor], ids, mask, pos, ans, top_ids, top_logp):
        lora = {key: (factors[2 * j], factors[2 * j + 1]) for j, key in enumerate(keys)}  # [d_in, r], [r, d_out]
        logits = torch.func.functional_call(lm, {**params, **buffers}, (ids, mask, pos, None, lora))[0]
        return distill_loss(logits, top_ids, top_logp, ans, spec.ce_weight)

    def step_fn(*args: Tensor):
        base, rest = list(args[:n_w]), args[n_w:]
        factors, m, v = list(rest[:n_f]), list(rest[n_f:2 * n_f]), list(rest[2 * n_f:3 * n_f])
        step, lr, ids, mask, pos, ans, top_ids, top_logp = rest[3 * n_f:]
        params = params_from(weights, base, cfg)
        grads, loss = torch.func.grad_and_value(loss_fn)(factors, params, ids, mask, pos, ans, top_ids, top_logp)
        new_p, new_m, new_v = adam_update(factors, grads, m, v, step, lr, spec.max_norm)
        return (*new_p, *new_m, *new_v, loss)

    return step_fn


def example_inputs(cfg: ModelConfig, keys: list[tuple[int, str]], spec: StepSpec, seed: int = 0) -> list[Tensor]:
    """Random factors (B nonzero, so every gradient flows), zero moments, step 1, and a random batch."""
    g = torch.Generator().manual_seed(seed)
    factors = []
    for _, m in keys:
        d_in, d_out = cfg.lora_dims(m)
        factors += [torch.randn(d_in, spec.rank, generator=g) * 0.05, torch.randn(spec.rank, d_out, generator=g) * 0.05]
    zeros = [torch.zeros_like(t) for t in factors]
    b, s, k = spec.batch, spec.length, spec.top_k
    ids = torch.randint(4, cfg.vocab_size, (b, s), generator=g)  # [b, s]
    mask = torch.ones(b, s, dtype=torch.int64)  # [b, s]
    pos = torch.arange(s).expand(b, s).contiguous()  # [b, s]
    ans = (torch.rand(b, s, generator=g) < 0.5).float()  # [b, s]
    top_ids = torch.randint(0, cfg.vocab_size, (b, s, k), generator=g)  # [b, s, k]
    top_logp = torch.log_softmax(torch.randn(b, s, k, generator=g), -1)  # [b, s, k]
    return [*factors, *zeros, *[z.clone() for z in zeros], torch.tensor(1.0), torch.tensor(1e-3),
            ids, mask, pos, ans, top_ids, top_logp]


def warm_inputs(cfg: ModelConfig, keys: list[tuple[int, str]], spec: StepSpec, seed: int = 0) -> list[Tensor]:
    """`example_inputs` at step 3 with moments as a few steps leave them. On step 1 Adam moves every
    factor by about lr·sign(g), so a gradient within float noise of 0 can flip a whole step: warm second
    moments make the comparison one of the gradients, not of their signs."""
    x = example_inputs(cfg, keys, spec, seed)
    n_f = 2 * len(keys)
    g = torch.Generator().manual_seed(seed + 1)
    for j in range(n_f):
        x[n_f + j] = torch.randn(x[j].shape, generator=g) * 1e-3  # m
        x[2 * n_f + j] = x[n_f + j] ** 2 + 1e-6  # v
    x[3 * n_f] = torch.tensor(3.0)
    return x


def torch_step(lm: LlamaLM, keys: list[tuple[int, str]], spec: StepSpec, inputs: list[Tensor]) -> list[Tensor]:
    """The same step with eager torch autograd on `lm`'s parameters (the reference the tests compare to)."""
    n_f = 2 * len(keys)
    factors = [t.clone().requires_grad_(True) for t in inputs[:n_f]]
    m, v = inputs[n_f:2 * n_f], inputs[2 * n_f:3 * n_f]
    step, lr, ids, mask, pos, ans, top_ids, top_logp = inputs[3 * n_f:]
    lora = {key: (factors[2 * j], factors[2 * j + 1]) for j, key in enumerate(keys)}
    # The head on the answer rows only (the loss is a mean over them; the other rows weigh 0): a large
    # vocabulary's [b, s, V] logits and their gradient were the reference's largest tensors.
    head = lm.lm_head
    lm.lm_head = cast(nn.Linear, nn.Identity())  # the model's output is then the last hidden state
    try:
        h = lm(ids, mask, pos, None, lora)[0]  # [b, s, d], the final norm applied
    finally:
        lm.lm_head = head
    rows = ans.reshape(-1) > 0
    logits = head(h.reshape(-1, h.shape[-1])[rows])[None]  # [1, answer rows, V]
    k = top_ids.shape[-1]
    loss = distill_loss(logits, top_ids.reshape(-1, k)[rows][None], top_logp.reshape(-1, k)[rows][None],
                        ans.reshape(-1)[rows][None], spec.ce_weight)
    grads = list(torch.autograd.grad(loss, factors))
    with torch.no_grad():
        new_p, new_m, new_v = adam_update([f.detach() for f in factors], grads, m, v, step, lr, spec.max_norm)
    return [*new_p, *new_m, *new_v, loss.detach()]


def _lm_spans(lm_path: Path, names: set[str]) -> dict[str, Span]:
    """Where lm.onnx (or its .data file) holds each named initializer's bytes (read without loading them)."""
    model, inline = read_structure(lm_path)
    spans: dict[str, Span] = {}
    for t in model.graph.initializer:
        if t.name not in names:
            continue
        if uses_external_data(t):
            info = ExternalDataInfo(t)
            spans[t.name] = Span(info.location, info.offset or 0, info.length or 0)
        elif t.name in inline:
            spans[t.name] = Span(lm_path.name, *inline[t.name])
    return spans


def _weights_as_initializers(model: onnx.ModelProto, weights: list[BaseWeight], input_names: list[str],
                             lm_path: Path) -> None:
    """The base-weight inputs become initializers: external data in lm.onnx when 1 KiB or more."""
    spans = _lm_spans(lm_path, {w.name for w in weights})
    graph = model.graph
    by_input = dict(zip(input_names, weights, strict=True))
    kept = [v for v in graph.input if v.name not in by_input]
    used = {v.name for v in graph.input}
    del graph.input[:]
    graph.input.extend(kept)
    for name, w in by_input.items():
        if name not in used:  # the exporter dropped an input nothing reads
            continue
        t = numpy_helper.from_array(np.ascontiguousarray(w.array), name)
        span = spans.get(w.name)
        if span is not None and span.length >= MIN_SHARED_BYTES:
            if read_span(lm_path.parent, span) != t.raw_data:
                raise AssertionError(f"{span.location}[{span.offset}:+{span.length}] does not hold {w.name}'s bytes")
            set_external_data(t, span.location, offset=span.offset, length=span.length)
            t.data_location = TensorProto.EXTERNAL
            t.ClearField("raw_data")
        graph.initializer.append(t)


def _slim(model: onnx.ModelProto) -> None:
    """Drop the exporter's per-node provenance (most of the file) and store a large constant whose values
    are all equal (the ones and zeros autograd fills, sized [b, s, f]) as Expand(scalar, shape)."""
    graph = model.graph
    for n in graph.node:
        n.ClearField("metadata_props")
        n.doc_string = ""
    del graph.value_info[:]
    nodes = []
    for t in list(graph.initializer):
        if uses_external_data(t) or len(t.raw_data) < MIN_SHARED_BYTES:
            continue
        a = numpy_helper.to_array(t)
        if a.size == 0 or not np.all(a == a.flat[0]):
            continue
        graph.initializer.remove(t)
        scalar = numpy_helper.from_array(np.array(a.flat[0], a.dtype), f"{t.name}/value")
        shape = numpy_helper.from_array(np.array(a.shape, np.int64), f"{t.name}/shape")
        graph.initializer.extend([scalar, shape])
        nodes.append(helper.make_node("Expand", [scalar.name, shape.name], [t.name], name=f"{t.name}/expand"))
    if nodes:
        rest = list(graph.node)
        del graph.node[:]
        graph.node.extend([*nodes, *rest])


def export_train_step(lm: LlamaLM, bundle: Path, spec: StepSpec, layers: list[int], lm_file: str = "lm.onnx") -> Path:
    """Write `spec.file` into `bundle` (beside lm.onnx, whose weights it reads)."""

    cfg = lm.cfg
    keys = lora_keys(cfg, layers)
    weights = base_weights(bundle / lm_file, cfg)
    w_names = [f"base.{j}" for j in range(len(weights))]
    ins, outs = io_names(cfg, layers)
    step_fn = make_step(lm, weights, keys, spec)
    args = [torch.from_numpy(np.array(w.array)) for w in weights] + example_inputs(cfg, keys, spec)
    frozen = [p for p in lm.parameters() if p.requires_grad]
    for p in frozen:  # only the factors are differentiated; the base's own tensors are constants
        p.requires_grad_(False)
    try:
        gm = make_fx(step_fn)(*args)
    finally:
        for p in frozen:
            p.requires_grad_(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(gm, tuple(args), dynamo=True, input_names=[*w_names, *ins], output_names=outs,
                                 opset_version=OPSET, optimize=False, verbose=False)
    assert prog is not None
    # Constant folding only: the exporter's full optimizer (optimize=True) drops Adam's `sqrt(v̂) + 1e-8` as
    # an add of zero, which turns a zero gradient (B = 0 at zero init) into 0/0 = NaN.
    irm = prog.model
    onnxscript.optimizer.fold_constants(irm)
    onnxscript.optimizer.remove_unused_nodes(irm)
    model = onnx_ir.serde.serialize_model(irm)
    _weights_as_initializers(model, weights, w_names, bundle / lm_file)
    _slim(model)
    _pow_as_mul(model)
    _answer_rows_only(model)
    model.producer_name, model.producer_version = "pskills_train.export.train_step", "1"
    path = bundle / spec.file
    tmp_path = path.with_name(path.name + ".tmp")
    onnx.save_model(model, str(tmp_path))
    os.replace(tmp_path, path)
    return path


def train_step_entry(specs: Sequence[StepSpec], cfg: ModelConfig, layers: list[int]) -> dict[str, Any]:
    """bundle.json `train_step` (docs/bundle-format.md)."""
    ins, outs = io_names(cfg, layers)
    first = specs[0]
    return {"rank": first.rank, "top_k": first.top_k, "ce_weight": first.ce_weight, "max_norm": first.max_norm,
            "adam": {"beta1": BETA1, "beta2": BETA2, "eps": EPS},
            "inputs": ["lora.{i}.{module}.A", "lora.{i}.{module}.B", "m.{i}.{module}.A", "m.{i}.{module}.B",
                       "v.{i}.{module}.A", "v.{i}.{module}.B", *DATA_INPUTS],
            "outputs": ["new_lora.{i}.{module}.A", "new_lora.{i}.{module}.B", "new_m.{i}.{module}.A",
                        "new_m.{i}.{module}.B", "new_v.{i}.{module}.A", "new_v.{i}.{module}.B", "loss"],
            "buckets": [{"batch": s.batch, "length": s.length, "file": s.file} for s in specs]}


# A train-step graph is exported at its static shape: larger buckets cost memory at build time for no use
# (the teacher's rows are shorter than the model's context, and a step's rows are few).
MAX_BUCKET_BATCH, MAX_BUCKET_LENGTH = 64, 8192


def parse_buckets(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        b, _, s = part.strip().partition("x")
        if not (b.isdigit() and s.isdigit()) or int(b) < 1 or int(s) < 2:
            raise ValueError(f"bucket {part!r}: expected BATCHxLENGTH, e.g. 8x128")
        if int(b) > MAX_BUCKET_BATCH or int(s) > MAX_BUCKET_LENGTH:
            raise ValueError(f"bucket {part!r}: at most {MAX_BUCKET_BATCH} rows of {MAX_BUCKET_LENGTH} tokens")
        out.append((int(b), int(s)))
    return sorted(set(out), key=lambda t: (t[1], t[0]))


def _pow_as_mul(model: onnx.ModelProto) -> int:
    """Pow by a constant 1, 2 or 3 (RMSNorm's x² and its derivatives) as Identity or products: onnxruntime's
    CPU Pow calls pow() per element, which cost ~7 % of a step's CPU time in onnxruntime-node. Returns how
    many nodes were rewritten."""
    graph = model.graph
    scalars: dict[str, float] = {}
    for n in graph.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            t = n.attribute[0].t
            if len(t.dims) == 0 and t.data_type == TensorProto.FLOAT:
                scalars[n.output[0]] = float(numpy_helper.to_array(t))
    for t in graph.initializer:
        if len(t.dims) == 0 and t.data_type == TensorProto.FLOAT and not uses_external_data(t):
            scalars[t.name] = float(numpy_helper.to_array(t))
    nodes, done = [], 0
    for n in graph.node:
        e = scalars.get(n.input[1]) if n.op_type == "Pow" else None
        x, y = (n.input[0], n.output[0]) if e is not None else ("", "")
        if e == 1.0:
            nodes.append(helper.make_node("Identity", [x], [y], name=n.name))
        elif e == 2.0:
            nodes.append(helper.make_node("Mul", [x, x], [y], name=n.name))
        elif e == 3.0:
            nodes.append(helper.make_node("Mul", [x, x], [f"{y}/sq"], name=f"{n.name}/sq"))
            nodes.append(helper.make_node("Mul", [f"{y}/sq", x], [y], name=n.name))
        else:
            nodes.append(n)
            continue
        done += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return done


def _answer_rows_only(model: onnx.ModelProto) -> bool:
    """The LM head, its log-softmax and their backward on the rows with an answer token only. The loss
    multiplies every other row by answer_mask = 0, so their logits and gradient add nothing, yet the head
    (vocabulary-wide, both ways) was a third of a step. Rows are picked in the graph (NonZero of the mask),
    so the inputs and outputs stay as they were; the traced head is found by its shape and removed."""
    graph = model.graph
    prod = {o: n for n in graph.node for o in n.output}
    cons: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)

    def one(t: str, op: str) -> onnx.NodeProto:
        (n,) = [c for c in cons.get(t, []) if c.op_type == op]
        return n

    # forward: MatMul (head) -> Reshape -> LogSoftmax -> GatherElements(teacher_ids)
    # backward: Sub(ScatterElements(g at teacher_ids), Mul(Exp(log-softmax), Σ)) -> Reshape -> MatMul
    # A graph traced otherwise (another family's head) is left as it is.
    try:
        (gather,) = [n for n in graph.node if n.op_type == "GatherElements" and n.input[1] == "teacher_ids"]
        (scatter,) = [n for n in graph.node if n.op_type == "ScatterElements" and n.input[1] == "teacher_ids"]
        logsm = prod[gather.input[0]]
        view = prod[logsm.input[0]]
        head = prod[view.input[0]]
        sub = one(one(one(logsm.output[0], "Exp").output[0], "Mul").output[0], "Sub")
        back = one(one(sub.output[0], "Reshape").output[0], "MatMul")
    except (KeyError, ValueError):
        return False
    if (logsm.op_type, view.op_type, head.op_type) != ("LogSoftmax", "Reshape", "MatMul") or (
        sub.input[0] != scatter.output[0]
    ):
        return False
    hidden = head.input[0]  # [b·s, h], rows in answer_mask's order
    k = next(i for i in graph.input if i.name == "teacher_ids").type.tensor_type.shape.dim[2].dim_value
    p = "answer_rows/"
    graph.initializer.extend([
        numpy_helper.from_array(np.array([-1], np.int64), p + "flat"),
        numpy_helper.from_array(np.array([-1, k], np.int64), p + "flat_k"),
        numpy_helper.from_array(np.array([-1, 1], np.int64), p + "col"),
    ])
    zero = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.0])

    def node(op: str, ins: list[str], out: str, **attrs: Any) -> onnx.NodeProto:
        return helper.make_node(op, ins, [p + out], name=p + out, **attrs)

    def f(name: str) -> str:
        return p + name

    forward = [
        node("Reshape", ["answer_mask", f("flat")], "mask"),
        node("NonZero", [f("mask")], "nz"),
        node("Reshape", [f("nz"), f("flat")], "idx"),  # [n]
        node("Reshape", [f("nz"), f("col")], "idx2"),  # [n, 1]
        node("Gather", [hidden, f("idx")], "h", axis=0),
        node("MatMul", [f("h"), head.input[1]], "logits"),
        node("LogSoftmax", [f("logits")], "logq", axis=-1),
        node("Reshape", ["teacher_ids", f("flat_k")], "tid_all"),
        node("Gather", [f("tid_all"), f("idx")], "tid", axis=0),
        node("GatherElements", [f("logq"), f("tid")], "lq", axis=-1),
        node("Shape", [f("tid_all")], "shape_k"),
        node("ConstantOfShape", [f("shape_k")], "zeros_k", value=zero),
        node("ScatterND", [f("zeros_k"), f("idx2"), f("lq")], "lq_all"),
        node("Shape", ["teacher_ids"], "shape_bsk"),
        node("Reshape", [f("lq_all"), f("shape_bsk")], "gather"),
    ]
    backward = [
        node("Reshape", [scatter.input[2], f("flat_k")], "g_all"),
        node("Gather", [f("g_all"), f("idx")], "g", axis=0),
        node("Shape", [f("logits")], "shape_nv"),
        node("ConstantOfShape", [f("shape_nv")], "zeros_v", value=zero),
        node("ScatterElements", [f("zeros_v"), f("tid"), f("g")], "sa", axis=-1, reduction="add"),
        node("ReduceSum", [f("sa"), f("flat")], "sa_sum", keepdims=1),
        node("Exp", [f("logq")], "q"),
        node("Mul", [f("q"), f("sa_sum")], "q_sum"),
        node("Sub", [f("sa"), f("q_sum")], "dlogits"),
        node("MatMul", [f("dlogits"), back.input[1]], "dh"),
        node("Shape", [hidden], "shape_h"),
        node("ConstantOfShape", [f("shape_h")], "zeros_h", value=zero),
        node("ScatterND", [f("zeros_h"), f("idx2"), f("dh")], "dh_all"),
    ]
    rename = {gather.output[0]: f("gather"), back.output[0]: f("dh_all")}
    for n in graph.node:
        for j, i in enumerate(n.input):
            n.input[j] = rename.get(i, i)
    # Each part before the first node that reads it (the order stays topological), then drop what nothing
    # reads any more.
    nodes = list(graph.node)
    for part, out in ((forward, f("gather")), (backward, f("dh_all"))):
        at = next(j for j, n in enumerate(nodes) if out in n.input)
        nodes[at:at] = part
    needed = {o.name for o in graph.output}
    keep = []
    for n in reversed(nodes):
        if any(o in needed for o in n.output):
            keep.append(n)
            needed.update(n.input)
    del graph.node[:]
    graph.node.extend(reversed(keep))
    for t in [t for t in graph.initializer if t.name not in needed]:
        graph.initializer.remove(t)
    return True


def step_rank(manifest: dict[str, Any]) -> int:
    """The factors' rank: the hypernetwork's (lora.default_rank), 8 when a bundle has none."""
    return int(manifest["lora"].get("default_rank") or 8)


def check_train_step(folder: Path, lm: LlamaLM, spec: StepSpec, layers: list[int], seed: int = 1) -> float:
    """One step of the graph in onnxruntime against `torch_step` on warm Adam moments; returns the max
    |Δ| over the updated factors and raises past PARITY_TOL."""

    cfg = lm.cfg
    keys = lora_keys(cfg, layers)
    ins, outs = io_names(cfg, layers)
    x = warm_inputs(cfg, keys, spec, seed)
    want = torch_step(lm, keys, spec, x)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(folder / spec.file), opts, providers=["CPUExecutionProvider"])
    got = sess.run(outs, {n: t.numpy() for n, t in zip(ins, x, strict=True)})
    n_f = 2 * len(keys)
    diff = max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got[:n_f], want[:n_f], strict=True))
    if not diff <= PARITY_TOL:
        raise AssertionError(f"{spec.file}: updated factors differ from torch autograd by {diff:.3g} "
                             f"(tolerance {PARITY_TOL})")
    return diff


def add_train_step_files(folder: Path, lm: LlamaLM, buckets: list[tuple[int, int]]) -> dict[str, Any]:
    """Export one graph per bucket into a bundle folder being assembled (lm.onnx and bundle.json written),
    check each against torch, and return the new manifest (the caller writes it)."""
    manifest = json.loads((folder / MANIFEST).read_text())
    for old in step_graph_files(manifest):
        (folder / old).unlink(missing_ok=True)
    files = {k: v for k, v in manifest["files"].items() if not k.startswith(STEP_PREFIXES)}
    layers = manifest["lora"]["layers"]
    specs = [StepSpec(b, s, step_rank(manifest)) for b, s in buckets]
    for spec in specs:
        export_train_step(lm, folder, spec, layers, manifest["io"]["lm"]["file"])
        check_train_step(folder, lm, spec, layers)
    table = file_table(folder)
    files.update({s.file: table[s.file] for s in specs})
    return {**manifest, "files": files, "train_step": train_step_entry(specs, lm.cfg, layers)}


def add_train_step(bundle: str | os.PathLike, buckets: list[tuple[int, int]] | None = None,
                   lm: LlamaLM | None = None) -> dict[str, Any]:
    """Add or replace the train-step graphs of an existing bundle, assembled in a copy and renamed into
    place; every other file keeps its bytes."""

    bundle = Path(bundle)
    lm = lm if lm is not None else load_onnx_lm(bundle)
    with staged_folder(bundle, force=True) as tmp:
        for p in bundle.iterdir():
            if p.is_file() and not p.name.startswith(STEP_PREFIXES):
                shutil.copyfile(p, tmp / p.name)
        new = add_train_step_files(tmp, lm, buckets or list(DEFAULT_BUCKETS))
        (tmp / MANIFEST).write_text(json.dumps(new, indent=2) + "\n")
    return new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.train_step", description=__doc__.split("\n")[0])
    ap.add_argument("bundle", type=Path, help="bundle folder (changed in place)")
    fine = ",".join(f"{b}x{s}" for b, s in FINE_BUCKETS)
    ap.add_argument("--buckets", default=",".join(f"{b}x{s}" for b, s in DEFAULT_BUCKETS),
                    help=f"static shapes, BATCHxLENGTH,…, or fine ({fine}; default %(default)s)")
    a = ap.parse_args(argv)
    before = sum(p.stat().st_size for p in a.bundle.iterdir() if p.is_file() and not p.name.startswith(STEP_PREFIXES))
    new = add_train_step(a.bundle, list(FINE_BUCKETS) if a.buckets == "fine" else parse_buckets(a.buckets))
    added = sum(new["files"][b["file"]]["bytes"] for b in new["train_step"]["buckets"])
    print(f"{a.bundle}: {len(new['train_step']['buckets'])} train-step graphs, {added / 1e6:.3f} MB "
          f"(+{100 * added / before:.2f} % of the bundle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
