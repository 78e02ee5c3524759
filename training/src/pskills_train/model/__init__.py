"""Llama-family base LM with LoRA adapters as per-row inputs (docs/design.md §1, §4)."""

from .config import LORA_MODULES, ModelConfig
from .hf_load import load_hf, save_hf
from .llama import LlamaLM
from .lora import LoRALinear, from_peft, stack_rows, to_peft, zero_lora

__all__ = ["LORA_MODULES", "ModelConfig", "LlamaLM", "LoRALinear", "load_hf", "save_hf", "from_peft",
           "to_peft", "stack_rows", "zero_lora"]
