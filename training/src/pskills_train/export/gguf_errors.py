"""The error of the GGUF gate (gguf_gate.py) and of the checks it runs from the header alone
(gguf_resources.py): a module of its own, so both can raise it without importing each other."""


class GGUFGateError(ValueError):
    """A file refused at the gate; the message names the file and the key, tensor or field."""
