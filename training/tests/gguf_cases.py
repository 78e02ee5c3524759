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
