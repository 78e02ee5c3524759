"""bench/gguf_dequantized.py: the float32 twin of a quantized GGUF keeps every key and holds each tensor's
dequantized values in the tensor's own shape (check:real-model runs llama.cpp on it)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter
from gguf.quants import dequantize, quantize

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gguf_dequantized.py"


def test_twin_holds_the_dequantized_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    src, out = tmp_path / "q.gguf", tmp_path / "f32.gguf"
    w = GGUFWriter(src, "llama")
    w.add_block_count(1)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", ["a", "b"])
    tensors = {
        "blk.0.attn_q.weight": (rng.standard_normal((3, 64)).astype(np.float32), GGMLQuantizationType.Q4_1),
        "token_embd.weight": (rng.standard_normal((2, 32)).astype(np.float32), GGMLQuantizationType.Q8_0),
        "output_norm.weight": (rng.standard_normal(64).astype(np.float32), GGMLQuantizationType.F32),
    }
    for name, (x, qt) in tensors.items():
        if qt == GGMLQuantizationType.F32:
            w.add_tensor(name, x)
        else:
            w.add_tensor(name, quantize(x, qt), raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    subprocess.run([sys.executable, str(SCRIPT), str(src), str(out)], check=True, capture_output=True)

    q, f = GGUFReader(src), GGUFReader(out)
    assert f.fields["general.architecture"].contents() == "llama"
    assert f.fields["tokenizer.ggml.tokens"].contents() == ["a", "b"]
    assert f.fields["llama.block_count"].contents() == 1
    got = {t.name: t for t in f.tensors}
    for t in q.tensors:
        twin = got[t.name]
        assert twin.tensor_type == GGMLQuantizationType.F32
        assert twin.shape.tolist() == t.shape.tolist()
        want = dequantize(t.data, t.tensor_type).reshape(tensors[t.name][0].shape)
        np.testing.assert_array_equal(np.asarray(twin.data).reshape(want.shape), want)
        # and close to what was quantized (the twin is not garbage in the right shape)
        np.testing.assert_allclose(want, tensors[t.name][0], atol=0.2)
