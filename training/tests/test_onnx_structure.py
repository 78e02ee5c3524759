"""onnx_structure: an ONNX file's graph and where its initializers' bytes lie, read without loading them, and a
file written anew weight by weight (inline or one .data file), against onnx.load on the same files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

from pskills_train.export.onnx_lm import dedupe_tied_head, tied_head_copy
from pskills_train.export.onnx_structure import read_structure, write_graph

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests/fixtures/bundle-tiny-layered/lm.onnx"


def test_structure_matches_onnx_load() -> None:
    full = onnx.load(str(TINY))
    model, spans = read_structure(TINY)
    data = TINY.read_bytes()
    assert [n.SerializeToString() for n in model.graph.node] == [n.SerializeToString() for n in full.graph.node]
    assert [(t.name, list(t.dims), t.data_type) for t in model.graph.initializer] == \
        [(t.name, list(t.dims), t.data_type) for t in full.graph.initializer]
    assert all(len(t.raw_data) == 0 for t in model.graph.initializer)
    inline = [t for t in full.graph.initializer if len(t.raw_data)]
    assert inline and set(spans) == {t.name for t in inline}
    for t in inline:
        at, n = spans[t.name]
        assert data[at:at + n] == t.raw_data
    assert model.opset_import == full.opset_import and model.ir_version == full.ir_version


def _model(tmp: Path) -> tuple[Path, np.ndarray]:
    """A tied head as the tracer leaves it: embed [V, d] and a folded copy of its transpose [d, V]."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "head_t"], ["y"], name="head")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(w, "lm.model.embed_tokens.weight"), numpy_helper.from_array(w.T.copy(), "head_t")])
    path = tmp / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path, w


@pytest.mark.parametrize("threshold", [10**9, 0])
def test_write_graph_drops_prepends_and_lays_out(tmp_path: Path, threshold: int) -> None:
    path, w = _model(tmp_path)
    out = tmp_path / "out" / "lm.onnx"
    out.parent.mkdir()
    first = [helper.make_node("Transpose", ["lm.model.embed_tokens.weight"], ["head_t"], perm=[1, 0])]
    written = write_graph(path, out, threshold, {"head_t"}, first)
    # over the threshold the weights of 1 KiB or more go to one .data file: here none is that large
    assert written == [out] if threshold else written[0] == out
    got = onnx.load(str(out))
    onnx.checker.check_model(got)
    assert [n.op_type for n in got.graph.node] == ["Transpose", "MatMul"]
    assert [t.name for t in got.graph.initializer] == ["lm.model.embed_tokens.weight"]
    assert np.array_equal(numpy_helper.to_array(got.graph.initializer[0]), w)


def test_write_graph_external_data_round_trip(tmp_path: Path) -> None:
    """TINY's weights through a .data file (threshold 0) and back inline: the same tensors as onnx.load's."""
    full = onnx.load(str(TINY))
    ext = tmp_path / "ext" / "lm.onnx"
    ext.parent.mkdir()
    written = write_graph(TINY, ext, 0)
    assert [p.name for p in written] == ["lm.onnx", "lm.onnx.data"]
    big = [t for t in onnx.load(str(ext), load_external_data=False).graph.initializer if t.data_location == 1]
    assert big and all(len(t.raw_data) == 0 for t in big)
    back = tmp_path / "back" / "lm.onnx"
    back.parent.mkdir()
    assert write_graph(ext, back, 10**9) == [back]
    for p in (ext, back):
        got = onnx.load(str(p))
        assert [n.SerializeToString() for n in got.graph.node] == [n.SerializeToString() for n in full.graph.node]
        assert {t.name: numpy_helper.to_array(t).tobytes() for t in got.graph.initializer} == \
            {t.name: numpy_helper.to_array(t).tobytes() for t in full.graph.initializer}


def test_write_graph_inlines_constants_stored_apart(tmp_path: Path) -> None:
    """An exporter past protobuf's 2 GB puts Constant values in files of their own beside the graph, in a
    scratch folder that goes away: the written graph carries them, and reads without the source folder."""
    table = np.arange(600, dtype=np.float32).reshape(200, 3)
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(table, "c_value"))
    g = helper.make_graph(
        [const, helper.make_node("Add", ["x", "c"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [200, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [200, 3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    src = tmp_path / "src" / "m.onnx"
    src.parent.mkdir()
    convert_model_to_external_data(model, all_tensors_to_one_file=False, size_threshold=0, convert_attribute=True)
    onnx.save_model(model, str(src))
    stored = onnx.load(str(src), load_external_data=False).graph.node[0].attribute[0].t
    assert stored.data_location == TensorProto.EXTERNAL  # the case: the value lies in a file of its own
    out = tmp_path / "out" / "lm.onnx"
    out.parent.mkdir()
    write_graph(src, out, 10**9)
    for f in src.parent.iterdir():
        f.unlink()
    got = onnx.load(str(out))
    onnx.checker.check_model(got)
    assert np.array_equal(numpy_helper.to_array(got.graph.node[0].attribute[0].t), table)


def test_tied_head_copy_found_in_file(tmp_path: Path) -> None:
    path, _ = _model(tmp_path)
    model = onnx.load(str(path))
    assert tied_head_copy(path) == "head_t"
    assert dedupe_tied_head(model)
    out = tmp_path / "d.onnx"
    write_graph(path, out, 10**9, {"head_t"}, [model.graph.node[0]])
    assert tied_head_copy(out) is None  # nothing left to fold
    assert {t.name for t in onnx.load(str(out)).graph.initializer} == {t.name for t in model.graph.initializer}


def test_truncated_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "cut.onnx"
    bad.write_bytes(TINY.read_bytes()[:5000])
    with pytest.raises(ValueError, match=r"cut\.onnx: truncated"):
        read_structure(bad)
