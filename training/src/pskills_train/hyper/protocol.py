"""The plain attributes compile and export read off a hypernetwork (net.py's `_Base`), typed.

nn.Module's `__getattr__` types every attribute a class does not declare as `Tensor | Module`, so
`net.rank` on an `nn.Module` reads as a tensor or a module to the type checker. `as_hypernet` gives a
module that `build_hypernet` made back with those attributes typed; it is a cast (no runtime check).
"""

from __future__ import annotations

from typing import Protocol, cast

import torch.nn as nn

from .config import NetConfig


class Hypernet(Protocol):
    kind: str  # "perceiver" | "t2l"
    modules_: list[str]  # LoRA target modules, in the order of the outputs
    num_layers: int
    d_enc: int  # width of the encoder states read
    rank: int  # output rank of one chunk's adapter (bundle.json hypernet.rank)
    dims: dict[str, tuple[int, int]]  # module -> (d_in, d_out)
    cfg: NetConfig

    def num_params(self) -> int: ...


def as_hypernet(net: nn.Module) -> Hypernet:
    return cast(Hypernet, net)
