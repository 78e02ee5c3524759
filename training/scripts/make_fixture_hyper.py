"""Make tests/fixtures/bundle-hyper: a tiny random base bundle + a random-but-nonzero hypernet.onnx
and oracle.json, for the TypeScript compile parity test (main/engine/compile.ts).

    training/.venv/bin/python training/scripts/make_fixture_hyper.py [--out DIR]

oracle.json holds, per test skill: the SKILL.md text, its ids, the chunk spans [start, end) for
token_budget 16 / overlap 4, the last token's encoder state of each chunk, and the compiled adapter
of `pskills_train.hyper.compile.compile_skill` ("layer.module": A [d_in, k·r] and B [k·r, d_out],
row-major float32, scale folded). Re-running gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from pskills_train.export.bundle import random_model, write_bundle
from pskills_train.export.manifest import BundleSpec
from pskills_train.hyper.compile import chunk_spans, compile_skill, encode_ids, encode_states
from pskills_train.hyper.config import NetConfig
from pskills_train.hyper.export import write_hyper_bundle
from pskills_train.hyper.net import build_hypernet, perturb
from pskills_train.tokenizer import tokenizer_config

ROOT = Path(__file__).resolve().parents[2]
CREATED = "2025-01-01T00:00:00Z"
SHARPEN = 7.0
TOKEN_BUDGET, OVERLAP = 16, 4
# the fixture's architecture, pinned (the query readout, layer norm, no shared adapter), so the committed
# oracle stays what this script makes whatever NetConfig's defaults become
NET = NetConfig(kind="perceiver", rank=2, width=16, heads=2, blocks=1, mlp_ratio=2, seed=3, shared_rank=0,
                readout="query", norm="layer", slot_clip=0.0)
# (n ids, budget, overlap): boundaries of the chunk rule, for a pure-arithmetic test
CHUNK_CASES = [(1, 16, 4), (16, 16, 4), (17, 16, 4), (28, 16, 4), (29, 16, 4), (45, 16, 4), (10, 4, 0), (9, 4, 3)]
SKILLS = {
    # 45 ids: 4 chunks [0,16) [12,28) [24,40) [36,45), the last one shorter than the budget
    "long": "---\nname: review\n---\n# Steps\nCheck the tests before the merge.\n",
    # one chunk shorter than the budget
    "short": "# Steps\nRun the tests.",
}


def f32(values: torch.Tensor) -> list:
    """Shortest decimal that reads back as the same float32."""
    return [float(str(np.float32(v))) for v in values.flatten().tolist()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests/fixtures/bundle-hyper")
    out = ap.parse_args().out
    torch.set_num_threads(1)

    lm, tok = random_model("tiny", seed=0, sharpen=SHARPEN)
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=lm.cfg.max_positions)
    card = {"kind": "random init", "config": "tiny", "seed": 0, "sharpen": SHARPEN, "steps": 0, "data": [],
            "model": lm.cfg.to_dict()}
    net = build_hypernet(lm.cfg, NET)
    perturb(net, seed=4)
    net.eval()
    with tempfile.TemporaryDirectory() as tmp:
        base = write_bundle(lm, tok, tcfg, Path(tmp) / "base", BundleSpec(
            id="tiny-random-hyper", created=CREATED, default_rank=NET.rank, alpha=float(NET.rank),
            token_budget=TOKEN_BUDGET, chunk_overlap=OVERLAP, training_card=card))
        hyper_card = {"kind": "random init (perturbed)", "net": NET.__dict__, "perturb_seed": 4, "steps": 0}
        write_hyper_bundle(base, net, out, TOKEN_BUDGET, OVERLAP, hyper_card, force=True)

    skills = []
    for name, text in SKILLS.items():
        ids = encode_ids(tok, text)
        spans = chunk_spans(len(ids), TOKEN_BUDGET, OVERLAP)
        states_last = [f32(encode_states(lm, torch.tensor([ids[s:e]]))[0, -1]) for s, e in spans]
        adapter = compile_skill(lm, net, tok, text, TOKEN_BUDGET, OVERLAP)
        skills.append({
            "name": name, "text": text, "ids": ids, "chunks": [list(s) for s in spans],
            "chunk_last_state": states_last, "rank": len(spans) * NET.rank,
            "adapter": {f"{layer}.{m}": {"A_shape": list(a.shape), "A": f32(a), "B_shape": list(b.shape), "B": f32(b)}
                        for (layer, m), (a, b) in adapter.items()},
        })
    if len(skills[0]["chunks"]) < 3:
        raise SystemExit(f"the long skill gives {len(skills[0]['chunks'])} chunks; make it longer")
    oracle = {"generated_by": "training/scripts/make_fixture_hyper.py", "tolerance": 1e-4,
              "token_budget": TOKEN_BUDGET, "chunk_overlap": OVERLAP, "rank": NET.rank,
              "modules": list(net.modules_), "layers": list(range(lm.cfg.num_layers)),
              "chunk_cases": [{"n": n, "token_budget": b, "chunk_overlap": o, "chunks": [list(s) for s in chunk_spans(n, b, o)]}
                              for n, b, o in CHUNK_CASES],
              "skills": skills}
    (out / "oracle.json").write_text(json.dumps(oracle, ensure_ascii=False, separators=(",", ":")) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({total / 1e6:.2f} MB); chunks: " + ", ".join(f"{s['name']} {len(s['chunks'])}" for s in skills))


if __name__ == "__main__":
    main()
