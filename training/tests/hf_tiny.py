"""Tiny random Hugging Face checkpoints as a user's folder holds them: save_pretrained weights and config,
a byte-level BPE built with the tokenizers library (special tokens appended after the merges, as Qwen2's),
tokenizer_config.json and a ChatML template. Also a script: the TS suite makes its Qwen2 checkpoint and
the transformers oracle with it.

    python training/tests/hf_tiny.py --family qwen2 --out DIR --oracle FILE.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import torch

TOKENIZER_VOCAB = 300  # 256 bytes + merges + 3 special tokens
MODEL_VOCAB = 320  # the embedding is larger than the tokenizer, as Qwen2.5's (151,936 vs 151,665)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = ("{%- for message in messages -%}"
          "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
          "{%- endfor -%}"
          "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}")
BASE = dict(vocab_size=MODEL_VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-6,
            initializer_range=0.2)  # large enough that the next-token distribution is peaked
FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("LlamaConfig", {"tie_word_embeddings": False}),
    "qwen2": ("Qwen2Config", {"tie_word_embeddings": True, "rope_theta": 1000000.0}),  # q/k/v bias
    "mistral": ("MistralConfig", {"tie_word_embeddings": False, "sliding_window": None}),
}


def corpus(n: int = 400, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = "review the branch before merge check tests read each commit skill step apply rule answer".split()
    return [" ".join(rng.choice(words) for _ in range(12)) + "." for _ in range(n)]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=TOKENIZER_VOCAB - len(SPECIALS), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer)
    tok.add_special_tokens(SPECIALS)
    return tok


def save_checkpoint(family: str, out: Path, seed: int = 0):
    """Random model + tokenizer saved with save_pretrained into `out`; returns the transformers model."""
    import transformers

    tok = build_tokenizer()
    eos = tok.token_to_id("<|im_end|>")
    cls_name, extra = FAMILIES[family]
    cfg = getattr(transformers, cls_name)(**{**BASE, **extra}, eos_token_id=eos, bos_token_id=None)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    with torch.no_grad():  # HF zero-inits biases; make them matter
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    model.generation_config.eos_token_id = eos
    model.save_pretrained(out)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                                pad_token="<|endoftext|>", clean_up_tokenization_spaces=False)
    fast.chat_template = CHATML
    fast.save_pretrained(out)
    return model


@torch.no_grad()
def oracle(model, folder: Path, text: str, messages: list[dict[str, str]], new_tokens: int) -> dict[str, Any]:
    """transformers' logits of `text` and its greedy continuation of the rendered chat."""
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(folder)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    logits = model(input_ids=torch.tensor([ids])).logits[0]  # [s, V]
    chat = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    chat_ids = tok(chat, add_special_tokens=False)["input_ids"]
    gen = model.generate(torch.tensor([chat_ids]), max_new_tokens=new_tokens, do_sample=False,
                         output_scores=True, return_dict_in_generate=True)
    new = gen.sequences[0, len(chat_ids):].tolist()
    margins = [float(s[0].topk(2).values.diff().abs()) for s in gen.scores]
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    shown = new[:new.index(eos)] if eos in new else new
    return {"text": text, "ids": ids, "logits": logits.tolist(), "messages": messages, "chat_ids": chat_ids,
            "generated_ids": new, "generated_text": tok.decode(shown), "min_margin": min(margins),
            "finish": "eos" if eos in new else "length"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", choices=sorted(FAMILIES), default="qwen2")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--oracle", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    model = save_checkpoint(a.family, a.out, a.seed)
    if a.oracle:
        messages = [{"role": "user", "content": "review the branch before merge"}]
        a.oracle.write_text(json.dumps(oracle(model, a.out, "check tests read each commit.", messages, 12)))


if __name__ == "__main__":
    main()
