"""encoder.onnx stores no copy of lm.onnx's weights (export/shared_weights.py): its large initializers
are external data ranges of lm.onnx (one protobuf) or of lm.onnx.data (fp16, external data), its states
are bit for bit those of a self-contained export and match lm.onnx's hidden_states, and an existing
bundle's encoder.onnx is rewritten that way in place with lm.onnx untouched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx.external_data_helper import ExternalDataInfo, uses_external_data

from pskills_train.export.bundle_writer import export_graph, ort_feeds
from pskills_train.export.manifest import file_table
from pskills_train.export.onnx_encoder import ENCODER_FILE, check_encoder_graph, export_encoder, parity
from pskills_train.export.onnx_weights import round_weights_fp16
from pskills_train.export.shared_weights import MIN_SHARED_BYTES, Span, read_span, share_in_bundle
from test_onnx_encoder import tiny_bundle

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "resources/bundles/default"


def states(path: Path, ids: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
             "position_ids": np.arange(ids.shape[1])[None].repeat(ids.shape[0], 0).astype(np.int64)}
    return sess.run(["hidden_states"], feeds)[0]


def ids_for(vocab: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, vocab, (2, 19)).astype(np.int64)  # [2, s]


def references(path: Path) -> tuple[dict[str, int], int]:
    """Bytes referenced per external file, and the bytes of 1 KiB+ tensors still stored inline."""
    refs: dict[str, int] = {}
    inline = 0
    for t in onnx.load(str(path), load_external_data=False).graph.initializer:
        if uses_external_data(t):
            info = ExternalDataInfo(t)
            assert info.length is not None and info.offset is not None, t.name
            refs[info.location] = refs.get(info.location, 0) + info.length
            span = Span(info.location, info.offset, info.length)
            assert len(read_span(path.parent, span)) == info.length  # inside the file
        elif len(t.raw_data) >= MIN_SHARED_BYTES:
            inline += len(t.raw_data)
    return refs, inline


def test_exporter_references_lm_onnx_instead_of_copying(tmp_path):
    out = tiny_bundle(tmp_path / "b", encoder_layer=1)
    refs, inline = references(out / ENCODER_FILE)
    assert inline == 0 and set(refs) == {"lm.onnx"}
    lm_size = (out / "lm.onnx").stat().st_size
    assert refs["lm.onnx"] > lm_size / 3  # embeddings + layer 0 of 2
    assert (out / ENCODER_FILE).stat().st_size < 50_000 < refs["lm.onnx"]
    assert parity(out, out / ENCODER_FILE) < 1e-5
    # the same graph with its own copy of the weights gives the same numbers, bit for bit
    lm = _lm_of(out)
    own = export_encoder(lm, tmp_path / "own.onnx", share_with=None)
    assert references(own) == ({}, references(own)[1]) and references(own)[1] > 0
    ids = ids_for(lm.cfg.vocab_size)
    assert np.array_equal(states(own, ids), states(out / ENCODER_FILE, ids))


def _lm_of(bundle: Path):
    from pskills_train.model.from_onnx import load_onnx_lm

    return load_onnx_lm(bundle)


def test_fp16_external_data_lm_shares_its_data_file(tmp_path):
    """An lm.onnx written as `--from-hf --dtype fp16` past the external-data threshold: the encoder
    stores its weights as the same float16 bytes and reads them from lm.onnx.data."""
    lm = _lm_of(tiny_bundle(tmp_path / "src", encoder_layer=1))
    round_weights_fp16(lm)
    folder = tmp_path / "fp16"
    folder.mkdir()
    written = export_graph(lm, folder, "fp16", external_threshold=0)
    assert [p.name for p in written] == ["lm.onnx", "lm.onnx.data"]
    export_encoder(lm, folder / ENCODER_FILE)
    refs, inline = references(folder / ENCODER_FILE)
    assert inline == 0 and set(refs) == {"lm.onnx.data"}
    assert (folder / ENCODER_FILE).stat().st_size < 50_000
    ids = ids_for(lm.cfg.vocab_size)
    lm_sess = ort.InferenceSession(str(folder / "lm.onnx"), providers=["CPUExecutionProvider"])
    for row in range(ids.shape[0]):
        want = lm_sess.run(["hidden_states"], ort_feeds(lm.cfg, ids[row : row + 1]))[0]
        got = states(folder / ENCODER_FILE, ids[row : row + 1])
        assert float(np.abs(got - want).max()) <= 1e-5 * float(np.abs(want).max())
    own = export_encoder(lm, tmp_path / "own.onnx", share_with=None)
    assert np.array_equal(states(own, ids), states(folder / ENCODER_FILE, ids))


def test_existing_bundle_rewritten_in_place(tmp_path):
    out = tiny_bundle(tmp_path / "b", encoder_layer=1)
    lm = _lm_of(out)
    export_encoder(lm, out / ENCODER_FILE, share_with=None)  # an encoder.onnx from before sharing
    m = json.loads((out / "bundle.json").read_text())
    m["files"] = file_table(out)
    (out / "bundle.json").write_text(json.dumps(m, indent=2) + "\n")
    ids = ids_for(lm.cfg.vocab_size)
    old_states, lm_bytes = states(out / ENCODER_FILE, ids), (out / "lm.onnx").read_bytes()
    before, after = share_in_bundle(out)
    assert after < before / 5
    assert (out / "lm.onnx").read_bytes() == lm_bytes
    assert np.array_equal(states(out / ENCODER_FILE, ids), old_states)
    assert json.loads((out / "bundle.json").read_text())["files"] == file_table(out)
    check_encoder_graph(out / ENCODER_FILE, json.loads((out / "bundle.json").read_text()))


def test_a_location_outside_the_bundle_files_is_refused(tmp_path):
    out = tiny_bundle(tmp_path / "b", encoder_layer=1)
    m = json.loads((out / "bundle.json").read_text())
    shutil.copyfile(out / "lm.onnx", tmp_path / "lm.onnx")
    model = onnx.load(str(out / ENCODER_FILE), load_external_data=False)
    for t in model.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../lm.onnx"
    onnx.save_model(model, str(out / ENCODER_FILE))
    with pytest.raises(AssertionError, match=r"encoder\.onnx: external data in '\.\./lm\.onnx'"):
        check_encoder_graph(out / ENCODER_FILE, m)


@pytest.mark.skipif(not (DEFAULT / ENCODER_FILE).exists(), reason="the default bundle has no encoder.onnx")
def test_default_bundle_encoder_reads_lm_onnx():
    refs, inline = references(DEFAULT / ENCODER_FILE)
    assert inline == 0 and set(refs) == {"lm.onnx"}
    assert (DEFAULT / ENCODER_FILE).stat().st_size < 100_000
    check_encoder_graph(DEFAULT / ENCODER_FILE, json.loads((DEFAULT / "bundle.json").read_text()))
