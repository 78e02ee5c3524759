"""Distilled skills: context distillation from the skill-in-context teacher into a LoRA (docs/distill.md)."""
