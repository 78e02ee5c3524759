"""The base LM: a Llama-family decoder (Llama, Qwen2, Mistral) whose LoRA adapters are inputs.

Parameter names equal Hugging Face's (`model.layers.{i}.self_attn.q_proj.weight`, `lm_head.weight`),
so HF checkpoints load and our own checkpoints save without a key map.

    forward(input_ids [b,s], attention_mask [b,t], position_ids [b,s], past_key_values, lora)
        -> logits [b,s,V], present [(k, v) [b,kv,t,hd]] * L, hidden_states [b,s,d]

with t = p + s (p = cached length). Left padding: pad slots carry attention_mask 0 and the real
tokens carry positions 0, 1, 2, ... (e.g. position_ids = cumsum(mask) - 1, clamped at 0).
"""

from __future__ import annotations

import torch
import torch.nn as nn
from torch import Tensor

from .config import ModelConfig
from .layers import KV, Attention, RMSNorm, Rotary, SwiGLU, attention_mask_4d
from .lora import LoraInputs, LoraPair


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.mlp = SwiGLU(cfg)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, mask: Tensor, past: KV | None,
                lora: dict[str, LoraPair], position_ids: Tensor | None = None) -> tuple[Tensor, KV]:  # x: [b, s, d]
        a, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past, lora, position_ids)
        x = x + a  # [b, s, d]
        x = x + self.mlp(self.post_attention_layernorm(x), lora)  # [b, s, d]
        return x, present


class Decoder(nn.Module):
    """HF's `model.` prefix: embeddings, layers, final norm."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.rotary = Rotary(cfg)


class LlamaLM(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.model = Decoder(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m: nn.Module) -> None:  # nanoGPT-style init for training from scratch
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(
        self,
        input_ids: Tensor,  # [b, s] int64
        attention_mask: Tensor | None = None,  # [b, t] int64, t = p + s
        position_ids: Tensor | None = None,  # [b, s] int64
        past_key_values: list[KV] | None = None,  # L x ([b, kv, p, hd], [b, kv, p, hd])
        lora: LoraInputs | None = None,  # (layer, module) -> (A [b, d_in, r], B [b, r, d_out]), scale folded
        logits_to_keep: Tensor | None = None,  # [1] int64: logits of the last n positions only; 0 = all
    ) -> tuple[Tensor, list[KV], Tensor]:
        cfg = self.cfg
        b, s = input_ids.shape
        p = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if attention_mask is None:
            attention_mask = torch.ones(b, p + s, dtype=torch.int64, device=input_ids.device)  # [b, t]
        if position_ids is None:
            position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)[:, p:]  # [b, s]
        x = self.model.embed_tokens(input_ids)  # [b, s, d]
        cos, sin = self.model.rotary(position_ids, x.dtype)  # [b, 1, s, hd] each
        mask = attention_mask_4d(attention_mask, s, x.dtype, cfg.sliding_window)  # [b, 1, s, t]
        per_layer = self._split_lora(lora)
        hidden = x if cfg.encoder_layer_index == 0 else None
        present: list[KV] = []
        for i, layer in enumerate(self.model.layers):
            past = None if past_key_values is None else past_key_values[i]
            x, kv = layer(x, cos, sin, mask, past, per_layer[i], position_ids)  # x: [b, s, d]
            present.append(kv)
            if i + 1 == cfg.encoder_layer_index and i + 1 < cfg.num_layers:
                hidden = x
        x = self.model.norm(x)  # [b, s, d]
        if hidden is None:  # encoder layer = num_layers: HF's last hidden state is post-norm
            hidden = x
        if logits_to_keep is not None:  # generation reads one position: no [b, s, V] for a long prompt
            n = logits_to_keep.reshape(())
            start = (s - n).clamp(min=0) * (n > 0).to(n.dtype)
            x = x[:, start:]  # [b, kept, d]
        logits = self.lm_head(x)  # [b, s or kept, V]
        return logits, present, hidden

    def _split_lora(self, lora: LoraInputs | None) -> list[dict[str, LoraPair]]:
        per_layer: list[dict[str, LoraPair]] = [{} for _ in range(self.cfg.num_layers)]
        known = {*self.cfg.lora_targets, *(g.name for g in self.cfg.lora_groups())}  # groups: fused export
        for (i, m), pair in (lora or {}).items():
            if m not in known:
                raise KeyError(f"lora module {m!r} is not a target of this model ({self.cfg.lora_targets})")
            per_layer[i][m] = pair
        return per_layer

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
