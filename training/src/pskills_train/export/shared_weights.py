"""Weights encoder.onnx shares with lm.onnx: its large initializers become ONNX external data that
points at the bytes lm.onnx (or lm.onnx.data) already holds (docs/bundle-format.md "encoder.onnx").

encoder.onnx is lm.onnx's first k layers, so its embeddings and layer weights are byte-for-byte copies
of tensors lm.onnx stores contiguously: as raw_data inside the protobuf (a graph under 2 GB) or as
ranges of `lm.onnx.data`. Each encoder initializer of MIN_SHARED_BYTES or more whose bytes lm.onnx
holds gets `data_location EXTERNAL, location, offset, length` for that range (read back and compared
before it is used); onnxruntime reads external data at any offset, so no alignment is needed.

    python -m pskills_train.export.shared_weights BUNDLE

rewrites an existing bundle's encoder.onnx this way in place (same graph, states equal to the old
file's bit for bit, checked) and its bundle.json files entry; lm.onnx is not touched.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto
from onnx.external_data_helper import ExternalDataInfo, set_external_data, uses_external_data

from .manifest import MANIFEST, file_table

# Smaller tensors (norm scales, biases, shape constants) stay inline: a few bytes each is not worth a
# reference, and 1 KiB is the threshold onnx.save_model uses for external data too.
MIN_SHARED_BYTES = 1024


@dataclass(frozen=True)
class Span:
    """`length` bytes at `offset` of `location` (a file name beside the graph)."""

    location: str
    offset: int
    length: int


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def read_span(folder: Path, span: Span) -> bytes:
    with open(folder / span.location, "rb") as f:
        f.seek(span.offset)
        return f.read(span.length)


def weight_spans(lm_path: Path) -> dict[bytes, Span]:
    """sha256 of each initializer's bytes (MIN_SHARED_BYTES or more) -> where lm.onnx stores them."""
    lm_path = Path(lm_path)
    model = onnx.load(str(lm_path), load_external_data=False)
    spans: dict[bytes, Span] = {}
    blob: bytes | None = None
    pos = 0  # initializers are serialized in order, so each raw_data lies after the previous one
    for t in model.graph.initializer:
        if uses_external_data(t):
            info = ExternalDataInfo(t)
            if info.length is None or info.length < MIN_SHARED_BYTES:
                continue
            span = Span(info.location, info.offset or 0, info.length)
            spans.setdefault(_digest(read_span(lm_path.parent, span)), span)
        elif len(t.raw_data) >= MIN_SHARED_BYTES:
            if blob is None:
                blob = lm_path.read_bytes()  # embedded data means the file is under 2 GB
            at = blob.find(t.raw_data, pos)
            if at < 0:
                at = blob.find(t.raw_data)
            if at < 0:
                raise AssertionError(f"{lm_path.name}: initializer {t.name}'s raw_data not found in the file")
            pos = at + len(t.raw_data)
            spans.setdefault(_digest(t.raw_data), Span(lm_path.name, at, len(t.raw_data)))
    return spans


def share_weights(model: onnx.ModelProto, lm_path: Path) -> int:
    """Point every initializer of `model` whose bytes lm.onnx holds at them (in place; the model must
    be saved beside lm.onnx). Returns the bytes no longer stored in `model`."""
    lm_path = Path(lm_path)
    spans = weight_spans(lm_path)
    shared = 0
    for t in model.graph.initializer:
        if uses_external_data(t) or len(t.raw_data) < MIN_SHARED_BYTES:
            continue
        span = spans.get(_digest(t.raw_data))
        if span is None:
            continue
        if read_span(lm_path.parent, span) != t.raw_data:  # the range must hold exactly these bytes
            raise AssertionError(f"{span.location}[{span.offset}:+{span.length}] does not hold {t.name}'s bytes")
        set_external_data(t, span.location, offset=span.offset, length=span.length)
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
        shared += span.length
    return shared


def uses_fp16_storage(lm_path: Path) -> bool:
    """Whether lm.onnx stores its large weights as float16 behind Casts (export/onnx_weights.py)."""
    graph = onnx.load(str(lm_path), load_external_data=False).graph
    return any(t.data_type == TensorProto.FLOAT16 and t.name.endswith(".fp16") for t in graph.initializer)


def external_locations(graph: onnx.GraphProto) -> set[str]:
    """The files a graph's initializers read their data from."""
    return {ExternalDataInfo(t).location for t in graph.initializer if uses_external_data(t)}


def _states(path: Path, vocab: int, seed: int = 0) -> np.ndarray:
    """encoder.onnx's states for two seeded rows, the second right-padded."""

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    ids = np.random.default_rng(seed).integers(0, vocab, (2, 33)).astype(np.int64)  # [2, s]
    mask = np.ones_like(ids)
    mask[1, 20:] = 0
    pos = np.broadcast_to(np.arange(33), (2, 33)).astype(np.int64).copy()  # [2, s]
    return sess.run(["hidden_states"], {"input_ids": ids, "attention_mask": mask, "position_ids": pos})[0]


def share_in_bundle(bundle: Path, encoder_file: str = "encoder.onnx", lm_file: str = "lm.onnx") -> tuple[int, int]:
    """Rewrite `bundle`'s encoder.onnx to share lm.onnx's weights and update bundle.json's files
    entry; returns (bytes before, bytes after). The new graph's states must equal the old one's."""
    bundle = Path(bundle)
    path, manifest_path = bundle / encoder_file, bundle / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    before = path.stat().st_size
    model = onnx.load(str(path))
    share_weights(model, bundle / lm_file)
    tmp = path.with_name(path.name + ".tmp")
    onnx.save_model(model, str(tmp))
    try:
        onnx.checker.check_model(str(tmp))
        vocab = manifest["architecture"]["vocab"]
        old, new = _states(path, vocab), _states(tmp, vocab)
        if not np.array_equal(old, new):
            raise AssertionError(f"{path}: the rewritten graph's states differ by {np.abs(old - new).max():.3g}")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    files = file_table(bundle)
    manifest["files"][encoder_file] = files[encoder_file]
    tmp_manifest = manifest_path.with_name(MANIFEST + ".tmp")
    tmp_manifest.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp_manifest, manifest_path)
    return before, path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.shared_weights",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("bundle", type=Path, help="bundle folder with lm.onnx and encoder.onnx (changed in place)")
    a = ap.parse_args(argv)
    before, after = share_in_bundle(a.bundle)
    print(f"{a.bundle / 'encoder.onnx'}: {before / 1e6:.2f} MB -> {after / 1e6:.3f} MB, the rest read from lm.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
