"""Load Hugging Face Llama / Qwen2 / Mistral checkpoints (config.json + safetensors) into LlamaLM.

Reads `model.safetensors` or a sharded `model.safetensors.index.json`; key names are HF's own, so
no renaming happens, only checks: every parameter present with the right shape, nothing left over
(except buffers HF used to save, like rotary inv_freq). `save_hf` writes the same format back, so
our own base model can be served by anything that reads HF checkpoints.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from .config import ModelConfig
from .llama import LlamaLM

_FAMILY = {"llama": "llama", "qwen2": "qwen2", "mistral": "mistral"}
_ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mistral": "MistralForCausalLM"}
_IGNORED_SUFFIXES = ("rotary_emb.inv_freq",)


def _rope(hf: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """(theta, scaling) from either transformers>=5 `rope_parameters` or older `rope_theta`/`rope_scaling`."""
    params = dict(hf.get("rope_parameters") or {})
    legacy = dict(hf.get("rope_scaling") or {})
    theta = float(params.pop("rope_theta", hf.get("rope_theta", 10000.0)))
    scaling = params or legacy
    if "type" in scaling and "rope_type" not in scaling:  # pre-4.45 spelling
        scaling["rope_type"] = scaling.pop("type")
    if scaling.get("rope_type", "default") == "default":
        return theta, None
    return theta, scaling


def config_from_hf(hf: dict[str, Any], path: str = "config.json") -> ModelConfig:
    """Map an HF config.json dict onto ModelConfig, refusing what the model cannot compute."""
    mt = hf.get("model_type")
    if mt not in _FAMILY:
        raise ValueError(f"{path}: model_type {mt!r} not supported (supported: {sorted(_FAMILY)})")
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"{path}: hidden_act {hf['hidden_act']!r} not supported (only silu)")
    if hf.get("mlp_bias"):
        raise ValueError(f"{path}: mlp_bias=true is not supported")
    if mt == "qwen2" and hf.get("use_sliding_window"):
        raise ValueError(f"{path}: Qwen2 use_sliding_window=true is not supported")
    heads = hf["num_attention_heads"]
    theta, scaling = _rope(hf)
    attn_bias = bool(hf.get("attention_bias", False))
    return ModelConfig(
        vocab_size=hf["vocab_size"],
        hidden_size=hf["hidden_size"],
        num_layers=hf["num_hidden_layers"],
        num_heads=heads,
        num_kv_heads=hf.get("num_key_value_heads") or heads,
        head_dim=hf.get("head_dim") or hf["hidden_size"] // heads,
        intermediate_size=hf["intermediate_size"],
        rms_eps=hf.get("rms_norm_eps", 1e-6),
        rope_theta=theta,
        rope_scaling=scaling,
        max_positions=hf.get("max_position_embeddings", 2048),
        tie_embeddings=bool(hf.get("tie_word_embeddings", False)),
        qkv_bias=(mt == "qwen2") or attn_bias,
        o_bias=attn_bias,
        sliding_window=hf.get("sliding_window") if mt == "mistral" else None,
        family=_FAMILY[mt],
        extra={k: hf[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id", "torch_dtype", "dtype") if k in hf},
    )


def config_to_hf(cfg: ModelConfig) -> dict[str, Any]:
    rope: dict[str, Any] = {"rope_theta": cfg.rope_theta, "rope_type": "default", **(cfg.rope_scaling or {})}
    out: dict[str, Any] = {
        "architectures": [_ARCH[cfg.family]],
        "model_type": cfg.family,
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size,
        "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads,
        "num_key_value_heads": cfg.num_kv_heads,
        "head_dim": cfg.head_dim,
        "intermediate_size": cfg.intermediate_size,
        "rms_norm_eps": cfg.rms_eps,
        "rope_theta": cfg.rope_theta,
        "rope_parameters": rope,
        "max_position_embeddings": cfg.max_positions,
        "tie_word_embeddings": cfg.tie_embeddings,
        "hidden_act": "silu",
    }
    if cfg.rope_scaling:
        out["rope_scaling"] = dict(cfg.rope_scaling)
    if cfg.family == "llama":
        out["attention_bias"] = cfg.qkv_bias
        out["mlp_bias"] = False
    if cfg.family == "mistral":
        out["sliding_window"] = cfg.sliding_window
    if cfg.family == "qwen2":
        out["use_sliding_window"] = False
    return {**cfg.extra, **out}


def read_state(path: Path) -> dict[str, torch.Tensor]:
    """All tensors of a checkpoint folder (single file or sharded index)."""
    single, index = path / "model.safetensors", path / "model.safetensors.index.json"
    if single.exists():
        return load_file(str(single))
    if index.exists():
        shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        state: dict[str, torch.Tensor] = {}
        for shard in shards:
            state.update(load_file(str(path / shard)))
        return state
    raise FileNotFoundError(f"{path}: neither model.safetensors nor model.safetensors.index.json")


def load_hf(path: str | os.PathLike, dtype: torch.dtype = torch.float32, **overrides: Any) -> LlamaLM:
    """Build LlamaLM from an HF checkpoint folder. `overrides` set ModelConfig fields such as
    `encoder_layer` or `lora_targets` that config.json does not carry."""
    path = Path(path)
    cfg_file = path / "config.json"
    if not cfg_file.exists():
        raise FileNotFoundError(f"{cfg_file}: missing")
    cfg = dataclasses.replace(config_from_hf(json.loads(cfg_file.read_text()), str(cfg_file)), **overrides)
    state = read_state(path)
    if cfg.tie_embeddings:
        state.pop("lm_head.weight", None)
    with torch.device("meta"):
        model = LlamaLM(cfg)
    expected = {k: p for k, p in model.state_dict().items() if not (cfg.tie_embeddings and k == "lm_head.weight")}
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(k for k in set(state) - set(expected) if not k.endswith(_IGNORED_SUFFIXES))
    if missing or unexpected:
        raise KeyError(f"{path}: missing keys {missing[:8]} unexpected keys {unexpected[:8]}")
    for k, p in expected.items():
        if tuple(state[k].shape) != tuple(p.shape):
            raise ValueError(f"{path}: {k} has shape {tuple(state[k].shape)}, config says {tuple(p.shape)}")
    model.load_state_dict({k: state[k].to(dtype) for k in expected}, strict=False, assign=True)
    if cfg.tie_embeddings:  # assign=True replaced embed_tokens' Parameter: tie lm_head to the new one
        model.lm_head.weight = model.model.embed_tokens.weight
    return model.eval()


def save_hf(model: LlamaLM, path: str | os.PathLike) -> None:
    """Write config.json + model.safetensors in HF's layout (tied lm_head left out, as HF does)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    if model.cfg.tie_embeddings:
        state.pop("lm_head.weight")
    tmp = path / "model.safetensors.tmp"
    save_file(state, str(tmp), metadata={"format": "pt"})
    os.replace(tmp, path / "model.safetensors")
    (path / "config.json").write_text(json.dumps(config_to_hf(model.cfg), indent=2) + "\n")
