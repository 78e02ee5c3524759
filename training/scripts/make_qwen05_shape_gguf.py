"""Write a random-weight GGUF of Qwen2.5-0.5B's shape, for the distillation scale bench (nothing downloaded).

    training/.venv/bin/python training/scripts/make_qwen05_shape_gguf.py --out /tmp/qwen05-shape.gguf [--seed 0]

Shape as Qwen2.5-0.5B-Instruct's config: hidden 896, 24 layers, MLP 4864, 14 query and 2 key-value heads
(head dim 64), q/k/v biases, tied embeddings, RoPE theta 1e6, RMS eps 1e-6, vocabulary rows 151,936;
494 M parameters. Matrices are float16 (normal, std 0.02), norms and biases float32, as llama.cpp's
converter lays out a Qwen2 file (no q/k row permutation). The tokenizer is a small byte-level BPE trained
here on a few sentences, with Qwen2's special tokens and ChatML template; the embedding keeps all
151,936 rows (as Qwen2.5's keeps more rows than its tokenizer has). Tensors are written one at a time, so
writing holds one matrix, not the model.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

HIDDEN, LAYERS, FFN, VOCAB, HEADS, KV_HEADS, CONTEXT = 896, 24, 4864, 151_936, 14, 2, 32_768
HEAD_DIM = HIDDEN // HEADS
STD = 0.02
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A skill is a short text that tells the model how to answer a kind of question.",
    "Distillation moves what a prompt teaches into the weights of a small adapter.",
    "Numbers like 12, 345 and 6789 appear in questions and answers alike.",
    "def add(a, b):\n    return a + b\n",
] * 20


def tokenizer() -> tuple[list[str], list[str], list[int]]:
    """(tokens, merges, token types) of a byte-level BPE with the specials last."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=[], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    model = json.loads(tok.to_str())["model"]
    tokens = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])] + SPECIALS
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, merges, [1] * (len(tokens) - len(SPECIALS)) + [3] * len(SPECIALS)


def tensors() -> list[tuple[str, tuple[int, ...], str]]:
    """(name, numpy shape, kind) in file order; kind: matrix (float16), norm or bias (float32)."""
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    out = [("token_embd.weight", (VOCAB, HIDDEN), "matrix")]
    for i in range(LAYERS):
        p = f"blk.{i}."
        out += [(p + "attn_norm.weight", (HIDDEN,), "norm"), (p + "attn_q.weight", (q, HIDDEN), "matrix"),
                (p + "attn_k.weight", (kv, HIDDEN), "matrix"), (p + "attn_v.weight", (kv, HIDDEN), "matrix"),
                (p + "attn_q.bias", (q,), "bias"), (p + "attn_k.bias", (kv,), "bias"),
                (p + "attn_v.bias", (kv,), "bias"),
                (p + "attn_output.weight", (HIDDEN, q), "matrix"), (p + "ffn_norm.weight", (HIDDEN,), "norm"),
                (p + "ffn_gate.weight", (FFN, HIDDEN), "matrix"), (p + "ffn_up.weight", (FFN, HIDDEN), "matrix"),
                (p + "ffn_down.weight", (HIDDEN, FFN), "matrix")]
    return [*out, ("output_norm.weight", (HIDDEN,), "norm")]


def make(kind: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if kind == "matrix":
        return (rng.standard_normal(shape, dtype=np.float32) * STD).astype(np.float16)
    if kind == "norm":
        return (1 + 0.1 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
    return (0.1 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)


def write(path: Path, seed: int = 0) -> int:
    """Write the file; returns the parameter count."""
    import gguf

    tokens, merges, types = tokenizer()
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name("qwen2.5-0.5b-shape-random")
    w.add_context_length(CONTEXT)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1e6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(tokens.index("<|im_end|>"))
    w.add_pad_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML)
    specs = tensors()
    for name, shape, kind in specs:
        dtype = np.dtype(np.float16 if kind == "matrix" else np.float32)
        w.add_tensor_info(name, shape, dtype, int(np.prod(shape)) * dtype.itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    rng = np.random.default_rng(seed)
    for _, shape, kind in specs:
        w.write_tensor_data(make(kind, shape, rng))
    w.close()
    return sum(int(np.prod(s)) for _, s, _ in specs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    n = write(a.out, a.seed)
    print(f"{a.out}: {n / 1e6:.1f} M parameters, {a.out.stat().st_size / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
