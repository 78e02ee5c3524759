"""distill.rename: a SkillWorld skill's made-up words swapped for fresh ones in its text and teacher rows
alike, with the answer's renamed tokens as one-hot targets and every other position's top-k kept."""

from __future__ import annotations

import random
from pathlib import Path

import torch
from tokenizers import Tokenizer

from pskills_train.distill.rename import Renamer, nonce_words
from pskills_train.distill.teacher import TeacherRow

TOKENIZER = Path(__file__).resolve().parents[2] / "resources" / "bundles" / "default" / "tokenizer.json"
SKILL = "# Nelvax notes\nWhen you record an item, write NELVAX: then the item.\nCall glenla with snirvlus.\n"


def _row(tok: Tokenizer, prompt: str, answer: list[int], k: int = 4) -> TeacherRow:
    ids = tok.encode(prompt, add_special_tokens=False).ids
    g = torch.Generator().manual_seed(0)
    top_ids = torch.randint(0, tok.get_vocab_size(), (len(answer), k), generator=g)
    top_ids[:, 0] = torch.tensor(answer)
    top_logp = torch.log_softmax(torch.randn(len(answer), k, generator=g), -1)
    return TeacherRow(ids + answer, len(ids), top_ids, top_logp, answer, "tests", -0.1)


def test_words_text_and_rows_are_renamed_alike():
    tok = Tokenizer.from_file(str(TOKENIZER))
    words = nonce_words(SKILL)
    assert {"nelvax", "glenla", "snirvlus"} <= set(words) and "record" not in words
    rn = Renamer(tok)
    names = rn.mapping(SKILL, random.Random(0))
    renamed = rn.text(SKILL, names)
    assert "NELVAX" not in renamed and names["nelvax"].upper() in renamed and "record" in renamed

    # a generated answer may spell a word in other pieces than the tokenizer: " glenla" one letter at a time
    spelled = [tok.token_to_id("Ġg")] + [tok.token_to_id(c) for c in "lenla"]
    answer = tok.encode("NELVAX: lot 5\nCALL", add_special_tokens=False).ids + spelled + tok.encode(
        "()", add_special_tokens=False).ids
    row = _row(tok, "Record lot 5 with snirvlus.\n", answer)
    out = rn.row(row, names)
    want = rn.text(tok.decode(row.student), names)
    assert tok.decode(out.student) == want
    assert out.top_ids.shape == (len(out.student) - out.answer_from, 4) == out.top_logp.shape
    assert out.answer == out.student[out.answer_from:]
    assert out.top_ids[:, 0].tolist() == out.answer  # the greedy tokens are the renamed answer
    # renamed positions are one-hot; the others keep the teacher's rows (": lot 5" among them)
    new_head = tok.encode(names["nelvax"].upper(), add_special_tokens=False).ids
    assert torch.equal(out.top_logp[0], torch.tensor([0.0, -30.0, -30.0, -30.0]))
    rest = len(new_head)
    old_rest = len(tok.encode("NELVAX", add_special_tokens=False).ids)
    assert torch.equal(out.top_ids[rest], row.top_ids[old_rest])
    assert torch.equal(out.top_logp[rest], row.top_logp[old_rest])


def test_a_row_without_the_words_is_left_as_it_was():
    tok = Tokenizer.from_file(str(TOKENIZER))
    rn = Renamer(tok)
    row = _row(tok, "Summarise the change.\n", tok.encode("It is done.", add_special_tokens=False).ids)
    assert rn.row(row, rn.mapping(SKILL, random.Random(1))) is row
