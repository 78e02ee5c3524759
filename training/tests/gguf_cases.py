"""The crafted GGUF headers of tests/fixtures/gguf-gate-cases.json (shared with the Node gate), written as
files, and a child process that runs one file through a command and reports its wall time and peak RSS.
Used by test_gguf_gate.py and bench/gguf_gate.py."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CASES_FILE = ROOT / "tests" / "fixtures" / "gguf-gate-cases.json"
SRC = ROOT / "training" / "src"


def load_cases() -> dict[str, Any]:
    return json.loads(CASES_FILE.read_text())


def write_case(case: dict[str, Any], folder: Path) -> Path:
    """The case's file (or FIFO, link, folder) in `folder`."""
    path = folder / (str(case["name"]).replace("/", "_")[:80] + ".gguf")
    special = case.get("special")
    if special == "fifo":
        os.mkfifo(path)
    elif special == "devzero-link":
        path.symlink_to("/dev/zero")
    elif special == "folder":
        path.mkdir()
    elif special:
        raise ValueError(f"gguf-gate-cases.json: unknown special {special!r}")
    else:
        with open(path, "wb") as f:
            pos = 0
            for op, *args in case["fields"]:
                if op == "hole":
                    pos += int(args[0])
                    f.seek(pos)
                    continue
                if op == "ascii":
                    b = args[0].encode("ascii")
                elif op == "str":
                    raw = args[0].encode("utf-8")
                    b = struct.pack("<Q", len(raw)) + raw
                elif op == "zeros":
                    b = bytes(int(args[0]))
                elif op == "align":
                    b = bytes(-pos % int(args[0]))
                else:
                    code = {"u8": "B", "u32": "I", "i32": "i", "f32": "f", "u64": "Q"}[op]
                    b = struct.pack("<" + code, float(args[0]) if op == "f32" else int(args[0]))
                f.write(b)
                pos += len(b)
            f.truncate(pos + int(case.get("extend", 0)))
    return path


GATE_CHILD = """
import sys
from pathlib import Path
from pskills_train.export.gguf_gate import GGUFGateError, check_gguf
try:
    check_gguf(Path(sys.argv[1]))
    print("passed")
except GGUFGateError as e:
    print("refused: " + str(e))
"""


# Runs the command as its own child and writes that child's rusage: a child forked straight from pytest
# would start with pytest's resident pages (torch loaded) counted in its peak RSS.
LAUNCHER = """
import json, os, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
p.returncode = 0
with open(sys.argv[1], "w") as f:
    json.dump({"rc": os.waitstatus_to_exitcode(status), "seconds": time.monotonic() - t0,
               "rss_mb": usage.ru_maxrss / 1024}, f)
"""


def measure(argv: list[str], timeout: float = 60.0) -> dict[str, Any]:
    """Runs `argv` and returns its exit status, output (stdout and stderr), wall seconds and peak RSS in MB
    (os.wait4 in a small launcher); killed after `timeout` seconds (rc None)."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        log_path, usage_path = Path(tmp) / "log", Path(tmp) / "usage.json"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(usage_path), *argv], stdout=log,
                                    stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        output = log_path.read_text("utf-8", "replace")
        if not usage_path.exists():
            return {"rc": None, "output": output, "seconds": timeout, "rss_mb": None}
        return {**json.loads(usage_path.read_text()), "output": output}


def gate_in_child(path: Path) -> dict[str, Any]:
    return measure([sys.executable, "-c", GATE_CHILD, str(path)])


def write_model_header(path: Path, hidden: int, heads: int, kv_heads: int, ffn: int, layers: int, vocab: int,
                       rope_freqs: list[float] | None = None) -> Path:
    """A Llama GGUF whose metadata and tensor table are those of a real model of these sizes (every key the
    importer needs, every tensor with its shape, F16 weights), and whose data section is a hole: a sparse
    file of the model's apparent size that takes a few KB of disk. `rope_freqs`: Llama 3.1's RoPE factors,
    written as F32 data."""
    s = lambda t: struct.pack("<Q", len(t.encode())) + t.encode()  # noqa: E731
    tokens = ["<|end|>", *"abcdefg"]
    kv = [("general.architecture", 8, s("llama")), ("llama.block_count", 4, struct.pack("<I", layers)),
          ("llama.embedding_length", 4, struct.pack("<I", hidden)),
          ("llama.attention.head_count", 4, struct.pack("<I", heads)),
          ("llama.attention.head_count_kv", 4, struct.pack("<I", kv_heads)),
          ("llama.feed_forward_length", 4, struct.pack("<I", ffn)),
          ("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
          ("llama.rope.freq_base", 6, struct.pack("<f", 500000.0)),
          ("tokenizer.ggml.model", 8, s("gpt2")),
          ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(tokens)) + b"".join(s(t) for t in tokens)),
          ("tokenizer.ggml.merges", 9, struct.pack("<IQ", 8, 0)),
          ("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 0)),
          ("tokenizer.chat_template", 8, s("{{ messages }}"))]
    q, k = heads * (hidden // heads), kv_heads * (hidden // heads)
    tensors: list[tuple[str, tuple[int, ...], int]] = [("token_embd.weight", (hidden, vocab), 1),
                                                       ("output_norm.weight", (hidden,), 0),
                                                       ("output.weight", (hidden, vocab), 1)]
    for i in range(layers):
        tensors += [(f"blk.{i}.attn_norm.weight", (hidden,), 0), (f"blk.{i}.ffn_norm.weight", (hidden,), 0),
                    (f"blk.{i}.attn_q.weight", (hidden, q), 1), (f"blk.{i}.attn_k.weight", (hidden, k), 1),
                    (f"blk.{i}.attn_v.weight", (hidden, k), 1), (f"blk.{i}.attn_output.weight", (q, hidden), 1),
                    (f"blk.{i}.ffn_gate.weight", (hidden, ffn), 1), (f"blk.{i}.ffn_up.weight", (hidden, ffn), 1),
                    (f"blk.{i}.ffn_down.weight", (ffn, hidden), 1)]
    if rope_freqs is not None:
        tensors.insert(0, ("rope_freqs.weight", (len(rope_freqs),), 0))  # first: its data at the section's start
    table, offset = b"", 0
    for name, dims, ggml_type in tensors:
        table += s(name) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, ggml_type, offset)
        n = 1
        for d in dims:
            n *= d
        offset += -(-n * (4 if ggml_type == 0 else 2) // 32) * 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    head += b"".join(s(key) + struct.pack("<I", t) + raw for key, t, raw in kv) + table
    head += bytes(-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head)
        if rope_freqs is not None:
            f.write(struct.pack(f"<{len(rope_freqs)}f", *rope_freqs))
        f.truncate(len(head) + offset)
    return path
