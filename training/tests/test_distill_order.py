"""The batch order and zero-init draws of the distiller equal the engine's (docs/distill.md "Batch order
and init"); tests/unit/distill-order.test.ts asserts the same golden values on the TypeScript side."""

import torch

from pskills_train.distill.student import batch_order, uniform01, zero_init
from pskills_train.model.config import ModelConfig
from pskills_train.model.llama import LlamaLM


def test_batch_order_matches_the_engine():
    assert batch_order(5, 3, 4, 0) == [[1, 4, 3], [2, 0, 0], [1, 2, 3], [4, 0, 2]]
    assert batch_order(10, 8, 3, 7) == [[2, 0, 9, 6, 4, 3, 5, 7], [1, 8, 0, 3, 1, 8, 2, 4], [9, 5, 6, 7, 7, 6, 0, 9]]
    assert [sorted(b) for b in batch_order(2, 8, 2, 0)] == [[0, 1], [0, 1]]


def test_uniform01_is_the_engines_seeded_rng():
    assert uniform01(0, 5).tolist() == [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197,
                                        0.1462021479383111, 0.46732782293111086]
    assert uniform01(42, 3, start=2).tolist() == [0.8524657934904099, 0.6697340414393693, 0.17481389874592423]


def test_zero_init_is_one_stream_over_the_targets():
    cfg = ModelConfig(vocab_size=32, hidden_size=16, num_layers=2, num_heads=2, num_kv_heads=1, head_dim=8,
                      intermediate_size=24, max_positions=32)
    lm = LlamaLM(cfg)
    init = zero_init(lm, [0, 1], 4, seed=5)
    flat = torch.cat([init[(i, m)][0].reshape(-1) for i in [0, 1] for m in cfg.lora_targets])
    d0 = cfg.lora_dims(cfg.lora_targets[0])[0]
    want = 2.0 * uniform01(5, flat.numel()) - 1.0
    assert abs(float(flat[0]) - float(want[0]) / d0 ** 0.5) < 1e-7
    assert all(float(b.abs().sum()) == 0.0 for _, b in init.values())
    assert init[(1, cfg.lora_targets[-1])][0].shape == (cfg.lora_dims(cfg.lora_targets[-1])[0], 4)
