"""The frozen base LM the hypernetwork trains against, with its tokenizer and chat template."""

from __future__ import annotations

import json

import torch
from tokenizers import Tokenizer

from ..config_io import repo_path
from ..export.bundle import random_model
from ..export.hf_checkpoint import chat_template_of
from ..model import LlamaLM, ModelConfig, load_hf
from ..tokenizer import CHAT_TEMPLATE


def load_base(spec: str, tokenizer: str, encoder_layer: int | None = None) -> tuple[LlamaLM, Tokenizer, str]:
    """(frozen LM, tokenizer, chat template). spec: an HF folder, `random:tiny` (export.bundle's tiny random
    model and its synthetic BPE) or `random:pretrain` (configs/pretrain.json's architecture, random weights,
    the real tokenizer), for development before the base model exists."""
    template = CHAT_TEMPLATE
    if spec == "random:tiny":
        lm, tok = random_model("tiny")
    elif spec == "random:pretrain":
        raw = json.loads(repo_path("training/configs/pretrain.json").read_text())["model"]
        torch.manual_seed(0)
        lm = LlamaLM(ModelConfig.from_dict({k: v for k, v in raw.items() if not k.startswith("_")}))
        tok = Tokenizer.from_file(str(repo_path(tokenizer)))
    else:
        folder = repo_path(spec)
        lm = load_hf(folder) if encoder_layer is None else load_hf(folder, encoder_layer=encoder_layer)
        tok_file = folder / "tokenizer.json" if (folder / "tokenizer.json").exists() else repo_path(tokenizer)
        tok = Tokenizer.from_file(str(tok_file))
        cfg_file = tok_file.with_name("tokenizer_config.json")
        if cfg_file.exists():  # the template `pskills bundle create --from-hf` ships (chat_template.jinja too)
            try:
                template = chat_template_of(tok_file.parent, json.loads(cfg_file.read_text()))
            except ValueError:
                pass  # a base model without one: ours
    lm.eval()
    for p in lm.parameters():
        p.requires_grad_(False)
    return lm, tok, template
