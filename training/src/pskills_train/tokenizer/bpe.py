"""Train a byte-level BPE (GPT-2 style) with Hugging Face `tokenizers`.

Byte-level means every string encodes (no unknown token) and decoding is exact. The pipeline is
kept to parts the app's tokenizer (@huggingface/tokenizers in TypeScript) reproduces id for id:
ByteLevel pre-tokenizer with its regex, BPE model, ByteLevel decoder, no normalizer, and no
post-processor (BOS is never added implicitly; the chat template writes what the model sees).
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

# Ids 0..3 in this order, so every tokenizer we train agrees on them.
SPECIAL_TOKENS: tuple[str, ...] = ("<|pad|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>")


def train_bpe(texts: Iterable[str], vocab_size: int, special_tokens: Iterable[str] = SPECIAL_TOKENS) -> Tokenizer:
    """A byte-level BPE with `special_tokens` first (ids 0, 1, ...), then the 256 bytes, then merges.

    `vocab_size` is an upper bound: a small corpus runs out of pairs to merge before reaching it.
    """
    specials = list(special_tokens)
    if vocab_size < len(specials) + 256:
        raise ValueError(f"vocab_size {vocab_size} < {len(specials)} special tokens + 256 bytes")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    return tok
