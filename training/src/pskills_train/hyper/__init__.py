"""The hypernetwork h_θ (docs/design.md §1): skill text -> encoder states -> LoRA adapter, its two training
stages, the compile path (`compile.compile_skill`) and the hypernet.onnx export (docs/bundle-format.md)."""
