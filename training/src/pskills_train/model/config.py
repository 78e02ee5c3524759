"""Architecture of the base LM: one dataclass, shared by our own small model and loaded HF checkpoints.

The field names follow docs/design.md §4 (bundle.json `base model architecture`); `hf_load.config_from_hf`
maps a Hugging Face config.json onto it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class LoraGroup:
    """One lora.{i}.{name}.A|B input pair: A [b, d_in, R·len(members)], B [b, R·len(members), d_out];
    member j's factors fill rank slots j·R … and B's columns offset … offset + its d_out."""

    name: str
    d_in: int
    d_out: int
    members: tuple[tuple[str, int], ...]  # (module, column offset)


# LoRA target short names (docs/design.md §4 `lora.{i}.{module}.A|B`) -> submodule path inside a decoder layer.
# The paths are the Hugging Face key names, so PEFT adapters map one to one.
LORA_MODULES: dict[str, str] = {
    "q": "self_attn.q_proj",
    "k": "self_attn.k_proj",
    "v": "self_attn.v_proj",
    "o": "self_attn.o_proj",
    "gate": "mlp.gate_proj",
    "up": "mlp.up_proj",
    "down": "mlp.down_proj",
}

FAMILIES = ("llama", "qwen2", "mistral")
ROPE_TYPES = ("default", "linear", "llama3")


@dataclass
class ModelConfig:
    """Defaults: the shipped base (resources/bundles/default, configs/pretrain*.json, 5.05 M parameters)."""

    vocab_size: int = 8192
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 64
    intermediate_size: int = 704
    rms_eps: float = 1e-5
    rope_theta: float = 10000.0
    # {"rope_type": "linear"|"llama3", "factor": ..., ...} as in HF `rope_parameters`; None = default.
    rope_scaling: dict[str, Any] | None = None
    max_positions: int = 1024
    tie_embeddings: bool = True
    qkv_bias: bool = False  # Qwen2 has biases on q, k, v
    o_bias: bool = False  # Llama `attention_bias: true` puts one on o_proj too
    sliding_window: int | None = None  # Mistral v0.1; None = full causal attention
    family: str = "llama"
    # Which residual stream the model also returns as `hidden_states` (the encoder g of docs/design.md §1):
    # k = state after k decoder layers; 0 = embeddings; num_layers = after the final norm (as HF's
    # `output_hidden_states[k]`). None = the middle layer, num_layers // 2.
    encoder_layer: int | None = None
    lora_targets: tuple[str, ...] = ("q", "k", "v", "o", "gate", "up", "down")
    extra: dict[str, Any] = field(default_factory=dict)  # ids, dtype etc. carried from config.json

    def __post_init__(self) -> None:
        self.lora_targets = tuple(self.lora_targets)
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads {self.num_heads} not a multiple of num_kv_heads {self.num_kv_heads}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even for RoPE, got {self.head_dim}")
        unknown = [m for m in self.lora_targets if m not in LORA_MODULES]
        if unknown:
            raise ValueError(f"unknown lora_targets {unknown}; known: {list(LORA_MODULES)}")
        rope_type = (self.rope_scaling or {}).get("rope_type", "default")
        if rope_type not in ROPE_TYPES:
            raise ValueError(f"rope_type {rope_type!r} not supported; supported: {ROPE_TYPES}")
        if not 0 <= self.encoder_layer_index <= self.num_layers:
            raise ValueError(f"encoder_layer {self.encoder_layer} outside 0..{self.num_layers}")

    @property
    def encoder_layer_index(self) -> int:
        """Residual stream index returned as `hidden_states`; defaults to the middle layer."""
        return self.num_layers // 2 if self.encoder_layer is None else self.encoder_layer

    def lora_dims(self, module: str) -> tuple[int, int]:
        """(d_in, d_out) of a LoRA target module."""
        d, f = self.hidden_size, self.intermediate_size
        q, kv = self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        dims = {"q": (d, q), "k": (d, kv), "v": (d, kv), "o": (q, d), "gate": (d, f), "up": (d, f), "down": (f, d)}
        return dims[module]

    def lora_groups(self) -> list[LoraGroup]:
        """How lm.onnx takes the LoRA factors (docs/bundle-format.md "LoRA groups"): the targets among
        q, k, v share one input pair on the fused q|k|v projection; every other target is its own group."""
        d, q, kv = self.hidden_size, self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        offsets = {"q": 0, "k": q, "v": q + kv}
        fused = tuple((m, offsets[m]) for m in self.lora_targets if m in offsets)
        groups = [LoraGroup("qkv", d, q + 2 * kv, fused)] if fused else []
        for m in self.lora_targets:
            if m not in offsets:
                d_in, d_out = self.lora_dims(m)
                groups.append(LoraGroup(m, d_in, d_out, ((m, 0),)))
        return groups

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["lora_targets"] = list(self.lora_targets)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelConfig:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown ModelConfig fields: {unknown}")
        return cls(**d)
