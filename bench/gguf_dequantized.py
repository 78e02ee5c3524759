"""A GGUF's float32 twin: the same metadata, every tensor dequantized to F32 (gguf-py's own dequantizer).

check:real-model runs llama.cpp on it beside the quantized file. The studio's float32 bundle holds these very
values; llama.cpp on a Q4_1 file multiplies 8-bit-quantized activations by the 4-bit blocks, so near-tied
greedy tokens part there even with no adapter, while the F32 twin does the same arithmetic as the engine up to
summation order (docs/results.md "Back to your runtime").

    training/.venv/bin/python bench/gguf_dequantized.py IN.gguf OUT.gguf
"""

import os
import sys
from pathlib import Path

import numpy as np
from gguf import (
    GGMLQuantizationType,
    GGUFReader,
    GGUFValueType,
    GGUFWriter,
    LlamaFileType,
)
from gguf.quants import dequantize

HEADER = {"GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"}


def main() -> None:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    r = GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    w = GGUFWriter(tmp, arch)
    for key, f in r.fields.items():
        if key in HEADER or key == "general.architecture":
            continue
        if key == "general.file_type":
            w.add_file_type(LlamaFileType.ALL_F32)
            continue
        sub = f.types[1] if f.types[0] == GGUFValueType.ARRAY else None
        w.add_key_value(key, f.contents(), f.types[0], sub_type=sub)
    for t in r.tensors:
        data = dequantize(t.data, t.tensor_type) if t.tensor_type != GGMLQuantizationType.F32 else t.data
        # GGUF lists dims fastest first; numpy wants them slowest first.
        w.add_tensor(t.name, np.ascontiguousarray(data, dtype=np.float32).reshape(tuple(reversed(t.shape.tolist()))))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    tmp.replace(out)
    print(out)


if __name__ == "__main__":
    main()
