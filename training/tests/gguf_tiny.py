"""Tiny random GGUF files written with gguf.GGUFWriter, laid out as llama.cpp's converter writes them
(Llama's q/k rows permuted for its interleaved RoPE, Qwen2's not), with quantized tensors, a byte-level
BPE tokenizer (hf_tiny's) and a ChatML template.

Variants: `llama` (Q8_0 attention, Q4_0 / Q4_1 MLP, F16 embedding, BF16 output), `qwen2` (q/k/v bias,
tied embedding, Q8_0 and F16) and `kquant` (Llama with Q4_K and Q6_K down projections: gguf-py cannot
quantize k-quants, so those blocks are random bytes with small float16 scales).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hf_tiny import CHATML, build_tokenizer  # beside this file: tests/ is on sys.path either way

HIDDEN, HEADS, KV_HEADS, LAYERS, CONTEXT = 64, 4, 2, 2, 256
HEAD_DIM = HIDDEN // HEADS
VOCAB = 320  # embedding rows; the tokenizer has fewer (as Qwen2.5's)
STD = 0.2  # large enough that the next-token distribution is peaked (clear greedy margins)
VARIANTS = ("llama", "qwen2", "kquant")


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp convert_hf_to_gguf.py LlamaModel.permute."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _kquant_bytes(qtype: Any, rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """Random blocks (types gguf-py cannot quantize); k-quants get small finite float16 super-block scales."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    block, size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, (rows, cols // block, size), dtype=np.uint8)
    d = np.full((rows, cols // block, 1), 2e-3, np.float16).view(np.uint8)
    if qtype == GGMLQuantizationType.Q4_K:  # d, dmin first
        raw[..., 0:2], raw[..., 2:4] = d, d
    elif qtype == GGMLQuantizationType.Q6_K:  # d last
        raw[..., size - 2:size] = d
    return raw.reshape(rows, cols // block * size)


def spm_vocab() -> tuple[list[str], list[float], list[int]]:
    """A SentencePiece-style BPE vocabulary as Llama 2 / Mistral GGUFs store it: <unk> <s> </s>, the 256
    byte pieces, characters, then merged pieces scored by merge order (earlier = higher)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    from hf_tiny import corpus

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never")  # training only: no piece spans words
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=120, show_progress=False))
    model = json.loads(tok.to_str())["model"]
    merged = ["".join(m if isinstance(m, list) else m.split(" ")) for m in model["merges"]]
    chars = [t for t in sorted(model["vocab"], key=model["vocab"].get) if t not in merged]
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)), *chars, *merged]
    scores = [0.0] * (3 + 256) + [-1e4 - i for i in range(len(chars))] + [-float(i) for i in range(len(merged))]
    types = [2, 3, 3] + [6] * 256 + [1] * (len(chars) + len(merged))
    return tokens, scores, types


def write_gguf(path: Path, variant: str = "llama", seed: int = 0, arch: str | None = None,
               tensor_type: dict[str, Any] | None = None, spm: bool = False,
               rope_freqs: np.ndarray | None = None, name: str | None = None, full_vocab: bool = False,
               all_f32: bool = False) -> Path:
    """Write a tiny GGUF; `arch` and `tensor_type` (name -> GGMLQuantizationType) override for bad-input tests,
    `spm` writes a SentencePiece tokenizer (Llama 2 / Mistral) instead, `rope_freqs` Llama 3.1's RoPE factors,
    `name` general.name (llama.cpp writes Mistral as architecture 'llama', told apart by the name),
    `full_vocab` one token per embedding row (unused fillers), as llama.cpp itself requires to load the file,
    `all_f32` every tensor F32 (llama.cpp then computes in float32, as the studio does: greedy tokens comparable)."""
    import gguf
    from gguf import GGMLQuantizationType as Q

    rng = np.random.default_rng(seed)
    qwen = variant == "qwen2"
    ffn = 256 if variant == "kquant" else 128
    tok = build_tokenizer()
    tj = json.loads(tok.to_str())
    vocab = sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in vocab] + [a["content"] for a in tj["added_tokens"]]
    assert [i for i, _ in enumerate(tokens)] == list(range(len(tokens)))
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    specials = {a["content"] for a in tj["added_tokens"]}
    types = [3 if t in specials else 1 for t in tokens]

    if spm:
        tokens, scores, types = spm_vocab()
    rows = max(VOCAB, len(tokens) + 16)
    if full_vocab:
        fill = rows - len(tokens)
        tokens, types = tokens + [f"<unused{i}>" for i in range(fill)], types + [5] * fill  # 5: UNUSED
        if spm:
            scores = scores + [0.0] * fill
    w = gguf.GGUFWriter(str(path), arch or ("qwen2" if qwen else "llama"))
    w.add_name(name or f"tiny-{variant}")
    w.add_context_length(CONTEXT)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(ffn)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1e6 if qwen else 1e4)
    if not qwen:
        w.add_rope_dimension_count(HEAD_DIM)
    if spm:
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        w.add_add_bos_token(True)
    else:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("qwen2" if qwen else "default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_eos_token_id(tokens.index("<|im_end|>"))
        w.add_pad_token_id(tokens.index("<|endoftext|>"))
        w.add_add_bos_token(False)
    w.add_chat_template(CHATML)

    def randn(*shape: int, std: float = STD) -> np.ndarray:
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def add(name: str, arr: np.ndarray, qtype: Any = Q.F32) -> None:
        qtype = Q.F32 if all_f32 else (tensor_type or {}).get(name, qtype)
        if qtype in (Q.Q4_K, Q.Q6_K, Q.Q8_1):
            w.add_tensor(name, _kquant_bytes(qtype, arr.shape[0], arr.shape[1], rng), raw_dtype=qtype)
        elif qtype in (Q.F32, Q.F16):
            w.add_tensor(name, arr.astype(np.float16 if qtype == Q.F16 else np.float32))
        else:
            w.add_tensor(name, gguf.quants.quantize(arr, qtype), raw_dtype=qtype)

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    add("token_embd.weight", randn(rows, HIDDEN), Q.F16)
    for i in range(LAYERS):
        p = f"blk.{i}."
        wq, wk = randn(q, HIDDEN), randn(kv, HIDDEN)
        if not qwen:
            wq, wk = _permute(wq, HEADS), _permute(wk, KV_HEADS)
        add(p + "attn_norm.weight", 1 + randn(HIDDEN, std=0.1))
        add(p + "attn_q.weight", wq, Q.Q8_0)
        add(p + "attn_k.weight", wk, Q.Q8_0)
        add(p + "attn_v.weight", randn(kv, HIDDEN), Q.Q8_0)
        if qwen:
            add(p + "attn_q.bias", randn(q, std=0.1))
            add(p + "attn_k.bias", randn(kv, std=0.1))
            add(p + "attn_v.bias", randn(kv, std=0.1))
        add(p + "attn_output.weight", randn(HIDDEN, q), Q.Q8_0)
        add(p + "ffn_norm.weight", 1 + randn(HIDDEN, std=0.1))
        add(p + "ffn_gate.weight", randn(ffn, HIDDEN), Q.F16 if qwen else Q.Q4_0)
        add(p + "ffn_up.weight", randn(ffn, HIDDEN), Q.F16 if qwen else Q.Q4_1)
        down = {"kquant": Q.Q4_K if i == 0 else Q.Q6_K, "qwen2": Q.Q8_0}.get(variant, Q.Q8_0)
        add(p + "ffn_down.weight", randn(HIDDEN, ffn), down)
    add("output_norm.weight", 1 + randn(HIDDEN, std=0.1))
    if rope_freqs is not None:
        add("rope_freqs.weight", rope_freqs.astype(np.float32))
    if not qwen:
        add("output.weight", randn(rows, HIDDEN), Q.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="write a tiny random GGUF (the TS suite's --from-gguf fixture)")
    ap.add_argument("--variant", choices=VARIANTS, default="llama")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--full-vocab", action="store_true", help="one token per embedding row (llama.cpp loads it)")
    ap.add_argument("--f32", action="store_true", help="every tensor F32")
    a = ap.parse_args()
    print(write_gguf(a.out, a.variant, full_vocab=a.full_vocab, all_f32=a.f32))
