"""A bundle from a GGUF file (llama.cpp, LM Studio, Ollama): `pskills bundle create --from-gguf`.

    python -m pskills_train.export.from_gguf FILE --out DIR [--dtype fp32|fp16] [--lora-targets …]
        [--encoder-layer K] [--chat-template FILE] [--id ID] [--force] [--weights fp32|q4]

The file's metadata gives the architecture (llama, qwen2; llama.cpp stores Mistral as llama), the
sizes, RoPE, the tokenizer (tokens, merges, pre-tokenizer) and the chat template; its tensors are
dequantized to float32 with the `gguf` package (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and the
k-quants Q2_K … Q6_K), mapped onto LlamaLM by llama.cpp's tensor names and written by the same writer
as `--from-hf` (bundle_writer.write_loaded_bundle): lm.onnx, tokenizer.json, tokenizer_config.json,
train_step graphs, no hypernetwork. The file is checked before any weight is read: every tensor
must lie inside it, have a supported type and the shape the metadata implies, and the machine must
have the memory and disk the float32 model needs. `--weights q4` then requantizes lm.onnx's MatMul
weights to 4 bits (lm_q4.py; layered train-step graphs train on them, whole ones keep float32 weights).
"""

# ruff: noqa: E402 -- the gate below runs before torch and gguf load
from __future__ import annotations

import sys

if __name__ == "__main__":  # refuse a bad file in milliseconds, before torch loads (gguf_gate.py)
    from .gguf_gate import gate_cli

    gate_cli(sys.argv[1:])

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gguf import GGUFReader
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize as gguf_dequantize
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

from ..model import LlamaLM
from ..model.config import ModelConfig
from ..model.layers import rope_inv_freq
from .bundle_writer import (
    DTYPES,
    LAYERED,
    FromHfOptions,
    LoadedBase,
    add_bundle_args,
    options_from_args,
    progress,
    run_build,
    write_loaded_bundle,
)
from .gguf_gate import GGUFGateError, check_gguf, check_importable, default_out
from .gguf_resources import (
    MEMORY_PER_LOGIT,
    MEMORY_PER_LOGIT_LAYERED,
    MEMORY_PER_WEIGHT_BYTE,
    MEMORY_PER_WEIGHT_BYTE_Q4,
    check_resources,
)
from .staging import check_replaceable

ARCHITECTURES = ("llama", "qwen2")
# Types whose dequantization the gguf package implements and tests/test_from_gguf.py checks.
SUPPORTED_TYPES = ("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
                   "Q6_K")

# llama.cpp's tensor names (gguf-py tensor_mapping) -> LlamaLM's (= Hugging Face's) names.
_GLOBAL = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
           "output.weight": "lm_head.weight"}
_LAYER = {"attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
          "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
          "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
          "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
          "attn_v.bias": "self_attn.v_proj.bias", "attn_output.bias": "self_attn.o_proj.bias",
          "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
          "ffn_down.weight": "mlp.down_proj.weight"}

# Pre-tokenizer splits by `tokenizer.ggml.pre` (llama.cpp's names; regexes from the models' tokenizer.json).
_LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
_QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
PRE_TOKENIZERS = ("default", "gpt2", "smollm", "llama-bpe", "llama3", "qwen2")


# A file the importer refuses; the message names the file and the key or tensor. One class with the gate's, so
# that a refusal reads the same whichever of the two (before or after torch) makes it.
GGUFError = GGUFGateError


# --------------------------------------------------------------------------------------------------
# reading


def _open_reader(path: Path) -> Any:
    """gguf.GGUFReader on a file the gate passed (gguf_gate.py: every length bounded, every tensor inside the
    file, a tensor table of a model this importer builds). The metadata comes from the gate, decoded when
    asked; GGUFReader builds the tensor table only."""
    header = check_gguf(path, importing=True)
    check_importable(header)
    size = header.size

    class Reader(GGUFReader):
        reading = "the tensor table"

        def _build_fields(self, offs: int, count: int) -> int:
            self.alignment = header.alignment  # general.alignment, checked by the gate (any integer type)
            return header.metadata_end

        def _build_tensors(self, start_offs: int, fields: list[Any]) -> None:
            for f in fields:  # the gate checked this already; kept as GGUFReader's own numbers
                name = bytes(f.parts[1]).decode("utf-8", "replace")
                self.reading = f"tensor {name!r}"
                qtype = GGMLQuantizationType(int(f.parts[4][0]))
                block, type_size = GGML_QUANT_SIZES[qtype]
                end = start_offs + int(f.parts[5][0]) + int(np.prod(f.parts[3])) * type_size // block
                if end > size:
                    raise GGUFError(f"{path}: truncated: tensor {name!r} ends at byte {end:,}, the file has "
                                    f"{size:,} bytes")
            super()._build_tensors(start_offs, fields)

    reader: Any = None
    try:
        reader = Reader.__new__(Reader)
        Reader.__init__(reader, header.real)
    except GGUFError:
        raise
    except Exception as e:  # the gguf package's own errors say little about where: add it
        where = getattr(reader, "reading", "the header")
        raise GGUFError(f"{path}: truncated or corrupt in {where} ({type(e).__name__}: {e})") from None
    reader.fields = header.fields()
    return reader


@dataclass
class Meta:
    path: Path
    fields: dict[str, Any]
    arch: str

    def get(self, key: str, default: Any = None) -> Any:
        f = self.fields.get(key.replace("{arch}", self.arch))
        return default if f is None else f.contents()

    def need(self, key: str) -> Any:
        key = key.replace("{arch}", self.arch)
        if key not in self.fields:
            raise GGUFError(f"{self.path}: metadata key {key!r} missing")
        return self.fields[key].contents()


def read_meta(reader: Any, path: Path) -> Meta:
    fields = dict(reader.fields)
    if "general.architecture" not in fields:
        raise GGUFError(f"{path}: metadata key 'general.architecture' missing")
    arch = fields["general.architecture"].contents()
    if arch not in ARCHITECTURES:
        raise GGUFError(f"{path}: general.architecture {arch!r} is not supported (supported: "
                        f"{', '.join(ARCHITECTURES)}; Mistral files are 'llama')")
    return Meta(path, fields, arch)


def _llama3_rope(meta: Meta, cfg: ModelConfig, factors: np.ndarray) -> dict[str, Any]:
    """llama.cpp stores Llama 3.1's RoPE scaling as per-frequency divisors (`rope_freqs.weight`), not as
    parameters: find the `llama3` parameters that give exactly those divisors, or refuse."""
    orig = meta.get("{arch}.rope.scaling.original_context_length", 8192)
    base = rope_inv_freq(cfg).numpy()
    factor = float(factors.max())
    for lo, hi, ctx in [(1.0, 4.0, orig), (1.0, 4.0, 8192)]:
        sc = {"rope_type": "llama3", "factor": factor, "low_freq_factor": lo, "high_freq_factor": hi,
              "original_max_position_embeddings": int(ctx)}
        got = base / rope_inv_freq(ModelConfig(**{**cfg.to_dict(), "rope_scaling": sc})).numpy()
        if got.shape == factors.shape and np.allclose(got, factors, rtol=1e-4):
            return sc
    raise GGUFError(f"{meta.path}: tensor 'rope_freqs.weight' holds RoPE factors that match no llama3 scaling")


def _f32(x: float) -> float:
    """A float32 metadata value as the decimal it was written from (1e-05, not 9.999999747378752e-06)."""
    return float(str(np.float32(x)))


def config_from_gguf(meta: Meta, tensors: dict[str, Any], opts: FromHfOptions) -> ModelConfig:
    """ModelConfig from the metadata, with shapes taken from the tensors where the metadata may omit them."""
    if "token_embd.weight" not in tensors:
        raise GGUFError(f"{meta.path}: tensor 'token_embd.weight' missing")
    hidden = int(meta.need("{arch}.embedding_length"))
    heads = int(meta.need("{arch}.attention.head_count"))
    kv = meta.get("{arch}.attention.head_count_kv", heads)
    if isinstance(kv, list):
        raise GGUFError(f"{meta.path}: {meta.arch}.attention.head_count_kv varies by layer, which is not supported")
    head_dim = int(meta.get("{arch}.attention.key_length", 0) or meta.get("{arch}.rope.dimension_count", 0)
                   or hidden // heads)
    vocab = int(tensors["token_embd.weight"].shape[1])  # ggml order: [hidden, vocab]
    scaling_type = meta.get("{arch}.rope.scaling.type", "none")
    scaling: dict[str, Any] | None = None
    if scaling_type == "linear":
        scaling = {"rope_type": "linear", "factor": float(meta.need("{arch}.rope.scaling.factor"))}
    elif scaling_type not in ("none", None):
        raise GGUFError(f"{meta.path}: {meta.arch}.rope.scaling.type {scaling_type!r} is not supported "
                        f"(none, linear, and llama3 as rope_freqs.weight)")
    name = str(meta.get("general.name", "") or meta.get("general.basename", ""))
    family = "qwen2" if meta.arch == "qwen2" else "mistral" if re.search("mistral", name, re.I) else "llama"
    cfg = ModelConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_layers=int(meta.need("{arch}.block_count")),
        num_heads=heads,
        num_kv_heads=int(kv),
        head_dim=head_dim,
        intermediate_size=int(meta.need("{arch}.feed_forward_length")),
        rms_eps=_f32(meta.need("{arch}.attention.layer_norm_rms_epsilon")),
        rope_theta=_f32(meta.get("{arch}.rope.freq_base", 10000.0)),
        rope_scaling=scaling,
        max_positions=int(meta.get("{arch}.context_length", 2048)),
        tie_embeddings="output.weight" not in tensors,
        qkv_bias="blk.0.attn_q.bias" in tensors,
        o_bias="blk.0.attn_output.bias" in tensors,
        sliding_window=None,  # llama.cpp runs every family with full causal attention
        family=family,
        encoder_layer=opts.encoder_layer,
        lora_targets=opts.lora_targets,
    )
    if "rope_freqs.weight" in tensors:
        factors = np.asarray(dequantize(meta.path, tensors["rope_freqs.weight"]), np.float32)
        cfg = ModelConfig(**{**cfg.to_dict(), "rope_scaling": _llama3_rope(meta, cfg, factors)})
    return cfg


def dequantize(path: Path, t: Any) -> np.ndarray:
    """A tensor as float32 in numpy (row-major) order, i.e. ggml's dims reversed."""
    if t.tensor_type.name not in SUPPORTED_TYPES:
        raise GGUFError(f"{path}: tensor {t.name!r} has quantization type {t.tensor_type.name}, which is not "
                        f"supported (supported: {', '.join(SUPPORTED_TYPES)})")
    out = gguf_dequantize(t.data, t.tensor_type).astype(np.float32, copy=False)
    return out.reshape(tuple(int(d) for d in reversed(t.shape.tolist())))


def _unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's converter reorders Llama's q/k rows for its interleaved RoPE; undo it (HF's layout)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def check_tensors(meta: Meta, tensors: dict[str, Any], cfg: ModelConfig) -> None:
    """Every tensor LlamaLM needs is present with a supported type and its shape; nothing unknown."""
    with torch.device("meta"):
        want = {k: tuple(p.shape) for k, p in LlamaLM(cfg).state_dict().items()}
    if cfg.tie_embeddings:
        want.pop("lm_head.weight")
    seen: set[str] = set()
    for name, t in tensors.items():
        if name == "rope_freqs.weight":
            continue
        hf = hf_name(name)
        if hf is None or hf not in want:
            raise GGUFError(f"{meta.path}: tensor {name!r} is not part of a {meta.arch} model this importer "
                            f"builds ({cfg.num_layers} layers)")
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        if shape != want[hf]:
            raise GGUFError(f"{meta.path}: tensor {name!r} has shape {shape}, the metadata implies {want[hf]}")
        if t.tensor_type.name not in SUPPORTED_TYPES:
            raise GGUFError(f"{meta.path}: tensor {name!r} has quantization type {t.tensor_type.name}, which is "
                            f"not supported (supported: {', '.join(SUPPORTED_TYPES)})")
        seen.add(hf)
    missing = sorted(set(want) - seen)
    if missing:
        gg = {v: k for k, v in _GLOBAL.items()}
        first = gg.get(missing[0]) or re.sub(r"^model\.layers\.(\d+)\.(.*)$",
                                             lambda m: f"blk.{m[1]}." + {v: k for k, v in _LAYER.items()}[m[2]],
                                             missing[0])
        raise GGUFError(f"{meta.path}: tensor {first!r} missing ({len(missing)} of {len(want)} missing)")


def hf_name(name: str) -> str | None:
    if name in _GLOBAL:
        return _GLOBAL[name]
    m = re.fullmatch(r"blk\.(\d+)\.(.+)", name)
    if m and m[2] in _LAYER:
        return f"model.layers.{m[1]}.{_LAYER[m[2]]}"
    return None


def build_lm(meta: Meta, tensors: dict[str, Any], cfg: ModelConfig) -> LlamaLM:
    state: dict[str, torch.Tensor] = {}
    for name, t in tensors.items():
        hf = hf_name(name)
        if hf is None:
            continue
        w = dequantize(meta.path, t)
        if meta.arch == "llama" and name.endswith(("attn_q.weight", "attn_q.bias")):
            w = _unpermute(w, cfg.num_heads)
        elif meta.arch == "llama" and name.endswith(("attn_k.weight", "attn_k.bias")):
            w = _unpermute(w, cfg.num_kv_heads)
        state[hf] = torch.from_numpy(np.array(w, np.float32, order="C"))  # a copy: the file is mapped read-only
    with torch.device("meta"):
        lm = LlamaLM(cfg)
    lm.load_state_dict(state, strict=False, assign=True)
    if cfg.tie_embeddings:  # assign=True replaced embed_tokens' Parameter: tie lm_head to the new one
        lm.lm_head.weight = lm.model.embed_tokens.weight
    return lm.eval()


# --------------------------------------------------------------------------------------------------
# tokenizer

TOKEN_CONTROL, TOKEN_USER_DEFINED = 3, 4  # llama.cpp's token types


def _bpe_tokenizer(meta: Meta, tokens: list[str]) -> Tokenizer:
    """Byte-level BPE (`tokenizer.ggml.model` gpt2): vocab and merges as stored, pre-tokenizer by name."""
    merges = meta.need("tokenizer.ggml.merges")
    pre = meta.get("tokenizer.ggml.pre", "default")
    if pre not in PRE_TOKENIZERS:
        raise GGUFError(f"{meta.path}: tokenizer.ggml.pre {pre!r} is not supported (supported: "
                        f"{', '.join(PRE_TOKENIZERS)})")
    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab, pairs, ignore_merges=pre in ("llama-bpe", "llama3")))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)
    if pre in ("llama-bpe", "llama3", "qwen2"):
        split = pre_tokenizers.Split(Regex(_QWEN2_SPLIT if pre == "qwen2" else _LLAMA3_SPLIT), behavior="isolated")
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            split, pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    elif pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = byte_level
    if pre == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    return tok


def _spm_tokenizer(meta: Meta, tokens: list[str]) -> Tokenizer:
    """SentencePiece BPE (`tokenizer.ggml.model` llama: Llama 2, Mistral): merges rebuilt from the scores,
    as Hugging Face's converter does, byte fallback for unknown bytes."""
    scores = meta.need("tokenizer.ggml.scores")
    vocab = {t: i for i, t in enumerate(tokens)}
    merges: list[tuple[float, int, int, str, str]] = []
    for piece, i in vocab.items():
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in vocab and right in vocab:
                merges.append((-float(scores[i]), vocab[left], vocab[right], left, right))
    merges.sort()
    unk = meta.get("tokenizer.ggml.unknown_token_id")
    tok = Tokenizer(models.BPE(vocab, [(m[3], m[4]) for m in merges], unk_token=None if unk is None else tokens[unk],
                               fuse_unk=True, byte_fallback=True))
    if meta.get("tokenizer.ggml.add_space_prefix", True):
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        strip = [decoders.Strip(" ", 1, 0)]
    else:
        tok.normalizer = normalizers.Replace(" ", "▁")
        strip = []
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), *strip])
    return tok


def tokenizer_from_gguf(meta: Meta, vocab_rows: int, chat_template: str | None) -> tuple[
        Tokenizer, dict[str, Any], dict[str, Any]]:
    """(tokenizer, tokenizer_config.json, special ids) from the `tokenizer.*` metadata."""
    kind = meta.need("tokenizer.ggml.model")
    tokens = meta.need("tokenizer.ggml.tokens")
    if len(tokens) > vocab_rows:
        raise GGUFError(f"{meta.path}: tokenizer.ggml.tokens has {len(tokens)} tokens, more than the "
                        f"{vocab_rows} rows of token_embd.weight")
    if kind == "gpt2":
        tok = _bpe_tokenizer(meta, tokens)
    elif kind == "llama":
        tok = _spm_tokenizer(meta, tokens)
    else:
        raise GGUFError(f"{meta.path}: tokenizer.ggml.model {kind!r} is not supported (gpt2, llama)")
    types = meta.get("tokenizer.ggml.token_type") or []
    tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False)
                            for i, t in enumerate(types) if t == TOKEN_CONTROL])
    tok.add_tokens([AddedToken(tokens[i], special=False, normalized=False)
                    for i, t in enumerate(types) if t == TOKEN_USER_DEFINED])
    if tok.get_vocab_size() != len(tokens):
        raise GGUFError(f"{meta.path}: tokenizer.ggml.tokens has {len(tokens)} tokens but the rebuilt tokenizer "
                        f"has {tok.get_vocab_size()} (duplicate tokens?)")

    def tid(key: str) -> int | None:
        v = meta.get(key)
        if v is None:
            return None
        if not 0 <= int(v) < len(tokens):
            raise GGUFError(f"{meta.path}: {key} = {v} is outside the {len(tokens)} tokens")
        return int(v)

    eos = tid("tokenizer.ggml.eos_token_id")
    if eos is None:
        raise GGUFError(f"{meta.path}: metadata key 'tokenizer.ggml.eos_token_id' missing")
    bos, pad = tid("tokenizer.ggml.bos_token_id"), tid("tokenizer.ggml.padding_token_id")
    stop = [eos]
    extra = [tid("tokenizer.ggml.eot_token_id"), tid("tokenizer.ggml.eom_token_id"),
             *(tok.token_to_id(t) for t in ("<|im_end|>", "<|eot_id|>", "<|endoftext|>"))]
    stop += [i for i in extra if i is not None and i not in stop]
    template = chat_template if chat_template is not None else meta.get("tokenizer.chat_template")
    if not isinstance(template, str):
        raise GGUFError(f"{meta.path}: metadata key 'tokenizer.chat_template' missing; a base model without one "
                        f"needs --chat-template FILE")
    tcfg: dict[str, Any] = {"chat_template": template, "eos_token": tokens[eos],
                            "bos_token": None if bos is None else tokens[bos],
                            "pad_token": tokens[eos if pad is None else pad],
                            "add_bos_token": bool(meta.get("tokenizer.ggml.add_bos_token", False)),
                            "clean_up_tokenization_spaces": False,
                            "model_max_length": int(meta.get("{arch}.context_length", 2048))}
    special = {"bos": bos, "eos": eos, "pad": eos if pad is None else pad, "stop": stop}
    return tok, tcfg, special


# --------------------------------------------------------------------------------------------------
# resources


def train_logits(opts: FromHfOptions) -> int:
    """b·s of the bucket whose [b, s, vocab] tensors the train-step export holds: the largest for whole
    graphs (traced on real tensors); the smallest for layered ones, whose head is traced on fake tensors and
    whose only full-vocabulary tensors are torch's reference steps in the parity check (smallest bucket)."""
    sizes = [b * n for b, n in opts.train_buckets]
    if not sizes:
        return 0
    return min(sizes) if opts.train_kind == LAYERED else max(sizes)


# --------------------------------------------------------------------------------------------------


def source_card(path: Path, meta: Meta, lm: LlamaLM, tensors: dict[str, Any], opts: FromHfOptions) -> dict[str, Any]:
    types: dict[str, int] = {}
    for t in tensors.values():
        types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    file_type = meta.get("general.file_type")
    # source_path: where the GGUF was, for an Ollama Modelfile's FROM (docs/guide.md "Back to llama.cpp,
    # Ollama and LM Studio").
    return {"kind": "gguf", "source": path.name, "source_path": str(path.resolve()),
            "source_bytes": path.stat().st_size,
            "gguf": {"architecture": meta.arch, "name": meta.get("general.name"), "file_type": file_type,
                     "tensor_types": dict(sorted(types.items())),
                     "tokenizer": meta.get("tokenizer.ggml.model"), "pre": meta.get("tokenizer.ggml.pre")},
            "model": lm.cfg.to_dict(), "dtype": opts.dtype, "parameters": lm.num_params(), "steps": 0, "data": [],
            "dequantized": "float32, gguf.quants.dequantize", **opts.extra_card}


def load_gguf(path: Path, out: Path, opts: FromHfOptions, check_space: bool = True) -> LoadedBase:
    reader = _open_reader(path)
    meta = read_meta(reader, path)
    tensors = {t.name: t for t in reader.tensors}
    cfg = config_from_gguf(meta, tensors, opts)
    check_tensors(meta, tensors, cfg)
    n_params = sum(int(t.n_elements) for n, t in tensors.items() if n != "rope_freqs.weight")
    if check_space:
        per_logit = MEMORY_PER_LOGIT_LAYERED if opts.train_kind == LAYERED else MEMORY_PER_LOGIT
        per_weight = MEMORY_PER_WEIGHT_BYTE_Q4 if opts.weights == "q4" else MEMORY_PER_WEIGHT_BYTE
        check_resources(path, out, n_params, train_logits(opts) * cfg.vocab_size, per_logit=per_logit,
                        per_weight=per_weight)
    tok, tcfg, special = tokenizer_from_gguf(meta, cfg.vocab_size, opts.chat_template)
    lm = build_lm(meta, tensors, cfg)
    return LoadedBase(lm=lm, tokenizer_json=tok.to_str(pretty=True).encode("utf-8"), tokenizer_config=tcfg,
                      special=special, card=source_card(path, meta, lm, tensors, opts),
                      default_id=re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-") or "gguf")


def write_gguf_bundle(path: Path, out: Path, opts: FromHfOptions) -> Path:
    if opts.dtype not in DTYPES:
        raise ValueError(f"--dtype: {opts.dtype!r} is not one of {DTYPES}")
    check_replaceable(out, opts.force)  # before minutes of dequantizing
    progress(1, opts.steps, f"reading and dequantizing {path.name}")
    return write_loaded_bundle(load_gguf(path, out, opts), out, opts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.from_gguf", description=__doc__.split("\n")[0])
    ap.add_argument("gguf", type=Path, help="a .gguf file (Llama, Qwen2, Mistral)")
    ap.add_argument("--out", type=Path, help="bundle folder (default: the file's name without .gguf, beside it)")
    add_bundle_args(ap, "the file")
    a = ap.parse_args(argv)
    opts = options_from_args(ap, a)
    return run_build(lambda: write_gguf_bundle(a.gguf, a.out or default_out(a.gguf), opts), a.dtype, lambda m: (
        f"{m['architecture']['family']} from {a.gguf.name} ({', '.join(m['training_card']['gguf']['tensor_types'])})"))


if __name__ == "__main__":
    sys.exit(main())
