"""Train the base model's byte-level BPE on the corpus's training split.

    python -m pskills_train.data.train_tokenizer --corpus DIR --out DIR [--vocab-size 8192]

Vocabulary size 8192, for the ~12.6 M parameter default model (d = 384; configs/README.md):
- the tied embedding costs V·d parameters: 8192 × 384 = 3.1 M, a quarter of the model; 16384
  would make it 6.3 M, 40 %, and leave too little for the layers;
- the output projection costs V·d multiply-adds per token, a quarter of the model's compute;
- measured on the held-out docs (skills): 4096 -> 8192 gives 12 % (14 %) more bytes per token,
  3.57 -> 4.00 (2.89 -> 3.30); 8192 -> 16384 only 7 % (13 %) more, while each token row would be
  updated half as often in a ~100 M token run.
Special tokens take ids 0..3: <|pad|>, <|endoftext|> (document separator), <|im_start|>,
<|im_end|> (chat template, tokenizer/chat.py).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tokenizers import Tokenizer

from ..tokenizer import tokenizer_config, train_bpe
from .shards import TRAIN_SPLITS, read_texts

DEFAULT_VOCAB = 8192
MAX_LENGTH = 2048  # model_max_length written into tokenizer_config.json


def bytes_per_token(tok: Tokenizer, texts: list[str]) -> float:
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_tokens = sum(len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False))
    return n_bytes / max(1, n_tokens)


def save(tok: Tokenizer, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=MAX_LENGTH)
    (out / "tokenizer_config.json").write_text(json.dumps(tcfg, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB)
    args = ap.parse_args(argv)
    t0 = time.time()
    tok = train_bpe(read_texts(args.corpus, TRAIN_SPLITS), args.vocab_size)
    save(tok, args.out)
    report = {"vocab_size": tok.get_vocab_size(), "train_seconds": round(time.time() - t0, 1)}
    for split in ("docs_val", "skills_val", "docs_train"):
        texts = list(read_texts(args.corpus, (split,)))[:2000]
        report[f"bytes_per_token_{split}"] = round(bytes_per_token(tok, texts), 3)
    (args.out / "tokenizer_report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
