"""Greedy exact match on held-out episodes, with the skill in context and without: what the base is for.

Teacher-forced: greedy decoding reproduces the reference exactly when the argmax at every answer
position (its text and <|im_end|>) is the reference token, so one forward per episode measures it.
Exact match is stricter than SkillWorld's checkers (case, spacing), so it bounds their accuracy from below.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer

from ..model import LlamaLM
from .checkpoint import load_checkpoint
from .config import PretrainConfig
from .episodes import IGNORE, encode_episode, read_episodes


def _spread(n: int, k: int) -> list[int]:
    """k indices spread evenly over range(n), so the probe covers every length bucket of the file."""
    return sorted({int(i) for i in np.linspace(0, n - 1, k)}) if n > k else list(range(n))


class Probe:
    def __init__(self, path: Path, tok: Tokenizer, template: str, seq_len: int, count: int, pad: int):
        fit: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"in_context": [], "none": []}
        for r in read_episodes(path):
            ids, mask = encode_episode(r["messages"], template, tok)
            if not mask.any() or len(ids) > seq_len + 1:
                continue
            bare = [m for m in r["messages"] if m["role"] != "system"]
            fit["in_context"].append((ids, mask))
            fit["none"].append(encode_episode(bare, template, tok))
        if not fit["in_context"]:
            raise ValueError(f"{path}: no episode ends in an assistant answer and fits {seq_len + 1} tokens")
        keep = _spread(len(fit["in_context"]), count)
        self.sets = {k: [v[i] for i in keep] for k, v in fit.items()}
        self.pad = pad

    @torch.no_grad()
    def __call__(self, model: torch.nn.Module, bf16: bool, batch: int = 8) -> dict[str, float]:
        was = model.training
        model.eval()
        out: dict[str, float] = {}
        for name, items in self.sets.items():
            exact, right, total, nll = 0, 0, 0, 0.0
            for s in range(0, len(items), batch):
                part = items[s:s + batch]
                L = max(len(ids) for ids, _ in part) - 1
                x = torch.full((len(part), L), self.pad, dtype=torch.int64)
                y = torch.full((len(part), L), IGNORE, dtype=torch.int64)
                for k, (ids, mask) in enumerate(part):
                    x[k, :len(ids) - 1] = torch.from_numpy(ids[:-1])
                    y[k, :len(ids) - 1] = torch.from_numpy(np.where(mask[1:], ids[1:], IGNORE))
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    logits = model(x)[0]  # [b, L, V]
                logits = logits.float()
                on = y != IGNORE
                hit = (logits.argmax(-1) == y) & on
                exact += int((hit.sum(1) == on.sum(1)).sum())
                right, total = right + int(hit.sum()), total + int(on.sum())
                nll += float(F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum"))
            out[f"probe_exact_{name}"] = exact / len(items)
            out[f"probe_token_acc_{name}"] = right / total
            out[f"probe_answer_nll_{name}"] = nll / total
        model.train(was)
        return out


def main(argv: list[str] | None = None) -> None:
    """Probe a pretraining run's checkpoint: python -m pskills_train.train.probe --config C --run DIR."""


    ap = argparse.ArgumentParser(prog="python -m pskills_train.train.probe", description=main.__doc__)
    ap.add_argument("--config", required=True, type=Path, help="the pretraining config (data paths, probe file)")
    ap.add_argument("--run", required=True, type=Path, help="a run folder with ckpt.pt")
    ap.add_argument("--bf16", action="store_true")
    a = ap.parse_args(argv)
    cfg = PretrainConfig.load(a.config)
    if not cfg.data.probe_episodes:
        ap.error(f"{a.config}: data.probe_episodes is empty")
    tok = Tokenizer.from_file(str(cfg.data.path("tokenizer")))
    template = json.loads(cfg.data.path("chat_template").read_text())["chat_template"]
    probe = Probe(cfg.data.path("probe_episodes"), tok, template, cfg.data.seq_len, cfg.data.probe_count,
                  tok.token_to_id("<|endoftext|>") or 0)
    ck = load_checkpoint(a.run)
    model = LlamaLM(cfg.model)
    model.load_state_dict(ck["model"])
    print(json.dumps({"run": str(a.run), "step": ck["step"], **probe(model, a.bf16)}))


if __name__ == "__main__":
    main()
