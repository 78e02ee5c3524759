"""Transition readout: A's slot reads position t, B's reads t + 1; a content checkpoint starts it."""

from __future__ import annotations

import pytest
import torch

from pskills_train.export.bundle import random_model
from pskills_train.hyper.config import HyperConfig, NetConfig
from pskills_train.hyper.net import build_hypernet, load_init, perturb

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def lm_cfg():
    lm, _ = random_model("tiny")
    return lm.cfg


def net_of(lm_cfg, readout: str, blocks: int = 1):
    net = build_hypernet(lm_cfg, NetConfig(rank=2, width=32, heads=2, blocks=blocks, readout=readout, norm="layer"))
    perturb(net, 3)
    return net.eval()


def test_b_reads_the_next_position_and_a_does_not(lm_cfg):
    net = net_of(lm_cfg, "transition", blocks=0)  # no blocks before the readout: the queries read nothing
    g = torch.Generator().manual_seed(0)
    states = torch.randn(1, 9, lm_cfg.hidden_size, generator=g)
    mask = torch.ones(1, 9)
    later = states.clone()
    later[0, -1] += torch.randn(lm_cfg.hidden_size, generator=g) * 3  # the last token: only ever a "next"
    with torch.no_grad():
        before, after = net(states, mask), net(later, mask)
    for m in net.modules_:
        torch.testing.assert_close(after[m][0], before[m][0])  # A: keys and values of positions 0 .. n-2
        assert (after[m][1] - before[m][1]).abs().max() > 1e-4  # B: reads position n-1 as t + 1


def test_right_padding_is_never_read(lm_cfg):
    net = net_of(lm_cfg, "transition")
    g = torch.Generator().manual_seed(1)
    states = torch.randn(1, 9, lm_cfg.hidden_size, generator=g)
    padded = torch.cat([states, torch.randn(1, 4, lm_cfg.hidden_size, generator=g) * 5], dim=1)
    mask = torch.cat([torch.ones(1, 9), torch.zeros(1, 4)], dim=1)
    with torch.no_grad():
        want, got = net(states, torch.ones(1, 9)), net(padded, mask)
    for m in net.modules_:
        torch.testing.assert_close(got[m][0], want[m][0])
        torch.testing.assert_close(got[m][1], want[m][1])


def test_a_content_checkpoint_starts_a_transition_net(lm_cfg):
    content, transition = net_of(lm_cfg, "content"), net_of(lm_cfg, "transition")
    filled = load_init(transition, content.state_dict())
    assert sorted(filled) == ["out_norm_b.bias", "out_norm_b.weight", "readout.o_next.bias", "readout.o_next.weight",
                              "readout.v_next.weight"]
    torch.testing.assert_close(transition.readout.v_next.weight, content.readout.v.weight)
    # a checkpoint of another shape is still an error, as in a strict load
    with pytest.raises(RuntimeError):
        load_init(net_of(lm_cfg, "query"), content.state_dict())


def test_config_rejects_an_unknown_readout():
    with pytest.raises(ValueError, match="net.readout"):
        HyperConfig.from_dict({"net": {"readout": "nope"}})
