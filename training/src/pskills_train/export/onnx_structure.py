"""An ONNX file's structure without its weights, read by walking the protobuf wire format over a memory map.

`onnx.load` holds a whole lm.onnx in memory (2 GB for a 0.5 B model stored inline), and saving it again
serializes a second copy; a bundle build did that several times beside the PyTorch model, which set its
peak memory. Here the graph, the initializers' names, types and shapes are parsed while each initializer's
inline bytes (`raw_data`) are only located, and a file is written anew by copying each weight's bytes in
bounded chunks: the memory is the graph's, not the weights'.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
from onnx.external_data_helper import load_external_data_for_tensor

MODEL_GRAPH = 7  # ModelProto.graph
GRAPH_NODE, GRAPH_INITIALIZER = 1, 5  # GraphProto.node, GraphProto.initializer
TENSOR_NAME, TENSOR_RAW = 8, 9  # TensorProto.name, TensorProto.raw_data
LEN = 2  # wire type of a length-delimited field
CHUNK = 64 * 2**20


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _encode(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _encode(number << 3 | LEN) + _encode(len(payload)) + payload


def _fields(buf: memoryview, start: int, end: int, path: Path) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, where its key starts, where its value starts, where it ends) of each field of
    the message in buf[start:end]; a length-delimited value starts after its length."""
    pos = start
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos)
        wire = key & 7
        if wire == 0:
            val, nxt = pos, _varint(buf, pos)[1]
        elif wire == 1:
            val, nxt = pos, pos + 8
        elif wire == LEN:
            n, val = _varint(buf, pos)
            nxt = val + n
        elif wire == 5:
            val, nxt = pos, pos + 4
        else:
            raise ValueError(f"{path}: not an ONNX protobuf (wire type {wire} at byte {at})")
        if nxt > end:
            raise ValueError(f"{path}: truncated (a field at byte {at} runs past byte {end})")
        yield key >> 3, wire, at, val, nxt
        pos = nxt


def _graph_field(buf: memoryview, path: Path) -> tuple[int, int, int]:
    """(key start, value start, end) of ModelProto.graph."""
    for number, wire, at, val, end in _fields(buf, 0, len(buf), path):
        if number == MODEL_GRAPH and wire == LEN:
            return at, val, end
    raise ValueError(f"{path}: no graph")


def _tensor(buf: memoryview, start: int, end: int, path: Path) -> tuple[bytes, str, tuple[int, int] | None]:
    """An initializer without its raw_data, its name, and where its raw_data lies (None: none inline)."""
    out = bytearray()
    name, raw = "", None
    for number, wire, at, val, nxt in _fields(buf, start, end, path):
        if number == TENSOR_RAW and wire == LEN:
            raw = (val, nxt - val)
            continue
        if number == TENSOR_NAME and wire == LEN:
            name = bytes(buf[val:nxt]).decode("utf-8")
        out += buf[at:nxt]
    return bytes(out), name, raw


def _open(path: Path) -> tuple[mmap.mmap, memoryview]:
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return mm, memoryview(mm)


def read_structure(path: str | os.PathLike) -> tuple[onnx.ModelProto, dict[str, tuple[int, int]]]:
    """The model as stored but with every initializer's inline bytes left out (external-data entries kept),
    and where those bytes lie in the file: {initializer name: (offset, length)}."""
    path = Path(path)
    mm, buf = _open(path)
    try:
        spans: dict[str, tuple[int, int]] = {}
        out = bytearray()
        for number, wire, at, val, end in _fields(buf, 0, len(buf), path):
            if number != MODEL_GRAPH or wire != LEN:
                out += buf[at:end]
                continue
            graph = bytearray()
            for g_number, g_wire, g_at, g_val, g_end in _fields(buf, val, end, path):
                if g_number == GRAPH_INITIALIZER and g_wire == LEN:
                    tensor, name, raw = _tensor(buf, g_val, g_end, path)
                    if raw is not None:
                        spans[name] = raw
                    graph += _field(GRAPH_INITIALIZER, tensor)
                else:
                    graph += buf[g_at:g_end]
            out += _field(MODEL_GRAPH, bytes(graph))
        return onnx.ModelProto.FromString(bytes(out)), spans
    finally:
        buf.release()
        mm.close()


def tensor_bytes(folder: Path, t: onnx.TensorProto, inline: dict[str, tuple[int, int]],
                 path: Path) -> tuple[Path, int, int]:
    """(file, offset, length) of an initializer's bytes: inline in `path` (`inline` from read_structure), or
    its external data in `folder`."""
    if t.name in inline:
        return (path, *inline[t.name])
    if t.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        where = folder / info["location"]
        offset = int(info.get("offset", 0))
        length = int(info["length"]) if "length" in info else where.stat().st_size - offset
        return where, offset, length
    return path, 0, 0  # no bytes (an empty tensor, or values in typed fields kept with the structure)


ALIGN = 4096  # a large tensor's external data starts on a page, as onnx's own writer aligns it
ALIGN_FROM = 2**20


def _copy(src: Path, offset: int, n: int, dst: Any) -> None:
    with open(src, "rb") as f:
        f.seek(offset)
        while n > 0:
            chunk = f.read(min(n, CHUNK))
            if not chunk:
                raise ValueError(f"{src}: ends before byte {offset + n} of a tensor")
            dst.write(chunk)
            n -= len(chunk)


def _split(message: Any, number: int) -> tuple[bytes, bytes]:
    """`message` serialized in two parts: its fields numbered below `number`, and those above (that field
    itself left out)."""
    parts = []
    for keep in (lambda n: n < number, lambda n: n > number):
        m = type(message)()
        m.CopyFrom(message)
        for f, _ in m.ListFields():
            if not keep(f.number):
                m.ClearField(f.name)
        parts.append(m.SerializeToString())
    return parts[0], parts[1]


def inline_node_tensors(graph: onnx.GraphProto, folder: Path) -> None:
    """Read into the graph the node attribute tensors (Constant values) that an exporter put in files of
    their own, as torch's does for a model past protobuf's 2 GB: those files are gone once the export's
    scratch folder is. They are small beside the weights (rotary tables, shape constants)."""
    for node in graph.node:
        for attr in node.attribute:
            tensors = [attr.t] if attr.HasField("t") else list(attr.tensors)
            for t in tensors:
                if t.data_location == onnx.TensorProto.EXTERNAL:
                    load_external_data_for_tensor(t, str(folder))
                    t.data_location = onnx.TensorProto.DEFAULT
                    del t.external_data[:]
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                inline_node_tensors(sub, folder)


def write_graph(src: str | os.PathLike, out: str | os.PathLike, external_threshold: int,
                drop: frozenset[str] | set[str] = frozenset(),
                first: list[onnx.NodeProto] | tuple[onnx.NodeProto, ...] = ()) -> list[Path]:
    """`src` (its weights inline or in external files beside it) written as the bundle lays lm.onnx out
    (onnx_weights.save_graph): every weight inline when they total at most `external_threshold` bytes, else
    those of 1 KiB or more in one `<out>.data`; without the initializers in `drop`, with the nodes `first`
    before the graph's own. The weights are copied in chunks, never held; returns the files written."""
    src, out = Path(src), Path(out)
    model, inline = read_structure(src)
    graph = model.graph
    inits = [t for t in graph.initializer if t.name not in drop]
    where = {t.name: tensor_bytes(src.parent, t, inline, src) for t in inits}
    external = sum(n for _, _, n in where.values()) > external_threshold
    data = out.with_name(out.name + ".data")
    fields: list[tuple[bytes, tuple[Path, int, int] | None]] = []  # an initializer field, the bytes that end it
    spilled: list[tuple[int, tuple[Path, int, int]]] = []  # (offset in the data file, bytes)
    at = 0
    for t in inits:
        meta = onnx.TensorProto()
        meta.CopyFrom(t)
        for name in ("external_data", "data_location", "raw_data"):
            meta.ClearField(name)
        file, offset, n = where[t.name]
        if n and external and n >= 1024:
            at += -at % ALIGN if n >= ALIGN_FROM else 0
            meta.data_location = onnx.TensorProto.EXTERNAL
            for k, v in (("location", data.name), ("offset", str(at)), ("length", str(n))):
                meta.external_data.add(key=k, value=v)
            spilled.append((at, (file, offset, n)))
            at += n
        if not n or meta.data_location == onnx.TensorProto.EXTERNAL:
            fields.append((_field(GRAPH_INITIALIZER, meta.SerializeToString()), None))
            continue
        body = meta.SerializeToString() + _encode(TENSOR_RAW << 3 | LEN) + _encode(n)
        fields.append((_encode(GRAPH_INITIALIZER << 3 | LEN) + _encode(len(body) + n) + body, (file, offset, n)))
    rest = onnx.GraphProto()
    rest.CopyFrom(graph)
    rest.ClearField("initializer")
    del rest.node[:]
    rest.node.extend([*first, *graph.node])
    inline_node_tensors(rest, src.parent)
    # Fields in number order, as protobuf writes them (and onnx.save did): the same content, the same bytes.
    g_lo, g_hi = _split(rest, GRAPH_INITIALIZER)
    m_lo, m_hi = _split(model, MODEL_GRAPH)
    length = len(g_lo) + len(g_hi) + sum(len(h) + (c[2] if c else 0) for h, c in fields)
    with open(out, "wb") as f:
        f.write(m_lo + _encode(MODEL_GRAPH << 3 | LEN) + _encode(length) + g_lo)
        for h, copy in fields:
            f.write(h)
            if copy:
                _copy(*copy, f)
        f.write(g_hi + m_hi)
    if not external:
        return [out]
    with open(data, "wb") as d:
        for pos, copy in spilled:
            d.write(b"\0" * (pos - d.tell()))
            _copy(*copy, d)
    return [out, data]
