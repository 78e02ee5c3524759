"""Make tests/fixtures/bundle-tiny: a tiny random bundle, two seeded adapters and oracle.json.

    training/.venv/bin/python training/scripts/make_fixture_bundle.py [--out DIR]

oracle.json holds what PyTorch and Python's tokenizer/jinja2 say, for the TypeScript engine's parity
tests (tests/int/engine): token ids, chat renderings, logits with and without an adapter, 32 greedy
tokens, and a left-padded batch with a different adapter per row. Re-running gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import jinja2.ext
import jinja2.sandbox
import numpy as np
import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer

from pskills_train.export.bundle import random_model, special_ids, write_bundle
from pskills_train.export.manifest import BundleSpec
from pskills_train.model import LlamaLM, stack_rows
from pskills_train.tokenizer import tokenizer_config

ROOT = Path(__file__).resolve().parents[2]
CREATED = "2025-01-01T00:00:00Z"
SHARPEN = 7.0  # peaked next-token distributions: greedy argmax margins far above float noise
GREEDY_TOKENS = 32
LOGIT_POSITIONS = 2  # compare the last positions of each prompt
MIN_MARGIN = 1e-3

PROMPTS = {
    "plain": "# Review a branch\n\n## Steps\n1. Check the tests before you merge the branch.",
    "unicode": "Café naïve — 日本語 🙂\ttabs and  two spaces\n\nend",
}
CHATS = [
    {"messages": [{"role": "system", "content": "You apply the skill."},
                  {"role": "user", "content": "How do I review a branch?"}], "add_generation_prompt": True},
    {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! Run the tests."},
                  {"role": "user", "content": "and then?"}], "add_generation_prompt": True},
    {"messages": [{"role": "user", "content": "no prompt after me"}], "add_generation_prompt": False},
]
TOKENIZER_TEXTS = ["", " leading space", "trailing space ", "<|im_start|>user\nhi<|im_end|>\n", "a`b_12`: c;d!",
                   "line\r\nbreaks\n\n\n  indented", "emoji 👩‍💻 and ß ẞ"]
ADAPTERS = {"r4": (4, 1), "r2": (2, 2)}  # name -> (rank, seed)
BATCH_ROWS = [("plain", None), ("chat", "r4"), ("unicode", "r2")]


def f32(values: torch.Tensor) -> list:
    """Shortest decimal that reads back as the same float32, so JSON stays small and exact."""
    return [float(str(np.float32(v))) for v in values.flatten().tolist()]


def render_chat(template: str, chat: dict, tcfg: dict) -> str:
    # The environment transformers' apply_chat_template uses.
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                      extensions=[jinja2.ext.loopcontrols])
    return env.from_string(template).render(**chat, bos_token=tcfg["bos_token"], eos_token=tcfg["eos_token"])


def random_adapter(lm: LlamaLM, rank: int, seed: int) -> dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor]]:
    """Scale already folded (A carries it): strong enough to change the greedy tokens."""
    g = torch.Generator().manual_seed(seed)
    cfg = lm.cfg
    out = {}
    for i in range(cfg.num_layers):
        for m in cfg.lora_targets:
            d_in, d_out = cfg.lora_dims(m)
            out[(i, m)] = (torch.randn(d_in, rank, generator=g) / d_in ** 0.5,  # [d_in, r]
                           torch.randn(rank, d_out, generator=g) * 0.5)  # [r, d_out]
    return out


@torch.no_grad()
def greedy(lm: LlamaLM, rows: list[list[int]], adapters: list[dict | None], pad: int, n: int):
    """Left-padded batched greedy decoding with a KV cache -> (prefill last logits [b,V], tokens, min margin)."""
    b, s = len(rows), max(len(r) for r in rows)
    ids = torch.full((b, s), pad, dtype=torch.int64)  # [b, s]
    mask = torch.zeros(b, s, dtype=torch.int64)  # [b, s]
    for r, row in enumerate(rows):
        ids[r, s - len(row):] = torch.tensor(row)
        mask[r, s - len(row):] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)  # [b, s]
    lora = stack_rows(lm.cfg, adapters)
    logits, past, _ = lm(ids, mask, pos, None, lora)  # logits [b, s, V]
    first = logits[:, -1]  # [b, V]
    tokens, margin = [[] for _ in rows], float("inf")
    for _ in range(n):
        last = logits[:, -1]  # [b, V]
        top = last.topk(2).values  # [b, 2]
        margin = min(margin, float((top[:, 0] - top[:, 1]).min()))
        nxt = last.argmax(-1)  # [b]
        for r in range(b):
            tokens[r].append(int(nxt[r]))
        mask = torch.cat([mask, torch.ones(b, 1, dtype=torch.int64)], dim=1)  # [b, t+1]
        pos = pos[:, -1:] + 1  # [b, 1]
        logits, past, _ = lm(nxt[:, None], mask, pos, past, lora)
    return first, tokens, margin


@torch.no_grad()
def prompt_oracle(lm: LlamaLM, tok: Tokenizer, ids: list[int], adapter: dict | None, pad: int) -> dict:
    x = torch.tensor([ids])
    logits, _, hidden = lm(x, lora=stack_rows(lm.cfg, [adapter]))  # [1, s, V], [1, s, d]
    _, tokens, margin = greedy(lm, [ids], [adapter], pad, GREEDY_TOKENS)
    if margin < MIN_MARGIN:
        raise SystemExit(f"greedy margin {margin:.2e} < {MIN_MARGIN}: change SHARPEN or the seeds")
    positions = list(range(len(ids) - LOGIT_POSITIONS, len(ids)))
    return {"logit_positions": positions, "logits": [f32(logits[0, p]) for p in positions],
            "hidden_last": f32(hidden[0, -1]),
            "greedy": tokens[0], "greedy_text": tok.decode(tokens[0], skip_special_tokens=False),
            "min_margin": round(margin, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests/fixtures/bundle-tiny")
    out = ap.parse_args().out

    lm, tok = random_model("tiny", seed=0, sharpen=SHARPEN)
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=lm.cfg.max_positions)
    card = {"kind": "random init", "config": "tiny", "seed": 0, "sharpen": SHARPEN, "steps": 0, "data": [],
            "model": lm.cfg.to_dict()}
    write_bundle(lm, tok, tcfg, out, BundleSpec(id="tiny-random", created=CREATED, default_rank=4, alpha=8.0,
                                                token_budget=128, chunk_overlap=16, training_card=card), force=True)
    pad = special_ids(tok, tcfg)["pad"]

    adapters = {name: random_adapter(lm, rank, seed) for name, (rank, seed) in ADAPTERS.items()}
    for name, ad in adapters.items():
        save_file({f"lora.{i}.{m}.{ab}": t.contiguous() for (i, m), pair in ad.items() for ab, t in zip("AB", pair)},
                  str(out / f"adapter-{name}.safetensors"))

    chats = [{**c, "rendered": render_chat(tcfg["chat_template"], c, tcfg)} for c in CHATS]
    texts = {**PROMPTS, "chat": chats[0]["rendered"]}
    ids = {name: tok.encode(text).ids for name, text in texts.items()}
    oracle = {
        "generated_by": "training/scripts/make_fixture_bundle.py",
        "tolerance": 1e-4,
        "adapters": {name: {"file": f"adapter-{name}.safetensors", "rank": r, "seed": s}
                     for name, (r, s) in ADAPTERS.items()},
        "tokenizer": [{"text": t, "ids": tok.encode(t).ids, "decoded": tok.decode(tok.encode(t).ids, skip_special_tokens=False)}
                      for t in [*texts.values(), *TOKENIZER_TEXTS, *(c["rendered"] for c in chats[1:])]],
        "chat": chats,
        "prompts": [{"name": name, "text": texts[name], "ids": ids[name],
                     "runs": {a or "none": prompt_oracle(lm, tok, ids[name], adapters.get(a or ""), pad)
                              for a in (None, "r4")}}
                    for name in ("plain", "chat")],
    }
    first, tokens, margin = greedy(lm, [ids[p] for p, _ in BATCH_ROWS],
                                   [adapters[a] if a else None for _, a in BATCH_ROWS], pad, GREEDY_TOKENS)
    if margin < MIN_MARGIN:
        raise SystemExit(f"batch greedy margin {margin:.2e} < {MIN_MARGIN}")
    oracle["batch"] = {"rows": [{"prompt": p, "adapter": a, "ids": ids[p]} for p, a in BATCH_ROWS], "pad": pad,
                       "last_logits": [f32(row) for row in first], "greedy": tokens, "min_margin": round(margin, 4)}
    (out / "oracle.json").write_text(json.dumps(oracle, ensure_ascii=False, indent=1) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
