"""The gate every GGUF file passes before anything else reads it (docs/security.md, "GGUF files").

gguf's GGUFReader builds a numpy view per metadata element and trusts every length it reads: a 134-byte
file declaring 10⁹ uint8 grows it without limit, and 10⁶ empty strings cost it 1.6 GB. So the file is
walked here first, with the standard library only (a refused file never loads torch or numpy), in
fixed-size windows, against the limits the Node reader (main/models/gguf.ts) applies too:

- a regular file (a symbolic link is followed to one); FIFOs, sockets and devices are refused from
  lstat, before any open, and the open is non-blocking as a second guard;
- magic "GGUF", version 2 or 3;
- at most 65,536 metadata keys, 1,000,000 tensors, keys (and tensor names) of at most 65,536 bytes;
- a string value at most 16 MiB; an array's length × its smallest element (8 bytes for a string)
  within the bytes left in the file and at most 64 MiB; all metadata at most 64 MiB;
- general.alignment, when present, an integer, ≥ 1, a power of two, at most 1 MiB;
- every tensor's data inside the file;
- the walk ends within TIME_BUDGET_S.

The importer (from_gguf.py) then reads metadata values from here, decoded only when asked, and lets
GGUFReader build the tensor table alone, after `check_importable` has bounded it.
"""

from __future__ import annotations

import math
import os
import re
import stat
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gguf_errors import GGUFGateError
from .gguf_resources import MEMORY_PER_WEIGHT_BYTE, MEMORY_PER_WEIGHT_BYTE_Q4, check_resources

MIB = 1 << 20
MAX_KEYS = 65_536
MAX_TENSORS = 1_000_000
MAX_KEY_BYTES = 65_536
MAX_STRING_BYTES = 16 * MIB
MAX_ARRAY_BYTES = 64 * MIB
MAX_METADATA_BYTES = 64 * MIB
MAX_ALIGNMENT = MIB
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_ARRAY_DEPTH = 4  # arrays of arrays; llama.cpp writes none
TIME_BUDGET_S = 1.5  # the walk; with interpreter start a refusal stays within 2 s
WINDOW = MIB
HEADER_BYTES = 24  # magic, version, tensor count, key count
DEFAULT_ALIGNMENT = 32

# ggml type -> (elements per block, bytes per block): gguf.constants.GGML_QUANT_SIZES, copied so that the
# gate needs no numpy (tests/test_gguf_gate.py checks that the two agree).
GGML_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 40),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82),
    23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18)}

# GGUF value types: struct codes of the scalars; 8 is a string, 9 an array.
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
INTEGERS = (0, 1, 2, 3, 4, 5, 10, 11)
STRING, ARRAY = 8, 9
TYPE_NAMES = {0: "uint8", 1: "int8", 2: "uint16", 3: "int16", 4: "uint32", 5: "int32", 6: "float32", 7: "bool",
              8: "string", 9: "array", 10: "uint64", 11: "int64", 12: "float64"}

# What the importer builds (from_gguf.py ARCHITECTURES, _GLOBAL, _LAYER; the tests check they agree).
ARCHITECTURES = ("llama", "qwen2")
GLOBAL_TENSORS = ("token_embd.weight", "output_norm.weight", "output.weight", "rope_freqs.weight")
LAYER_TENSORS = ("attn_norm.weight", "ffn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
                 "attn_output.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias",
                 "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight")
MAX_LAYERS = 1024  # Llama 3.1 405B has 126
MAX_HEAD_DIM = 65_536  # models have 64 to 256; bounds the RoPE factors read (_check_llama3_rope)
# The metadata from_gguf.py reads with `need` whatever the file (config_from_gguf, tokenizer_from_gguf), in the
# order it reads them, and the value types it can use: a file without one used to reach torch (3.5 s, 330 MB)
# before the importer named the key. Node's gate checks the same (main/models/gguf.ts GGUF_REQUIRED_KEYS).
FLOATS = (6, 12)
REQUIRED_KEYS: tuple[tuple[str, tuple[int, ...], str], ...] = (
    ("{arch}.embedding_length", INTEGERS, "an integer"),
    ("{arch}.attention.head_count", INTEGERS, "an integer"),
    ("{arch}.feed_forward_length", INTEGERS, "an integer"),
    ("{arch}.attention.layer_norm_rms_epsilon", FLOATS, "a float"),
    ("tokenizer.ggml.model", (STRING,), "a string"),
    ("tokenizer.ggml.tokens", (ARRAY,), "an array of strings"),
    ("tokenizer.ggml.eos_token_id", INTEGERS, "an integer"),
)
KEEP_TENSORS = len(GLOBAL_TENSORS) + len(LAYER_TENSORS) * MAX_LAYERS
KEEP_NAME_BYTES = 256  # ggml names are at most 64


@dataclass(frozen=True)
class Value:
    """Where a metadata value lies: its type, its first byte, and for an array its element type and length."""

    vtype: int
    offset: int
    etype: int = -1
    count: int = 0


@dataclass(frozen=True)
class Tensor:
    name: str
    dims: tuple[int, ...]  # ggml order (fastest first)
    ggml_type: int
    offset: int  # from the start of the data section


@dataclass
class Header:
    path: Path  # as given
    real: str  # the regular file it names
    size: int
    order: str  # struct byte order: "<" (a big-endian file is refused)
    version: int
    values: dict[str, Value]
    tensor_count: int
    tensors: list[Tensor] | None  # None when there are more than KEEP_TENSORS or a name is long
    alignment: int
    metadata_end: int  # the tensor table's first byte
    table_end: int  # the byte after the tensor table
    data_offset: int

    def value(self, key: str) -> Any:
        """The decoded value of `key` (a list for an array), or None when the file has no such key."""
        v = self.values.get(key)
        if v is None:
            return None
        fd = open_regular(self.path)[0]
        try:
            cur = _Cursor(fd, self.size, self.path, self.order, deadline=float("inf"))
            cur.pos = v.offset
            return cur.decode(v.vtype, f"the value of metadata key {key!r}")
        finally:
            os.close(fd)

    def parameters(self) -> int:
        """Elements of every tensor but rope_freqs.weight: the model's parameters, as the importer counts them."""
        return sum(math.prod(t.dims) for t in self.tensors or [] if t.name != "rope_freqs.weight")

    def fields(self) -> dict[str, LazyField]:
        """The metadata as GGUFReader's `fields` are used by from_gguf.Meta: `.contents()` per key."""
        return {k: LazyField(self, k) for k in self.values}


class LazyField:
    def __init__(self, header: Header, key: str):
        self.header, self.key, self._got, self._value = header, key, False, None

    def contents(self) -> Any:
        if not self._got:
            self._value, self._got = self.header.value(self.key), True
        return self._value


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link that leads nowhere")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: Path) -> tuple[int, os.stat_result, str]:
    """(fd, stat, real path) of the regular file `path` names; anything else is refused before it is opened."""
    try:
        st = os.lstat(path)
        real = str(path)
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(path)
            st = os.lstat(real)
    except FileNotFoundError:
        raise GGUFGateError(f"{path}: no such file") from None
    except OSError as e:
        raise GGUFGateError(f"{path}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        via = f" (a link to {real})" if real != str(path) else ""
        raise GGUFGateError(f"{path}{via}: {_kind(st.st_mode)}, not a regular file; a GGUF model must be a file")
    try:  # O_NONBLOCK: should the file have been swapped for a FIFO since lstat, the open does not wait
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise GGUFGateError(f"{path}: cannot be opened ({e.strerror})") from None
    now = os.fstat(fd)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise GGUFGateError(f"{path}: changed while it was being opened; not read")
    return fd, now, real


class _Cursor:
    """Reads the file in WINDOW-sized windows with pread; `pos` is the next byte. Every read is checked
    against the file's size (naming `where`) and, at each new window, against the deadline."""

    def __init__(self, fd: int, size: int, path: Path, order: str, deadline: float):
        self.fd, self.size, self.path, self.order, self.deadline = fd, size, path, order, deadline
        self.buf, self.base, self.pos = b"", 0, 0
        self.u32, self.u64 = struct.Struct(order + "I"), struct.Struct(order + "Q")

    def fail(self, what: str) -> GGUFGateError:
        return GGUFGateError(f"{self.path}: {what}")

    def truncated(self, where: str) -> GGUFGateError:
        return self.fail(f"truncated at byte {self.size:,}, in {where} (at byte {self.pos:,})")

    def over_time(self, where: str) -> GGUFGateError:
        return self.fail(f"reading its header passed its time budget of {TIME_BUDGET_S:g} s (at byte {self.pos:,}, "
                         f"in {where})")

    def fill(self, n: int, where: str) -> int:
        """Makes the window cover [pos, pos + n); returns pos's index in it."""
        if self.pos + n > self.size:
            raise self.truncated(where)
        off = self.pos - self.base
        if off < 0 or off + n > len(self.buf):
            if time.monotonic() > self.deadline:
                raise self.over_time(where)
            self.base, self.buf = self.pos, os.pread(self.fd, max(WINDOW, n), self.pos)
            if len(self.buf) < n:
                raise self.fail(f"shrank while it was being read (at byte {self.pos:,}, in {where})")
            off = 0
        return off

    def unpack(self, s: struct.Struct, where: str) -> Any:
        off = self.fill(s.size, where)
        self.pos += s.size
        return s.unpack_from(self.buf, off)[0]

    def take(self, n: int, where: str) -> bytes:
        off = self.fill(n, where)
        self.pos += n
        return self.buf[off:off + n]

    def skip(self, n: int, where: str) -> None:
        if self.pos + n > self.size:
            raise self.truncated(where)
        self.pos += n

    def name(self, where: str, what: str, metadata: bool) -> str:
        """A key (`metadata`) or a tensor name: its length against its cap, the metadata total, the file."""
        n = self.unpack(self.u64, where)
        if n > MAX_KEY_BYTES:
            raise self.fail(f"the {what} at byte {self.pos - 8:,} claims {n:,} bytes; the {what} length limit is "
                            f"{MAX_KEY_BYTES:,}")
        if metadata:
            self.check_metadata_bytes(where, self.pos + n)
        raw = self.take(n, where)
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"the {what} at byte {self.pos - n:,} is not UTF-8") from None
        return name

    @staticmethod
    def shown(name: str) -> str:
        """A name for a message: a 64 KiB one is cut (real names are at most 64 bytes)."""
        return name if len(name) <= KEEP_NAME_BYTES else f"{name[:KEEP_NAME_BYTES]}… ({len(name):,} characters)"

    # ---------------------------------------------------------------------------------------------- values

    def check_value(self, vtype: int, key: str, depth: int = 0) -> Value:
        """Steps over one value of type `vtype`, checking every length in it; returns where it lay."""
        where = f"the value of metadata key {key!r}"
        start = self.pos
        if vtype in SCALARS:
            self.skip(struct.calcsize(SCALARS[vtype]), where)
            return Value(vtype, start)
        if vtype == STRING:
            n = self.unpack(self.u64, where)
            if n > MAX_STRING_BYTES:
                raise self.fail(f"metadata key {key!r}: a string of {n:,} bytes; the string length limit is "
                                f"{MAX_STRING_BYTES:,}")
            self.check_metadata_bytes(where, self.pos + n)
            self.skip(n, where)
            return Value(vtype, start)
        if vtype != ARRAY:
            raise self.fail(f"metadata key {key!r} has value type {vtype}, which GGUF does not define")
        if depth >= MAX_ARRAY_DEPTH:
            raise self.fail(f"metadata key {key!r}: arrays nested deeper than {MAX_ARRAY_DEPTH}")
        etype = self.unpack(self.u32, where)
        count = self.unpack(self.u64, where)
        size = struct.calcsize(SCALARS[etype]) if etype in SCALARS else 8 if etype == STRING else \
            12 if etype == ARRAY else None
        if size is None:
            raise self.fail(f"metadata key {key!r}: an array of value type {etype}, which GGUF does not define")
        least, left = count * size, self.size - self.pos
        what = f"metadata key {key!r}: an array of {count:,} {TYPE_NAMES[etype]}"
        if least > left:
            raise self.fail(f"{what} needs at least {least:,} bytes; {left:,} are left in the file")
        if least > MAX_ARRAY_BYTES:
            raise self.fail(f"{what} needs at least {least:,} bytes; the limit is {MAX_ARRAY_BYTES:,}")
        if etype in SCALARS:
            self.skip(least, where)
        elif etype == STRING:
            self.skip_strings(count, key)
        else:
            for _ in range(count):
                self.check_value(ARRAY, key, depth + 1)
                self.check_metadata_bytes(where, self.pos)
        return Value(vtype, start, etype, count)

    def skip_strings(self, count: int, key: str) -> None:
        """The strings of an array: the hot loop of a large vocabulary, so the window is read inline."""
        where = f"the value of metadata key {key!r}"
        limit = HEADER_BYTES + MAX_METADATA_BYTES
        unpack = self.u64.unpack_from
        for _ in range(count):
            off = self.pos - self.base
            if off < 0 or off + 8 > len(self.buf):
                off = self.fill(8, where)
            n = unpack(self.buf, off)[0]
            if n > MAX_STRING_BYTES:
                raise self.fail(f"metadata key {key!r}: a string of {n:,} bytes (at byte {self.pos:,}); the string "
                                f"length limit is {MAX_STRING_BYTES:,}")
            if self.pos + 8 + n > limit:
                self.check_metadata_bytes(where, self.pos + 8 + n)
            self.pos += 8 + n
            if self.pos > self.size:
                raise self.truncated(where)

    def check_metadata_bytes(self, where: str, end: int) -> None:
        """The key/value section, from byte 24 to `end`, within MAX_METADATA_BYTES."""
        if end - HEADER_BYTES > MAX_METADATA_BYTES:
            raise self.fail(f"the metadata bytes would reach byte {end:,} (in {where}); the limit is "
                            f"{MAX_METADATA_BYTES:,} bytes of metadata")

    def decode(self, vtype: int, where: str) -> Any:
        """A value of a file the gate passed, as Python values (GGUFReader's `contents()`)."""
        if vtype in SCALARS:
            s = struct.Struct(self.order + SCALARS[vtype])
            return self.unpack(s, where)
        if vtype == STRING:
            n = self.unpack(self.u64, where)
            return self.take(n, where).decode("utf-8", "replace")
        etype = self.unpack(self.u32, where)
        count = self.unpack(self.u64, where)
        if etype in SCALARS:
            s = struct.Struct(f"{self.order}{count}{SCALARS[etype]}")
            data = os.pread(self.fd, s.size, self.pos)
            self.skip(s.size, where)
            return list(s.unpack(data))
        return [self.decode(etype, where) for _ in range(count)]


# -------------------------------------------------------------------------------------------------- the gate


def check_gguf(path: Path, budget_s: float = TIME_BUDGET_S, importing: bool = False) -> Header:
    """Walks the header of `path` against the limits above; returns where everything lies, or refuses.
    `importing`: more tensors than a model the importer builds has (KEEP_TENSORS) is refused from the
    preamble, before the walk (10⁶ tensors took the whole time budget), as the Node CLI does."""
    fd, st, real = open_regular(path)
    try:
        return _walk(fd, st.st_size, path, real, time.monotonic() + budget_s, importing)
    finally:
        os.close(fd)


def _walk(fd: int, size: int, path: Path, real: str, deadline: float, importing: bool = False) -> Header:
    head = os.pread(fd, HEADER_BYTES, 0)
    if len(head) >= 4 and head[:4] != b"GGUF":
        raise GGUFGateError(f"{path}: not a GGUF file (no GGUF magic)")
    if size < HEADER_BYTES:
        raise GGUFGateError(f"{path}: truncated: {size} bytes, too short for a GGUF header")
    order = "<"
    version = struct.unpack_from("<I", head, 4)[0]
    if version not in (2, 3):
        # A file written big-endian is named so, as the Node gate names it (main/models/gguf.ts): neither reads
        # one (GGUFReader guessed the byte order from the version, and read 0x80000000 as "version 128").
        swapped = struct.unpack_from(">I", head, 4)[0]
        if swapped in (2, 3):
            raise GGUFGateError(f"{path}: a big-endian GGUF file (byte order big-endian, version {swapped}); only "
                                f"little-endian files are read")
        raise GGUFGateError(f"{path}: GGUF version {version}; this importer reads versions 2 and 3")
    tensor_count, key_count = struct.unpack_from(order + "QQ", head, 8)
    if key_count > MAX_KEYS:
        raise GGUFGateError(f"{path}: the header's key count is {key_count:,}; the limit is {MAX_KEYS:,}")
    if tensor_count > MAX_TENSORS:
        raise GGUFGateError(f"{path}: the header's tensor count is {tensor_count:,}; the limit is {MAX_TENSORS:,}")
    if importing and tensor_count > KEEP_TENSORS:
        raise GGUFGateError(f"{path}: {tensor_count:,} tensors: more than a model this importer builds has (at most "
                            f"{KEEP_TENSORS:,}, for {MAX_LAYERS:,} layers)")
    cur = _Cursor(fd, size, path, order, deadline)
    cur.pos = HEADER_BYTES
    values: dict[str, Value] = {}
    last = "the header"
    for _ in range(key_count):
        key = cur.name(f"the name that follows {last}", "key", metadata=True)
        shown = cur.shown(key)
        if key in values:
            raise cur.fail(f"metadata key {shown!r} appears twice")
        vtype = cur.unpack(cur.u32, f"the type of metadata key {shown!r}")
        values[key] = cur.check_value(vtype, shown)
        cur.check_metadata_bytes(f"metadata key {shown!r}", cur.pos)
        last = f"metadata key {shown!r}"
    metadata_end = cur.pos
    alignment = _alignment(cur, values)

    tensors: list[Tensor] | None = [] if tensor_count <= KEEP_TENSORS else None
    names: set[str] = set()
    end, last_end = 0, ""
    last = "the tensor table"
    for _ in range(tensor_count):
        name = cur.name(f"the name that follows {last}", "tensor name", metadata=False)
        shown = cur.shown(name)
        where = f"the tensor table entry {shown!r}"
        n_dims = cur.unpack(cur.u32, where)
        if n_dims > MAX_DIMS:
            raise cur.fail(f"tensor {shown!r} has {n_dims:,} dimensions; ggml has at most {MAX_DIMS}")
        dims = tuple(cur.unpack(cur.u64, where) for _ in range(n_dims))
        ggml_type = cur.unpack(cur.u32, where)
        offset = cur.unpack(cur.u64, where)
        if ggml_type not in GGML_SIZES:
            raise cur.fail(f"tensor {shown!r} has tensor type {ggml_type}, which ggml does not define")
        block, type_size = GGML_SIZES[ggml_type]
        elements = 1
        for d in dims:
            elements *= d
        if dims and dims[0] % block:
            raise cur.fail(f"tensor {shown!r}: its rows of {dims[0]:,} are not whole blocks of {block}")
        t_end = offset + elements * type_size // block
        if t_end > end:
            end, last_end = t_end, shown
        if tensors is not None:
            if len(name.encode()) > KEEP_NAME_BYTES:
                tensors = None
            else:
                if name in names:
                    raise cur.fail(f"tensor {shown!r} appears twice")
                names.add(name)
                tensors.append(Tensor(name, dims, ggml_type, offset))
        last = f"the tensor table entry {shown!r}"
    data_offset = -(-cur.pos // alignment) * alignment
    if tensor_count and data_offset + end > size:
        raise GGUFGateError(f"{path}: tensor {last_end!r} lies outside the file: it ends at byte "
                            f"{data_offset + end:,}, the file has {size:,} bytes")
    return Header(path, real, size, order, version, values, tensor_count, tensors, alignment, metadata_end, cur.pos,
                  data_offset)


def _alignment(cur: _Cursor, values: dict[str, Value]) -> int:
    v = values.get("general.alignment")
    if v is None:
        return DEFAULT_ALIGNMENT
    if v.vtype not in INTEGERS:
        raise cur.fail(f"general.alignment is a {TYPE_NAMES.get(v.vtype, v.vtype)}; it must be an integer")
    raw = os.pread(cur.fd, struct.calcsize(SCALARS[v.vtype]), v.offset)
    a = struct.unpack(cur.order + SCALARS[v.vtype], raw)[0]
    if a < 1 or a & (a - 1) or a > MAX_ALIGNMENT:
        raise cur.fail(f"general.alignment = {a}; it must be a power of two from 1 to {MAX_ALIGNMENT:,}")
    return int(a)


# ------------------------------------------------------------------------------------------ the importer's


def check_importable(h: Header) -> str:
    """What from_gguf.py builds, checked before GGUFReader builds its tensor table (which costs a few KB a
    tensor) and before torch loads: a supported architecture, a block count, the metadata it needs
    (REQUIRED_KEYS) and only tensors of such a model. Returns the architecture."""
    if "general.architecture" not in h.values:
        raise GGUFGateError(f"{h.path}: metadata key 'general.architecture' missing")
    arch = h.value("general.architecture") if h.values["general.architecture"].vtype == STRING else None
    if arch not in ARCHITECTURES:
        raise GGUFGateError(f"{h.path}: general.architecture {arch!r} is not supported (supported: "
                            f"{', '.join(ARCHITECTURES)}; Mistral files are 'llama')")
    key = f"{arch}.block_count"
    v = h.values.get(key)
    if v is None:
        raise GGUFGateError(f"{h.path}: metadata key {key!r} missing")
    blocks = h.value(key) if v.vtype in INTEGERS else None
    if blocks is None or not 1 <= blocks <= MAX_LAYERS:
        raise GGUFGateError(f"{h.path}: {key} = {blocks!r}; this importer builds 1 to {MAX_LAYERS} layers")
    for pattern, types, what in REQUIRED_KEYS:
        key = pattern.replace("{arch}", str(arch))
        v = h.values.get(key)
        if v is None:
            raise GGUFGateError(f"{h.path}: metadata key {key!r} missing; the importer needs it")
        if v.vtype not in types or (v.vtype == ARRAY and v.etype != STRING):
            got = TYPE_NAMES.get(v.vtype, str(v.vtype))
            if v.vtype == ARRAY:
                got = f"array of {TYPE_NAMES.get(v.etype, str(v.etype))}"
            article = "an" if got[0] in "ai" else "a"
            raise GGUFGateError(f"{h.path}: metadata key {key!r} is {article} {got}; the importer needs {what}")
    if h.tensors is None:
        raise GGUFGateError(f"{h.path}: {h.tensor_count:,} tensors (or a name over {KEEP_NAME_BYTES} bytes): not a "
                            f"{arch} model this importer builds")
    layer = re.compile(r"blk\.(\d+)\.(.+)")
    for t in h.tensors:
        m = layer.fullmatch(t.name)
        known = t.name in GLOBAL_TENSORS or (m is not None and int(m[1]) < blocks and m[2] in LAYER_TENSORS)
        if not known:
            raise GGUFGateError(f"{h.path}: tensor {t.name!r} is not part of a {arch} model this importer builds "
                                f"({blocks} layers)")
    if not any(t.name == "token_embd.weight" for t in h.tensors):
        raise GGUFGateError(f"{h.path}: tensor 'token_embd.weight' missing")
    _check_model(h, str(arch), int(blocks))
    return str(arch)


PRE_TOKENIZERS = ("default", "gpt2", "smollm", "llama-bpe", "llama3", "qwen2")  # from_gguf.PRE_TOKENIZERS


def _check_model(h: Header, arch: str, blocks: int) -> None:
    """What from_gguf.py checks after torch has loaded (2–3 s, 330 MB), checked here first: the sizes its
    ModelConfig takes, every tensor of LlamaLM present with the shape they imply (config_from_gguf,
    check_tensors), and the tokenizer it rebuilds (tokenizer_from_gguf): its kind, the arrays that kind
    reads, no more tokens than embedding rows, an end-of-text id among them. A crafted header that keeps
    every limit and names every key is refused here, in milliseconds, not after torch."""
    fail = lambda what: GGUFGateError(f"{h.path}: {what}")  # noqa: E731

    def integer(key: str, default: int | None = None, least: int = 1) -> int:
        v = h.values.get(key)
        if v is None and default is not None:
            return default
        got = h.value(key) if v is not None and v.vtype in INTEGERS else None
        if not isinstance(got, int) or got < least:
            shown = f"an array of {TYPE_NAMES.get(v.etype, v.etype)}" if v is not None and v.vtype == ARRAY else got
            raise fail(f"{key} = {shown!r}; the importer needs a whole number ≥ {least}")
        return got

    hidden = integer(f"{arch}.embedding_length")
    heads = integer(f"{arch}.attention.head_count")
    kv = integer(f"{arch}.attention.head_count_kv", heads)
    ffn = integer(f"{arch}.feed_forward_length")
    head_dim = (integer(f"{arch}.attention.key_length", 0, 0) or integer(f"{arch}.rope.dimension_count", 0, 0)
                or hidden // heads)
    if heads % kv:
        raise fail(f"{arch}.attention.head_count {heads} is not a multiple of head_count_kv {kv}")
    if head_dim < 2 or head_dim % 2 or head_dim > MAX_HEAD_DIM:
        raise fail(f"a head of {head_dim:,} dimensions; RoPE needs an even number, at most {MAX_HEAD_DIM:,}")
    scaling = h.value(f"{arch}.rope.scaling.type") if f"{arch}.rope.scaling.type" in h.values else "none"
    if scaling not in ("none", "linear", None):
        raise fail(f"{arch}.rope.scaling.type {scaling!r} is not supported (none, linear, and llama3 as "
                   f"rope_freqs.weight)")
    if scaling == "linear" and f"{arch}.rope.scaling.factor" not in h.values:
        raise fail(f"metadata key '{arch}.rope.scaling.factor' missing; the importer needs it for linear scaling")
    tensors = {t.name: t.dims for t in h.tensors or []}
    embd = tensors["token_embd.weight"]
    vocab = embd[1] if len(embd) == 2 else 0
    q, k = heads * head_dim, kv * head_dim
    want: dict[str, tuple[int, ...]] = {"token_embd.weight": (hidden, vocab), "output_norm.weight": (hidden,)}
    layer = {"attn_norm.weight": (hidden,), "ffn_norm.weight": (hidden,), "attn_q.weight": (hidden, q),
             "attn_k.weight": (hidden, k), "attn_v.weight": (hidden, k), "attn_output.weight": (q, hidden),
             "ffn_gate.weight": (hidden, ffn), "ffn_up.weight": (hidden, ffn), "ffn_down.weight": (ffn, hidden)}
    if "blk.0.attn_q.bias" in tensors:
        layer |= {"attn_q.bias": (q,), "attn_k.bias": (k,), "attn_v.bias": (k,)}
    if "blk.0.attn_output.bias" in tensors:
        layer["attn_output.bias"] = (hidden,)
    for i in range(blocks):
        want |= {f"blk.{i}.{name}": dims for name, dims in layer.items()}
    optional = {"output.weight": (hidden, vocab)}
    for name, dims in tensors.items():
        if name == "rope_freqs.weight":
            continue
        shape = want.get(name, optional.get(name))
        if shape is None:
            raise fail(f"tensor {name!r} is not part of a {arch} model this importer builds ({blocks} layers)")
        if tuple(dims) != shape or vocab < 1:  # messages in the importer's (row-major) order
            raise fail(f"tensor {name!r} has shape {tuple(reversed(dims))}, the metadata implies "
                       f"{tuple(reversed(shape))}")
    missing = [name for name in want if name not in tensors]
    if missing:
        raise fail(f"tensor {missing[0]!r} missing ({len(missing)} of {len(want)} missing)")
    if "rope_freqs.weight" in tensors:
        _check_llama3_rope(h, arch, head_dim)

    kind = h.value("tokenizer.ggml.model")
    if kind not in ("gpt2", "llama"):
        raise fail(f"tokenizer.ggml.model {kind!r} is not supported (gpt2, llama)")
    needs = "tokenizer.ggml.merges" if kind == "gpt2" else "tokenizer.ggml.scores"
    if needs not in h.values or h.values[needs].vtype != ARRAY:
        raise fail(f"metadata key {needs!r} missing; the importer needs it for a {kind} tokenizer")
    if kind == "gpt2" and "tokenizer.ggml.pre" in h.values:
        pre = h.value("tokenizer.ggml.pre")
        if pre not in PRE_TOKENIZERS:
            raise fail(f"tokenizer.ggml.pre {pre!r} is not supported (supported: {', '.join(PRE_TOKENIZERS)})")
    tokens = h.values["tokenizer.ggml.tokens"].count
    if tokens > vocab:
        raise fail(f"tokenizer.ggml.tokens has {tokens} tokens, more than the {vocab} rows of token_embd.weight")
    if kind == "llama" and h.values[needs].count < tokens:
        raise fail(f"tokenizer.ggml.scores has {h.values[needs].count} scores for {tokens} tokens")
    for key in ("eos", "bos", "padding", "eot", "eom", "unknown"):
        key = f"tokenizer.ggml.{key}_token_id"
        if key in h.values:
            tid = integer(key, least=0)
            if tid >= tokens:
                raise fail(f"{key} = {tid} is outside the {tokens} tokens")


# rope_freqs.weight's element types read here (llama.cpp writes F32); another is left to the importer's check.
ROPE_TYPES = {0: ("f", 4), 1: ("e", 2), 30: ("H", 2)}  # F32, F16, BF16 (its 16 high bits of a float32)
ROPE_RTOL = 1e-3  # the importer matches within 1e-4 in float32 (from_gguf._llama3_rope); this never refuses less


def llama3_factors(theta: float, head_dim: int, factor: float, lo: float, hi: float, ctx: float) -> list[float]:
    """The divisors llama.cpp stores for Llama 3.1's RoPE (rope_freqs.weight): base frequency over scaled
    frequency, per pair of dimensions (transformers `_compute_llama3_parameters`, model/layers.rope_inv_freq)."""
    out = []
    for i in range(0, head_dim, 2):
        inv = 1.0 / theta ** (i / head_dim)
        wavelen = 2 * math.pi / inv
        scaled = inv / factor if wavelen > ctx / lo else inv
        if ctx / hi <= wavelen <= ctx / lo:
            smooth = (ctx / wavelen - lo) / (hi - lo)
            scaled = (1 - smooth) * scaled / factor + smooth * scaled
        out.append(inv / scaled)
    return out


def _check_llama3_rope(h: Header, arch: str, head_dim: int) -> None:
    """rope_freqs.weight read from the file (head_dim / 2 numbers) and matched against the llama3 scalings the
    importer tries (from_gguf._llama3_rope, which ran after torch loaded: 2-3 s and 330 MB for a crafted file)."""
    t = next(t for t in h.tensors or [] if t.name == "rope_freqs.weight")
    if tuple(t.dims) != (head_dim // 2,):
        raise GGUFGateError(f"{h.path}: tensor 'rope_freqs.weight' has shape {tuple(reversed(t.dims))}; a head of "
                            f"{head_dim} dimensions needs ({head_dim // 2},)")
    if t.ggml_type not in ROPE_TYPES:
        return
    code, size = ROPE_TYPES[t.ggml_type]
    fd = open_regular(h.path)[0]
    try:
        raw = os.pread(fd, size * t.dims[0], h.data_offset + t.offset)
    finally:
        os.close(fd)
    got = list(struct.unpack(f"<{t.dims[0]}{code}", raw))
    if t.ggml_type == 30:
        got = list(struct.unpack(f"<{len(got)}f", struct.pack(f"<{len(got)}I", *(g << 16 for g in got))))
    no_match = GGUFGateError(f"{h.path}: tensor 'rope_freqs.weight' holds RoPE factors that match no llama3 scaling")
    theta = h.value(f"{arch}.rope.freq_base") if f"{arch}.rope.freq_base" in h.values else 10000.0
    orig = h.value(f"{arch}.rope.scaling.original_context_length")
    factor = max(got)
    if not all(isinstance(v, (int, float)) for v in (theta, orig or 0)) or not 0 < factor < math.inf:
        raise no_match
    for ctx in (orig if orig is not None else 8192, 8192):
        try:
            want = llama3_factors(float(theta), head_dim, factor, 1.0, 4.0, float(ctx))
        except (ZeroDivisionError, OverflowError, ValueError):
            continue
        if all(abs(g - w) <= 1e-8 + ROPE_RTOL * abs(w) for g, w in zip(got, want, strict=True)):
            return
    raise no_match


def default_out(path: Path) -> Path:
    """The bundle folder beside a `.gguf` file; a file without the extension (Ollama's blobs are named
    sha256-…) has no sensible default beside it."""
    if path.suffix.lower() != ".gguf":
        raise GGUFGateError(f"{path}: the file's name does not end in .gguf, so there is no default bundle folder "
                            f"beside it; pass --out DIR")
    return path.with_suffix("")


# -------------------------------------------------------------------------------------------------- the CLI

FLAGS = ("--force",)  # the importer's options without a value (tests check against its parser)


def cli_arguments(argv: list[str]) -> tuple[str | None, str | None]:
    """(file, --out) as from_gguf's parser will read them, or (None, None) when unsure (help, no file)."""
    file = out = None
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            return None, None
        if a == "--":
            file = file or next(it, None)
            break
        if a.startswith("--out="):
            out = a[len("--out="):]
        elif a == "--out":
            out = next(it, None)
        elif a.startswith("-") and len(a) > 1:
            if "=" not in a and a not in FLAGS:
                next(it, None)
        elif file is None:
            file = a
    return file, out


def gate_cli(argv: list[str]) -> None:
    """`python -m pskills_train.export.from_gguf` runs this before torch loads: a refused file costs
    milliseconds and a few MB. Refusals are one `error:` line and exit status 1."""
    file, out = cli_arguments(argv)
    if file is None:
        return
    try:
        header = check_gguf(Path(file), importing=True)
        check_importable(header)
        own = any(a == "--chat-template" or a.startswith("--chat-template=") for a in argv)
        if not own and "tokenizer.chat_template" not in header.values:
            raise GGUFGateError(f"{file}: metadata key 'tokenizer.chat_template' missing; a base model without one "
                                f"needs --chat-template FILE")
        # The memory and disk the float32 model needs, without the train-step graphs' share (it needs the
        # parsed options): a lower bound of the importer's estimate, so a sparse file claiming a huge model is
        # refused here rather than after torch.
        q4 = "--weights=q4" in argv or any(a == "--weights" and b == "q4" for a, b in zip(argv, argv[1:], strict=False))
        check_resources(Path(file), Path(out) if out is not None else default_out(Path(file)), header.parameters(),
                        per_weight=MEMORY_PER_WEIGHT_BYTE_Q4 if q4 else MEMORY_PER_WEIGHT_BYTE)
    except GGUFGateError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
