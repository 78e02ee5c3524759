"""Byte-level BPE tokenizer of the default base model, and the chat template shipped with a bundle."""

from .bpe import SPECIAL_TOKENS, train_bpe
from .chat import CHAT_TEMPLATE, tokenizer_config
from .synthetic import synthetic_corpus

__all__ = ["SPECIAL_TOKENS", "train_bpe", "CHAT_TEMPLATE", "tokenizer_config", "synthetic_corpus"]
