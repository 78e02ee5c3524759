"""`xz -9` and `gzip -9` bits per byte of exactly the held-out text the pretraining evaluation scores.

    python -m pskills_train.train.compress_baseline --config training/configs/pretrain.json

The evaluation predicts the targets of the first `data.eval_windows` windows of each held-out split,
i.e. tokens [1, n·L] of its token file; their bytes are rebuilt from the byte-level vocabulary and
compressed. A model is worth its parameters when its bpb is well under these.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..data.token_memmap import _byte_decoder, build_token_files, load_tokens
from .config import PretrainConfig
from .pretrain import VAL_SPLITS


def token_texts(tok: Tokenizer) -> list[bytes]:
    """[V] the raw bytes behind each token id (b'' for special tokens)."""
    dec = _byte_decoder()
    special = {t.content for t in tok.get_added_tokens_decoder().values()}
    out = [b""] * tok.get_vocab_size()
    for piece, i in tok.get_vocab().items():
        if piece not in special:
            out[i] = bytes(dec[ch] for ch in piece)
    return out


def eval_bytes(tokens: np.ndarray, seq_len: int, windows: int, pieces: list[bytes]) -> bytes:
    n = min(windows, (len(tokens) - 1) // seq_len)
    return b"".join(pieces[int(t)] for t in tokens[1:n * seq_len + 1])


def compressed_bpb(data: bytes, cmd: list[str]) -> float:
    out = subprocess.run(cmd, input=data, capture_output=True, check=True).stdout
    return 8 * len(out) / max(1, len(data))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True, type=Path)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args(argv)
    cfg = PretrainConfig.load(args.config, args.set)
    tok_dir = cfg.data.path("tokens")
    build_token_files(cfg.data.path("corpus"), cfg.data.path("tokenizer"), tok_dir)
    pieces = token_texts(Tokenizer.from_file(str(cfg.data.path("tokenizer"))))
    report = {}
    for name in VAL_SPLITS:
        data = eval_bytes(load_tokens(tok_dir / f"{name}.bin"), cfg.data.seq_len, cfg.data.eval_windows, pieces)
        report[name] = {"bytes": len(data), "xz_9_bpb": round(compressed_bpb(data, ["xz", "-9", "-c"]), 4),
                        "gzip_9_bpb": round(compressed_bpb(data, ["gzip", "-9", "-c", "-n"]), 4)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
