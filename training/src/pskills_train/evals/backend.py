"""The eval's base-LM backends, defined in model/backend.py (below export/ and hyper/, which run
graphs through them); this module keeps the name distill/ and bench/ import them by."""

from ..model.backend import OrtBackend, TorchBackend, config_from_manifest

__all__ = ["OrtBackend", "TorchBackend", "config_from_manifest"]
