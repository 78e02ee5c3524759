"""ONNX export of the bundle graphs (DESIGN §3)."""
