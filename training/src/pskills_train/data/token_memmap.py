"""Corpus splits -> flat uint16 token files for pretraining (np.memmap), plus a byte-length table.

    <dir>/train.bin       docs_train + skills_train, each document followed by <|endoftext|>
    <dir>/docs_val.bin    held-out documentation packages
    <dir>/skills_val.bin  held-out skill packages
    <dir>/meta.json       token and byte counts, the tokenizer's sha256

A file is rebuilt only when the tokenizer or the corpus manifest changed (recorded in meta.json).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer
from tqdm import tqdm

from .shards import read_split

EOT = "<|endoftext|>"
OUTPUTS = {"train": ("docs_train", "skills_train"), "docs_val": ("docs_val",), "skills_val": ("skills_val",)}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def encode_splits(corpus: Path, tokenizer: Path, splits: tuple[str, ...], out: Path, batch: int = 512) -> dict:
    """Write `out` (uint16 tokens); returns {tokens, documents, bytes}."""
    tok = Tokenizer.from_file(str(tokenizer))
    if tok.get_vocab_size() > 65535:
        raise ValueError(f"{tokenizer}: vocab {tok.get_vocab_size()} does not fit uint16")
    eot = tok.token_to_id(EOT)
    if eot is None:
        raise ValueError(f"{tokenizer}: no {EOT} token")
    tmp = out.with_suffix(".tmp")
    stats = {"tokens": 0, "documents": 0, "bytes": 0}
    with open(tmp, "wb") as fh:
        texts: list[str] = []

        def flush() -> None:
            for enc in tok.encode_batch(texts, add_special_tokens=False):
                ids = np.asarray(enc.ids + [eot], dtype=np.uint16)  # [n + 1]
                fh.write(ids.tobytes())
                stats["tokens"] += len(ids)
            texts.clear()

        for split in splits:
            for rec in tqdm(read_split(corpus, split), desc=f"encode {split}", unit="doc", leave=False):
                texts.append(rec["text"])
                stats["documents"] += 1
                stats["bytes"] += len(rec["text"].encode("utf-8"))
                if len(texts) >= batch:
                    flush()
        flush()
    os.replace(tmp, out)
    return stats


def build_token_files(corpus: Path, tokenizer: Path, out_dir: Path) -> dict:
    """Encode every output that is missing or stale; returns meta.json's content."""
    out_dir.mkdir(parents=True, exist_ok=True)
    key = {"tokenizer_sha256": _sha(tokenizer), "manifest_sha256": _sha(corpus / "manifest.json")}
    meta_path = out_dir / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if {k: meta.get(k) for k in key} != key:
        meta = dict(key)
    for name, splits in OUTPUTS.items():
        if name not in meta or not (out_dir / f"{name}.bin").exists():
            meta[name] = encode_splits(corpus, tokenizer, splits, out_dir / f"{name}.bin")
            meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def load_tokens(path: Path) -> np.ndarray:
    return np.memmap(path, dtype=np.uint16, mode="r")


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet: printable stand-in character -> the byte it encodes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def token_bytes(tok: Tokenizer) -> np.ndarray:
    """[V] int64: UTF-8 bytes each token stands for; 0 for special tokens (they encode no text)."""
    dec = _byte_decoder()
    special = {t.content for t in tok.get_added_tokens_decoder().values()}
    out = np.zeros(tok.get_vocab_size(), dtype=np.int64)
    for piece, i in tok.get_vocab().items():
        if piece not in special:
            out[i] = sum(1 for ch in piece if ch in dec)
    return out
