"""The copy readout (net.readout "copy", an issue-12 experiment): a content-readout checkpoint loads into it
and gives the same adapters while the copy gain is 0; the gain learns from the first step; the copied
embeddings reach only the residual-writing B (o, down); export without tokens is refused."""

from __future__ import annotations

import pytest
import torch

from pskills_train.export.bundle import random_model
from pskills_train.hyper.compile import batch_adapters
from pskills_train.hyper.config import NetConfig
from pskills_train.hyper.net import build_hypernet, load_init

torch.set_num_threads(1)
SOURCES = [list(range(5, 30)), list(range(40, 52))]


@pytest.fixture(scope="module")
def nets():
    lm, _ = random_model("tiny")
    torch.manual_seed(0)
    cfg = {"rank": 2, "width": 32, "heads": 2, "blocks": 1, "norm": "batch"}
    content = build_hypernet(lm.cfg, NetConfig(readout="content", **cfg))
    copy = build_hypernet(lm.cfg, NetConfig(readout="copy", **cfg))
    filled = load_init(copy, content.state_dict())
    assert sorted(k.split(".")[0] for k in filled) == ["copy_gain"] * 2 + ["readout"] * 4
    return lm, content.eval(), copy.eval()


def test_gain_zero_is_the_content_readout(nets):
    lm, content, copy = nets
    a, b = batch_adapters(lm, content, SOURCES, 16, 4), batch_adapters(lm, copy, SOURCES, 16, 4)
    assert all(torch.equal(a[k][0], b[k][0]) and torch.equal(a[k][1], b[k][1]) for k in a)


def test_gain_learns_and_copies_only_into_o_and_down(nets):
    lm, _, copy = nets
    copy.train()
    out = batch_adapters(lm, copy, SOURCES, 16, 4)
    sum(b.sum() for _, b in out.values()).backward()
    grads = {k: p.grad for k, p in copy.named_parameters() if k.startswith("copy_gain")}
    assert set(grads) == {"copy_gain.o", "copy_gain.down"} and all(g.abs().sum() > 0 for g in grads.values())
    copy.zero_grad()
    copy.eval()


def test_without_tokens_it_is_refused(nets):
    lm, _, copy = nets
    with pytest.raises(ValueError, match="token embeddings"):
        copy(torch.zeros(1, 3, lm.cfg.hidden_size), torch.ones(1, 3))
