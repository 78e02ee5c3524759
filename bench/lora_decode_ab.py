"""Two lm.onnx files' decode step side by side (docs/results.md "The engine against llama.cpp"): onnxruntime's
CPU time of one run (batch 1, 100 cached tokens, 1 thread) at LoRA rank 0 and 8, the files' runs interleaved
in rounds, medians, and the ratio B ÷ A per round. For a graph change measured against the graph before it
(e.g. a bundle exported before and after gate|up was fused).

    PYTHONPATH=training/src training/.venv/bin/python bench/lora_decode_ab.py A_LM_ONNX B_LM_ONNX [OUT_JSON]
"""

import os
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).parent))
from lora_decode_variants import feeds, run_info, timed_rounds, write_json

ROUNDS, RUNS = 10, 30


def main() -> None:
    files = {"a": Path(sys.argv[1]), "b": Path(sys.argv[2])}
    out_json = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    load_before = os.getloadavg()
    cases = {}
    for tag, path in files.items():
        s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        fetch = [o.name for o in s.get_outputs() if o.name != "hidden_states"]
        for rank in (0, 8):
            cases[f"{tag} r{rank}"] = (s, feeds(s, rank, np.random.default_rng(0)), fetch)
    times = timed_rounds(cases, ROUNDS, RUNS)
    ratios = {f"r{r}": [b / a for a, b in zip(times[f"a r{r}"], times[f"b r{r}"], strict=True)] for r in (0, 8)}
    result = {
        "bench": "lora_decode_ab",
        "a": str(files["a"]),
        "b": str(files["b"]),
        **run_info(ROUNDS, RUNS, load_before),
        "cpu_ms_per_run": {k: round(float(np.median(v)), 3) for k, v in times.items()},
        "b_over_a": {k: round(float(np.median(v)), 3) for k, v in ratios.items()},
        "b_over_a_rounds": {k: [round(x, 3) for x in v] for k, v in ratios.items()},
    }
    for k, v in times.items():
        print(f"{k:6s} {np.median(v):7.3f} ms   rounds {' '.join(f'{x:.2f}' for x in v)}")
    for k, v in result["b_over_a"].items():
        print(f"b ÷ a {k}: {v:.3f}")
    write_json(out_json, result)


if __name__ == "__main__":
    main()
