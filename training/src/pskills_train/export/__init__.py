"""ONNX export of the bundle graphs (docs/design.md §4)."""
