"""The base LM as the evals and distillation run it: the bundle's own lm.onnx through onnxruntime (what
the app runs, and all a fresh clone has), or a PyTorch LlamaLM (an HF checkpoint, or the tiny random
model of the tests).

Both expose forward(input_ids, attention_mask, position_ids, past, lora) -> (logits, present, hidden)
on torch tensors, with `lora` as `stack_rows` builds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from torch import Tensor

from .config import ModelConfig
from .llama import LlamaLM
from .lora import LoraInputs, group_lora

KV = tuple[Tensor, Tensor]


def config_from_manifest(m: dict[str, Any]) -> ModelConfig:
    a = m["architecture"]
    return ModelConfig(vocab_size=a["vocab"], hidden_size=a["hidden"], num_layers=a["layers"], num_heads=a["heads"],
                       num_kv_heads=a["kv_heads"], head_dim=a["head_dim"], intermediate_size=a["intermediate"],
                       rms_eps=a["rms_eps"], rope_theta=a["rope"]["theta"], rope_scaling=a["rope"]["scaling"],
                       max_positions=a["max_positions"], tie_embeddings=a["tie_embeddings"], qkv_bias=a["qkv_bias"],
                       o_bias=a["o_bias"], sliding_window=a["sliding_window"], family=a["family"],
                       encoder_layer=m["encoder"]["layer"],
                       lora_targets=tuple(t["module"] for t in m["lora"]["targets"]))


class TorchBackend:
    name = "torch"

    def __init__(self, lm: LlamaLM):
        self.lm = lm.eval()
        self.cfg = lm.cfg

    @torch.no_grad()
    def forward(self, ids: Tensor, mask: Tensor, pos: Tensor, past: list[KV] | None,
                lora: LoraInputs | None) -> tuple[Tensor, list[KV], Tensor]:
        return self.lm(ids, mask, pos, past, lora)


class OrtBackend:
    name = "onnxruntime"

    def __init__(self, bundle: str | Path, threads: int = 1):

        bundle = Path(bundle)
        self.manifest = json.loads((bundle / "bundle.json").read_text())
        self.cfg = config_from_manifest(self.manifest)
        self.layers = list(self.manifest["lora"]["layers"])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-wait on shared cores
        self.sess = ort.InferenceSession(str(bundle / self.manifest["io"]["lm"]["file"]), opts,
                                         providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.sess.get_inputs()}
        self.outputs = [o.name for o in self.sess.get_outputs()]

    def forward(self, ids: Tensor, mask: Tensor, pos: Tensor, past: list[KV] | None,
                lora: LoraInputs | None) -> tuple[Tensor, list[KV], Tensor]:
        cfg, b = self.cfg, ids.shape[0]
        feed: dict[str, np.ndarray] = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                                       "position_ids": pos.numpy()}
        if "logits_to_keep" in self.inputs:  # format 2: 0 = every position's logits
            feed["logits_to_keep"] = np.zeros(1, np.int64)
        empty = np.zeros((b, cfg.num_kv_heads, 0, cfg.head_dim), np.float32)
        for i in range(cfg.num_layers):
            feed[f"past_key_values.{i}.key"] = past[i][0].numpy() if past else empty
            feed[f"past_key_values.{i}.value"] = past[i][1].numpy() if past else empty
        rank = max((a.shape[2] for a, _ in (lora or {}).values()), default=0)
        full: LoraInputs = {}
        for i in self.layers:
            for m in cfg.lora_targets:
                d_in, d_out = cfg.lora_dims(m)
                pair = (lora or {}).get((i, m))
                full[(i, m)] = pair if pair is not None else (torch.zeros(b, d_in, rank), torch.zeros(b, rank, d_out))
        if "groups" in self.manifest["lora"]:  # lm.onnx takes grouped pairs (docs/bundle-format.md)
            full = group_lora(cfg, full)
        for (i, m), pair in full.items():
            if f"lora.{i}.{m}.A" in self.inputs:
                feed[f"lora.{i}.{m}.A"] = pair[0].float().numpy()
                feed[f"lora.{i}.{m}.B"] = pair[1].float().numpy()
        out = dict(zip(self.outputs, self.sess.run(self.outputs, feed), strict=True))
        present = [(torch.from_numpy(out[f"present.{i}.key"]), torch.from_numpy(out[f"present.{i}.value"]))
                   for i in range(cfg.num_layers)]
        return torch.from_numpy(out["logits"]), present, torch.from_numpy(out["hidden_states"])
