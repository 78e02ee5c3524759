"""The corpus tokenizer: byte-level roundtrip, special ids, byte table, uint16 token files."""

from __future__ import annotations

import json

import numpy as np
from tokenizers import Tokenizer

from pskills_train.data.shards import ShardWriter
from pskills_train.data.token_memmap import build_token_files, load_tokens, token_bytes
from pskills_train.data.train_tokenizer import bytes_per_token, save
from pskills_train.tokenizer import synthetic_corpus, train_bpe

TEXTS = ["Café naïve — 日本語 🙂\ttabs and  two spaces\n\nend", "<|im_start|>user\nhi<|im_end|>\n", "x" * 300]


def test_roundtrip_specials_and_byte_table(tmp_path):
    tok = train_bpe(synthetic_corpus(60_000), 400)
    save(tok, tmp_path)
    tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [tok.token_to_id(t) for t in ("<|pad|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>")] == [0, 1, 2, 3]
    cfg = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert (cfg["bos_token"], cfg["eos_token"], cfg["pad_token"]) == ("<|endoftext|>", "<|im_end|>", "<|pad|>")
    table = token_bytes(tok)
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids, skip_special_tokens=False) == text
        specials = text.count("<|im_start|>") * len("<|im_start|>") + text.count("<|im_end|>") * len("<|im_end|>")
        assert table[ids].sum() == len(text.encode("utf-8")) - specials
    assert tok.encode("<|im_start|>", add_special_tokens=False).ids == [2]
    assert bytes_per_token(tok, synthetic_corpus(5_000, seed=9)) > 2.0  # merges learned, not bytes


def test_token_files_separate_documents_and_rebuild_when_stale(tmp_path):
    corpus = tmp_path / "corpus"
    for split in ("docs_train", "skills_train", "docs_val", "skills_val"):
        w = ShardWriter(corpus, split, 1000)
        for i, text in enumerate(synthetic_corpus(2_000, seed=len(split))):
            w.write({"id": str(i), "text": text})
        w.close()
    (corpus / "manifest.json").write_text("{}")
    tok = train_bpe(synthetic_corpus(30_000), 300)
    tok.save(str(tmp_path / "tok.json"))
    meta = build_token_files(corpus, tmp_path / "tok.json", tmp_path / "tokens")
    train = load_tokens(tmp_path / "tokens/train.bin")
    assert train.dtype == np.uint16 and len(train) == meta["train"]["tokens"]
    docs = meta["train"]["documents"]
    assert int((train == tok.token_to_id("<|endoftext|>")).sum()) == docs and train[-1] == 1
    first = int(np.argmax(train == 1))  # end of the first document
    assert tok.decode(list(train[:first])) == next(iter(synthetic_corpus(2_000, seed=len("docs_train"))))
    (corpus / "manifest.json").write_text('{"changed": true}')
    (tmp_path / "tokens/train.bin").write_bytes(b"")
    assert build_token_files(corpus, tmp_path / "tok.json", tmp_path / "tokens")["train"] == meta["train"]
    assert len(load_tokens(tmp_path / "tokens/train.bin")) == meta["train"]["tokens"]
