"""The chat template (ChatML-like) and the tokenizer_config.json a bundle ships with it.

    <|im_start|>system\n{content}<|im_end|>\n<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n

The model ends its turn with <|im_end|>. Whitespace control (`-`) makes the rendering independent of
the jinja environment's trim_blocks/lstrip_blocks settings, so Python's jinja2 and the app's
@huggingface/jinja produce the same string.
"""

from __future__ import annotations

from typing import Any

from tokenizers import Tokenizer

CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- endif -%}"
)


def tokenizer_config(tok: Tokenizer, *, bos: str, eos: str, pad: str, max_length: int,
                     chat_template: str = CHAT_TEMPLATE) -> dict[str, Any]:
    """tokenizer_config.json in the shape transformers writes (so HF tools load it too)."""
    for name, token in (("bos", bos), ("eos", eos), ("pad", pad)):
        if tok.token_to_id(token) is None:
            raise ValueError(f"{name} token {token!r} is not in the vocabulary")
    added = {str(i): {"content": t.content, "lstrip": t.lstrip, "normalized": t.normalized, "rstrip": t.rstrip,
                      "single_word": t.single_word, "special": t.special}
             for i, t in sorted(tok.get_added_tokens_decoder().items())}
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "added_tokens_decoder": added,
        "bos_token": bos,
        "eos_token": eos,
        "pad_token": pad,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": max_length,
        "chat_template": chat_template,
    }
