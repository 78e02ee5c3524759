"""Plot a pretraining run's learning curve next to the compression baselines of the same held-out bytes.

    training/.venv/bin/python training/scripts/plot_learning_curve.py \
        --metrics training/.cache/runs/base2/metrics.jsonl --bundle resources/bundles/default --out docs/learning-curve.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on these machines
import matplotlib.pyplot as plt  # noqa: E402

SPLITS = {"docs_val": "held-out docs", "skills_val": "held-out skills"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--metrics", required=True, type=Path)
    ap.add_argument("--bundle", required=True, type=Path, help="bundle whose training card has the baselines")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    rows = [json.loads(x) for x in a.metrics.read_text().splitlines() if x.strip()]
    card = json.loads((a.bundle / "bundle.json").read_text())["training_card"]
    base = card["compression_baselines"]

    fig, (ax_loss, ax_bpb) = plt.subplots(1, 2, figsize=(11, 4), dpi=110)
    tokens = [r["tokens"] / 1e6 for r in rows]
    ax_loss.plot(tokens, [r["loss"] for r in rows], lw=1, label="train loss")
    ax_loss.set(xlabel="tokens seen (M)", ylabel="cross-entropy (nats/token)", title="training loss")
    ax_loss.grid(alpha=0.3)
    for (split, label), color in zip(SPLITS.items(), ("C0", "C1")):
        ev = [r for r in rows if f"val_bpb_{split}" in r]
        ax_bpb.plot([r["tokens"] / 1e6 for r in ev], [r[f"val_bpb_{split}"] for r in ev], "o-", ms=3,
                    color=color, label=f"model, {label}")
        if split in base:
            ax_bpb.axhline(base[split]["xz_9_bpb"], color=color, ls="--", lw=1, label=f"xz -9, {label}")
            ax_bpb.axhline(base[split]["gzip_9_bpb"], color=color, ls=":", lw=1, label=f"gzip -9, {label}")
    # where a later phase (run.init_from) took over with its own schedule
    step_tokens = card["config"]["run"]["batch_size"] * card["config"]["data"]["seq_len"] / 1e6
    for i, phase in enumerate(card.get("earlier_phases", [])):
        for ax in (ax_loss, ax_bpb):
            ax.axvline(phase["to_step"] * step_tokens, color="grey", lw=0.8, ls="-.",
                       label=f"phase {i + 2} starts" if ax is ax_bpb else None)
    ax_bpb.set(xlabel="tokens seen (M)", ylabel="bits per byte", title="held-out bits per byte")
    ax_bpb.grid(alpha=0.3)
    ax_bpb.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
