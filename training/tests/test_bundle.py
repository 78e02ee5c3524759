"""The bundle writer: manifest schema, file hashes, graph I/O vs bundle.json, atomic writes, the fixture."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pskills_train.distill_recipe import RECIPE
from pskills_train.export.bundle import main as bundle_main
from pskills_train.export.bundle import random_model, write_bundle
from pskills_train.export.distill_entry import main as distill_entry
from pskills_train.export.manifest import FORMAT, BundleSpec, expand_names, sha256_file
from pskills_train.export.staging import MARKER
from pskills_train.export.train_step import DEFAULT_BUCKETS
from pskills_train.tokenizer import SPECIAL_TOKENS, synthetic_corpus, tokenizer_config, train_bpe

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/bundle-tiny"
CREATED = "2025-01-01T00:00:00Z"


def write(out: Path, *extra: str) -> dict:
    assert bundle_main(["--out", str(out), "--random-config", "tiny", "--created", CREATED, *extra]) == 0
    return json.loads((out / "bundle.json").read_text())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("w") / "tiny"
    return out, write(out)


def session(path: Path):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def prefill_feeds(m: dict, ids: np.ndarray) -> dict[str, np.ndarray]:
    """Feeds for one uncached step over `ids` [1, s]: empty past, no lora.* inputs."""
    a = m["architecture"]
    feeds = {"input_ids": ids, "attention_mask": np.ones(ids.shape, np.int64),
             "position_ids": np.arange(ids.shape[1])[None], "logits_to_keep": np.zeros(1, np.int64)}
    for i in range(a["layers"]):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{i}.{kind}"] = np.zeros((1, a["kv_heads"], 0, a["head_dim"]), np.float32)
    return feeds


def rank_zero(m: dict) -> dict[str, np.ndarray]:
    return {f"lora.{i}.{g['name']}.{ab}": np.zeros((1, g["d_in"], 0) if ab == "A" else (1, 0, g["d_out"]), np.float32)
            for i in m["lora"]["layers"] for g in m["lora"]["groups"] for ab in "AB"}


def test_manifest_lists_every_file_with_its_sha256(bundle):
    out, m = bundle
    on_disk = {p.name for p in out.iterdir()} - {"bundle.json", MARKER}
    steps = {f"train_step-{b}x{s}.onnx" for b, s in DEFAULT_BUCKETS}
    assert set(m["files"]) == on_disk == {"lm.onnx", "encoder.onnx", "tokenizer.json", "tokenizer_config.json", *steps}
    for name, entry in m["files"].items():
        assert entry == {"sha256": sha256_file(out / name), "bytes": (out / name).stat().st_size}, name


def test_manifest_fields(bundle):
    _, m = bundle
    assert m["format"] == FORMAT and m["id"] == "tiny-random" and m["created"] == CREATED
    a = m["architecture"]
    assert (a["hidden"], a["layers"], a["heads"], a["kv_heads"], a["head_dim"]) == (64, 2, 4, 2, 16)
    assert a["rope"] == {"theta": 10000.0, "scaling": None} and a["tie_embeddings"] is True
    assert [t["module"] for t in m["lora"]["targets"]] == ["q", "k", "v", "o", "gate", "up", "down"]
    assert {t["module"]: (t["d_in"], t["d_out"]) for t in m["lora"]["targets"]}["down"] == (128, 64)
    assert m["lora"]["layers"] == [0, 1]
    assert m["encoder"] == {"kind": "lm_hidden", "layer": 1, "output": "hidden_states", "token_budget": 512,
                            "chunk_overlap": 64}
    assert m["special_tokens"] == {"bos": 1, "eos": 3, "pad": 0, "stop": [3, 1]}
    assert m["tokenizer"]["vocab_size"] <= a["vocab"]
    assert m["hypernet"] is None and m["training_card"]["kind"] == "random init"
    assert m["distill"] == json.loads(RECIPE.read_text())  # the recipe file, field for field


def test_onnxruntime_loads_lm_with_the_manifest_io(bundle):
    out, m = bundle
    sess = session(out / "lm.onnx")
    groups = [g["name"] for g in m["lora"]["groups"]]
    assert groups == ["qkv", "o", "gate", "up", "down"]

    def expand(templates: list[str]) -> set[str]:
        return expand_names(templates, m["architecture"]["layers"], m["lora"]["layers"], groups)

    assert {i.name for i in sess.get_inputs()} == expand(m["io"]["lm"]["inputs"])
    assert {o.name for o in sess.get_outputs()} == expand(m["io"]["lm"]["outputs"])
    ins = {i.name: i for i in sess.get_inputs()}
    assert ins["lora.1.gate.A"].shape == ["batch", 64, "lora_rank"]
    assert ins["past_key_values.0.key"].shape == ["batch", 2, "past_sequence_length", 16]


def test_plain_export_has_no_lora_inputs_and_equals_rank_zero(bundle, tmp_path):
    out, m = bundle
    plain = write(tmp_path / "plain", "--no-lora-inputs")
    assert not any(t.startswith("lora.") for t in plain["io"]["lm"]["inputs"])
    with_lora, without = session(out / "lm.onnx"), session(tmp_path / "plain" / "lm.onnx")
    assert not any(i.name.startswith("lora.") for i in without.get_inputs())
    feeds = prefill_feeds(m, np.array([[5, 9, 40, 7]]))
    a = with_lora.run(["logits"], {**feeds, **rank_zero(m)})[0]
    b = without.run(["logits"], feeds)[0]
    assert np.abs(a - b).max() < 1e-5


def test_existing_folder_is_refused_and_a_failed_write_leaves_nothing(tmp_path):
    lm, tok = random_model("tiny")
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=256)
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="taken exists"):
        write_bundle(lm, tok, tcfg, tmp_path / "taken", BundleSpec(id="x", created=CREATED))
    big = train_bpe(synthetic_corpus(12_000), 1000)  # more tokens than the model's vocab
    with pytest.raises(ValueError, match="tokenizer has"):
        write_bundle(lm, big, tcfg, tmp_path / "new", BundleSpec(id="x", created=CREATED))
    bad = {**tcfg, "eos_token": "<|nope|>"}
    with pytest.raises(ValueError, match="eos_token"):
        write_bundle(lm, tok, bad, tmp_path / "new", BundleSpec(id="x", created=CREATED))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_checkpoint_bundle_computes_what_the_checkpoint_does(tmp_path):
    import torch

    from pskills_train.model import save_hf

    lm, tok = random_model("tiny", seed=3, sharpen=4.0)
    ckpt = tmp_path / "ckpt"
    save_hf(lm, ckpt)
    tok.save(str(ckpt / "tokenizer.json"))
    tcfg = tokenizer_config(tok, bos="<|endoftext|>", eos="<|im_end|>", pad="<|pad|>", max_length=256)
    (ckpt / "tokenizer_config.json").write_text(json.dumps({k: v for k, v in tcfg.items() if k != "chat_template"}))
    with pytest.raises(ValueError, match="no chat_template string; pass --chat-template"):
        bundle_main(["--out", str(tmp_path / "b"), "--checkpoint", str(ckpt)])
    (tmp_path / "chat.jinja").write_text(tcfg["chat_template"])
    assert bundle_main(["--out", str(tmp_path / "b"), "--checkpoint", str(ckpt), "--chat-template",
                        str(tmp_path / "chat.jinja"), "--created", CREATED]) == 0
    m = json.loads((tmp_path / "b/bundle.json").read_text())
    assert m["id"] == "ckpt" and m["training_card"]["kind"] == "hf checkpoint"
    assert json.loads((tmp_path / "b/tokenizer_config.json").read_text())["chat_template"] == tcfg["chat_template"]
    ids = torch.tensor([tok.encode("## Steps\n1. Check the tests.").ids])
    with torch.no_grad():
        want = lm(ids)[0].numpy()
    feeds = {**prefill_feeds(m, ids.numpy()), **rank_zero(m)}
    got = session(tmp_path / "b/lm.onnx").run(["logits"], feeds)[0]
    assert np.abs(got - want).max() < 1e-4


def test_bpe_puts_specials_first_and_round_trips_bytes():
    tok = train_bpe(synthetic_corpus(4000), 300)
    assert [tok.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3]
    text = "Café — 日本 🙂\ttab <|im_end|>"
    ids = tok.encode(text).ids
    assert tok.token_to_id("<|im_end|>") in ids
    assert tok.decode(ids, skip_special_tokens=False) == text
    assert train_bpe(synthetic_corpus(4000), 300).to_str() == tok.to_str()


def test_distill_entry_adds_the_recipe_and_changes_nothing_else(tmp_path, capsys):
    b = tmp_path / "b"
    shutil.copytree(FIXTURE, b)
    before = json.loads((b / "bundle.json").read_text())
    assert "distill" not in before and distill_entry([str(b), "--check"]) == 1
    assert distill_entry([str(b)]) == 0 and "distill written" in capsys.readouterr().out
    after = json.loads((b / "bundle.json").read_text())
    assert after["distill"] == json.loads(RECIPE.read_text())
    assert {k: v for k, v in after.items() if k != "distill"} == before
    assert list(after).index("distill") == list(after).index("training_card") - 1
    for name, entry in after["files"].items():  # bundle.json lists no hash of itself: the table still holds
        assert entry == {"sha256": sha256_file(b / name), "bytes": (b / name).stat().st_size}, name
    assert distill_entry([str(b), "--check"]) == 0 and distill_entry([str(b)]) == 0
    assert "already the recipe" in capsys.readouterr().out
    assert not list(b.glob("*.tmp"))
    with pytest.raises(FileNotFoundError, match="no bundle.json"):
        distill_entry([str(tmp_path)])


def test_committed_fixture_is_what_the_script_makes(tmp_path):
    """Fails when the model, exporter or tokenizer changed without regenerating tests/fixtures/bundle-tiny."""
    script = ROOT / "training/scripts/make_fixture_bundle.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "b")], check=True, capture_output=True)
    fresh = json.loads((tmp_path / "b/bundle.json").read_text())
    committed = json.loads((FIXTURE / "bundle.json").read_text())
    assert fresh["files"] == committed["files"]
    # Ids, texts and greedy tokens exactly; float values to float32 noise, because the last bits of a
    # matmul change with the CPU's kernels (the committed oracle was made on another machine).
    assert_json_close(json.loads((tmp_path / "b/oracle.json").read_text()),
                      json.loads((FIXTURE / "oracle.json").read_text()), "oracle.json")


def assert_json_close(got, want, where: str, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    if where.endswith(".min_margin"):
        atol = 1.5e-4  # the script rounds it to 4 places: float noise may cross one rounding boundary
    if isinstance(want, float) or (isinstance(want, int) and isinstance(got, float)):
        assert isinstance(got, (int, float)) and abs(got - want) <= atol + rtol * abs(want), f"{where}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), f"{where}: keys differ"
        for k in want:
            assert_json_close(got[k], want[k], f"{where}.{k}", rtol, atol)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: lengths differ"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_json_close(g, w, f"{where}[{i}]", rtol, atol)
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"
