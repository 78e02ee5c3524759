"""The GGUF gate (export/gguf_gate.py): every crafted header of tests/fixtures/gguf-gate-cases.json (the
cases the Node gate answers too) gets the same answer here, in a child process holding at most 300 MB;
`bundle create --from-gguf` (python -m pskills_train.export.from_gguf) refuses such files with one
`error:` line before torch loads; GGUFReader never reads the metadata. Times: bench/gguf_gate.py."""

from __future__ import annotations

import argparse
import os
import re
import struct
import sys
from pathlib import Path

import pytest

from gguf_cases import gate_in_child, load_cases, measure, write_case, write_model_header
from gguf_tiny import write_gguf
from pskills_train.export import gguf_gate as gate

CASES = load_cases()
MAX_RSS_MB = 300


def case(name: str) -> dict:
    return next(c for c in CASES["cases"] if c["name"] == name)


def test_limits_are_the_shared_ones():
    lim = CASES["limits"]
    assert (lim["max_keys"], lim["max_tensors"], lim["max_key_bytes"], lim["max_string_bytes"],
            lim["max_array_bytes"], lim["max_metadata_bytes"], lim["max_alignment"], lim["max_dims"]) == (
        gate.MAX_KEYS, gate.MAX_TENSORS, gate.MAX_KEY_BYTES, gate.MAX_STRING_BYTES, gate.MAX_ARRAY_BYTES,
        gate.MAX_METADATA_BYTES, gate.MAX_ALIGNMENT, gate.MAX_DIMS)
    assert lim["versions"] == [2, 3] and lim["min_element_bytes"] == {"string": 8, "array": 12}
    assert gate.TIME_BUDGET_S * 1000 < lim["budget_ms"]


def test_importer_needs_are_the_shared_ones(tmp_path):
    imp = CASES["importer"]
    assert [k for k, _, _ in gate.REQUIRED_KEYS] == imp["required_keys"] and gate.MAX_LAYERS == imp["max_layers"]
    name = "a llama header with every metadata key the importer needs, of its tensors only token_embd.weight"
    path = write_case(case(name), tmp_path)
    # Its keys pass; the tensors LlamaLM needs are checked next, before torch loads.
    with pytest.raises(gate.GGUFGateError, match=r"tensor 'output_norm\.weight' missing \(10 of 11 missing\)"):
        gate.check_importable(gate.check_gguf(path))


def test_tables_copied_from_gguf_and_the_importer_agree():
    from gguf.constants import GGML_QUANT_SIZES

    import pskills_train.export.from_gguf as fg

    assert gate.GGML_SIZES == {int(k): v for k, v in GGML_QUANT_SIZES.items()}
    assert gate.ARCHITECTURES == fg.ARCHITECTURES
    assert set(gate.GLOBAL_TENSORS) == {*fg._GLOBAL, "rope_freqs.weight"}
    assert set(gate.LAYER_TENSORS) == set(fg._LAYER)


@pytest.mark.parametrize("c", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_shared_case(c, tmp_path):
    got = gate_in_child(write_case(c, tmp_path))
    assert got["rc"] == 0, got
    if c["refusal"] is None:
        assert got["output"].strip() == "passed", got
    else:
        assert got["output"].startswith("refused: "), got
        assert c["refusal"] in got["output"], got
        assert str(tmp_path) in got["output"], got  # names the file
    assert got["rss_mb"] <= MAX_RSS_MB, got


def test_time_budget(tmp_path):
    path = write_case(case("10^6 empty strings (an 8 MB sparse file): within every cap"), tmp_path)
    gate.check_gguf(path)
    with pytest.raises(gate.GGUFGateError, match=r"passed its time budget .* in the value of metadata key "
                       r"'tokenizer\.ggml\.tokens'"):
        gate.check_gguf(path, budget_s=0.01)


@pytest.mark.parametrize("variant, spm", [("llama", True), ("qwen2", False)])
def test_values_equal_gguf_readers(tmp_path, variant, spm):
    from gguf import GGUFReader

    path = write_gguf(tmp_path / "m.gguf", variant, spm=spm)
    header = gate.check_gguf(path)
    reader = GGUFReader(path)
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    assert keys == list(header.values)
    for k in keys:
        assert header.value(k) == reader.fields[k].contents(), k
    assert (header.data_offset, header.tensor_count) == (reader.data_offset, len(reader.tensors))
    got = [(t.name, list(t.dims)) for t in header.tensors or []]
    assert got == [(t.name, t.shape.tolist()) for t in reader.tensors]


# ------------------------------------------------------------------------------------------ the importer


def cli(*args: str) -> dict:
    return measure([sys.executable, "-m", "pskills_train.export.from_gguf", *args, "--train-step-buckets", "none"],
                   timeout=120)


def assert_refused(got: dict, path: Path, word: str) -> None:
    lines = got["output"].strip().splitlines()
    assert got["rc"] == 1 and len(lines) == 1 and lines[0].startswith("error: "), got
    assert str(path) in lines[0] and word in lines[0], got
    assert "Traceback" not in got["output"]
    assert got["rss_mb"] <= MAX_RSS_MB, got  # the gate ran before torch loaded


CLI_CASES = {  # the probe's files; the word the refusal holds
    "the 134-byte file: an array of 10^9 uint8": "array",
    "10^6 empty strings (an 8 MB sparse file): within every cap": "llama.block_count' missing",
    "a 4 KB sparse file whose one key claims 400 MB": "key length",
    "general.alignment = 0": "general.alignment",
    "a FIFO": "a FIFO (named pipe), not a regular file",
}


@pytest.mark.parametrize("name", CLI_CASES)
def test_bundle_create_refuses_crafted_files(name, tmp_path):
    path = write_case(case(name), tmp_path)
    out = tmp_path / "out"
    assert_refused(cli(str(path), "--out", str(out)), path, CLI_CASES[name])
    assert not out.exists()


def ok_llama(tmp_path: Path) -> Path:
    """The probe's ok_llama.gguf: every limit kept, an architecture, a block count and token_embd.weight, but
    none of the sizes: it reached torch (3.5 s, 330 MB) before the importer said 'llama.embedding_length'."""
    s = lambda t: struct.pack("<Q", len(t)) + t.encode()  # noqa: E731
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 2) + s("general.architecture") + struct.pack("<I", 8) + s("llama")
    head += s("llama.block_count") + struct.pack("<II", 4, 1)
    head += s("token_embd.weight") + struct.pack("<IQQIQ", 2, 32, 4, 0, 0)
    path = tmp_path / "ok_llama.gguf"
    path.write_bytes(head + bytes(-len(head) % 32) + bytes(512))
    return path


def test_a_header_without_a_key_the_importer_needs_is_refused_before_torch(tmp_path):
    path = ok_llama(tmp_path)
    got = cli(str(path), "--out", str(tmp_path / "out"))
    assert_refused(got, path, "metadata key 'llama.embedding_length' missing; the importer needs it")
    assert not (tmp_path / "out").exists()


def test_an_import_refuses_more_tensors_than_a_model_has_from_the_preamble(tmp_path):
    """10⁶ tensors in a 4 KB file: the gate walks them (refused as truncated); the importer refuses them from the
    preamble (the probe's 10⁶ and 999,999-tensor files took the whole 1.5 s budget)."""
    path = write_case(case("a tensor count of 10^6 in a 4 KB file"), tmp_path)
    with pytest.raises(gate.GGUFGateError, match="truncated"):
        gate.check_gguf(path)
    with pytest.raises(gate.GGUFGateError, match=r"1,000,000 tensors: more than a model this importer builds has "
                       r"\(at most 13,316, for 1,024 layers\)"):
        gate.check_gguf(path, importing=True)


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_each_key_the_importer_needs_is_checked_by_the_gate(tmp_path, variant):
    """Each of REQUIRED_KEYS renamed away (same length, so every offset stays) in a file the importer builds:
    the gate names it; with a wrong value type, names the type."""
    good = write_gguf(tmp_path / "m.gguf", variant)
    assert gate.check_importable(gate.check_gguf(good)) == variant
    raw = good.read_bytes()
    for pattern, _, _ in gate.REQUIRED_KEYS:
        key = pattern.replace("{arch}", variant).encode()
        assert raw.count(struct.pack("<Q", len(key)) + key) == 1, key
        bad = tmp_path / "bad.gguf"
        bad.write_bytes(raw.replace(struct.pack("<Q", len(key)) + key, struct.pack("<Q", len(key)) + key[:-1] + b"~"))
        with pytest.raises(gate.GGUFGateError, match=f"metadata key '{key.decode()}' missing; the importer needs it"):
            gate.check_importable(gate.check_gguf(bad))
    # The type: embedding_length as a float32 (4 bytes either way).
    key = f"{variant}.embedding_length".encode()
    at = raw.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
    assert struct.unpack_from("<I", raw, at)[0] == 4  # uint32
    bad.write_bytes(raw[:at] + struct.pack("<I", 6) + raw[at + 4:])
    with pytest.raises(gate.GGUFGateError, match=f"'{key.decode()}' is a float32; the importer needs an integer"):
        gate.check_importable(gate.check_gguf(bad))


@pytest.mark.parametrize("c", CASES["importer_cases"], ids=lambda c: c["name"])
def test_shared_importer_case(c, tmp_path):
    """The case file's headers that pass the gate: the importer's checks find the same problem as the Node gate
    (tests/unit/models/gguf-gate.test.ts), or none."""
    path = write_case({**c, "refusal": None}, tmp_path)
    header = gate.check_gguf(path)
    if c["problem"] is None:
        assert gate.check_importable(header) == "llama"
    else:
        with pytest.raises(gate.GGUFGateError) as e:
            gate.check_importable(header)
        assert str(e.value) == f"{path}: {c['problem']}"


def with_u32(src: Path, dst: Path, key: str, value: int) -> Path:
    """`src` with the uint32 value of metadata key `key` replaced in place."""
    raw = bytearray(src.read_bytes())
    k = key.encode()
    at = raw.index(struct.pack("<Q", len(k)) + k) + 8 + len(k)
    assert struct.unpack_from("<I", raw, at)[0] == 4  # uint32
    struct.pack_into("<I", raw, at + 4, value)
    dst.write_bytes(bytes(raw))
    return dst


@pytest.mark.parametrize("key, value, says", [
    ("llama.feed_forward_length", 64, r"tensor 'blk\.0\.ffn_gate\.weight' has shape \(128, 64\), the metadata "
                                      r"implies \(64, 64\)"),
    ("llama.attention.head_count", 3, r"llama\.attention\.head_count 3 is not a multiple of head_count_kv 2"),
    ("tokenizer.ggml.eos_token_id", 10**6, r"tokenizer\.ggml\.eos_token_id = 1000000 is outside the \d+ tokens"),
])
def test_what_the_importer_checks_after_torch_is_refused_before_it(tmp_path, key, value, says):
    """Every key present, but a size that does not match the tensors, or an end-of-text id outside the tokens: the
    importer refused these only after torch loaded (2-3 s, 330 MB); the gate refuses them first."""
    path = with_u32(write_gguf(tmp_path / "m.gguf", "llama"), tmp_path / "bad.gguf", key, value)
    got = cli(str(path), "--out", str(tmp_path / "out"))
    assert_refused(got, path, "")
    assert re.search(says, got["output"]), got


def test_a_sparse_file_claiming_a_huge_model_is_refused_before_torch(tmp_path, monkeypatch, capsys):
    """A Llama-70B header over a hole (141 GB apparent, a few KB on disk): every shape agrees with the metadata,
    so only the memory estimate refuses it, which ran after torch (4.5 s, 381 MB). The gate checks the estimate
    without the train-step graphs' share (a lower bound of the importer's) from the header; then the disk."""
    path = write_model_header(tmp_path / "big.gguf", 8192, 64, 8, 28672, 80, 128256)
    got = cli(str(path), "--out", str(tmp_path / "out"))
    assert_refused(got, path, "70,553.7 M parameters (282.21 GB as float32): building the bundle needs about "
                              "496.08 GB of memory")
    got = cli(str(path), "--out", str(tmp_path / "out"), "--weights", "q4")  # 6 bytes per float32 byte
    assert_refused(got, path, "needs about 1695.49 GB of memory")
    from pskills_train.export import gguf_resources

    monkeypatch.setattr(gguf_resources, "mem_available", lambda: 10**15)
    monkeypatch.setattr(gguf_resources.shutil, "disk_usage", lambda p: type("U", (), {"free": 10**11})())
    with pytest.raises(SystemExit):
        gate.gate_cli([str(path), "--out", str(tmp_path / "out")])
    assert f"the bundle needs about 564.43 GB of disk in {tmp_path}, 100.00 GB is free" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_llama3_rope_factors_are_checked_before_torch(tmp_path):
    """rope_freqs.weight (Llama 3.1's RoPE scaling as per-frequency divisors) that match no llama3 scaling were
    refused after torch loaded (3.0 s, 337 MB); the gate reads the head_dim / 2 numbers and matches them first."""
    good = gate.llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    ok = write_model_header(tmp_path / "ok.gguf", 512, 4, 2, 1024, 1, 64, rope_freqs=good)
    assert gate.check_importable(gate.check_gguf(ok)) == "llama"
    bad = write_model_header(tmp_path / "bad.gguf", 512, 4, 2, 1024, 1, 64, rope_freqs=good[::-1])
    assert_refused(cli(str(bad), "--out", str(tmp_path / "out")), bad,
                   "tensor 'rope_freqs.weight' holds RoPE factors that match no llama3 scaling")
    short = write_model_header(tmp_path / "short.gguf", 512, 4, 2, 1024, 1, 64, rope_freqs=good[:8])
    with pytest.raises(gate.GGUFGateError, match=r"'rope_freqs\.weight' has shape \(8,\); a head of 128 "
                       r"dimensions needs \(64,\)"):
        gate.check_importable(gate.check_gguf(short))
    assert not (tmp_path / "out").exists()


def test_bundle_create_refuses_a_device(tmp_path):
    assert_refused(cli("/dev/zero", "--out", str(tmp_path / "out")), Path("/dev/zero"), "a character device")
    link = tmp_path / "zero.gguf"
    link.symlink_to("/dev/zero")
    assert_refused(cli(str(link), "--out", str(tmp_path / "out")), link, "(a link to /dev/zero): a character device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["zero.gguf"]


def test_only_the_tensors_of_a_model_reach_gguf_reader(tmp_path, capsys):
    from pskills_train.export.from_gguf import main

    path = write_gguf(tmp_path / "m.gguf", "llama")
    full = bytearray(path.read_bytes())
    struct.pack_into("<Q", full, 8, struct.unpack_from("<Q", full, 8)[0] + 1)  # one tensor more than written
    extra = b"".join([struct.pack("<Q", 5), b"evil0", struct.pack("<IQ", 1, 16), struct.pack("<IQ", 0, 0)])
    h = gate.check_gguf(path)
    pad = bytes(-(h.table_end + len(extra)) % h.alignment)
    bad = tmp_path / "extra.gguf"
    bad.write_bytes(bytes(full[:h.table_end]) + extra + pad + bytes(full[h.data_offset:]))
    assert main([str(bad), "--out", str(tmp_path / "o")]) == 1
    assert "tensor 'evil0' is not part of a llama model this importer builds (2 layers)" in capsys.readouterr().err


def with_junk_array(src: Path, dst: Path, count: int) -> Path:
    """`src` with one more metadata key: an array of `count` empty strings, before the tensor table (its
    length a multiple of 32, so that the data section stays aligned)."""
    h = gate.check_gguf(src)
    raw = bytearray(src.read_bytes())
    struct.pack_into("<Q", raw, 16, len(h.values) + 1)
    kv = struct.pack("<Q", 8) + b"junk.arr" + struct.pack("<IIQ", 9, 8, count) + bytes(8 * count)
    assert len(kv) % 32 == 0
    dst.write_bytes(bytes(raw[:h.metadata_end]) + kv + bytes(raw[h.metadata_end:]))
    return dst


READER_CHILD = """
import resource, sys
from pathlib import Path
from pskills_train.export.from_gguf import _open_reader, read_meta
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
reader = _open_reader(Path(sys.argv[1]))
meta = read_meta(reader, Path(sys.argv[1]))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(reader.tensors), len(meta.need("tokenizer.ggml.tokens")), (after - before) / 1024)
"""


def test_gguf_reader_never_walks_the_metadata(tmp_path):
    """10⁶ empty strings cost GGUFReader 1.6 GB when it read the metadata; now the gate's values are read,
    decoded per key when asked."""
    path = with_junk_array(write_gguf(tmp_path / "m.gguf", "llama"), tmp_path / "junk.gguf", 10**6)
    got = measure([sys.executable, "-c", READER_CHILD, str(path)])
    tensors, tokens, grew_mb = got["output"].split()
    assert got["rc"] == 0 and int(tensors) == 21 and int(tokens) > 100, got
    assert float(grew_mb) < 100, got


# ------------------------------------------------------------------------------------------ the command line


def test_cli_arguments_find_the_file_as_the_parser_does(monkeypatch):
    from pskills_train.export import from_gguf

    parsers: list[argparse.ArgumentParser] = []

    def grab(self, args=None, namespace=None):
        parsers.append(self)
        raise SystemExit(0)

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_args", grab)
        with pytest.raises(SystemExit):
            from_gguf.main([])
    ap = parsers[0]
    flags = {s for a in ap._actions if a.nargs == 0 for s in a.option_strings} - {"-h", "--help"}
    assert flags == set(gate.FLAGS), "a new flag of from_gguf's parser: add it to gguf_gate.FLAGS"
    for argv in (["m.gguf", "--out", "o"], ["--dtype", "fp16", "m.gguf", "--force"], ["--force", "m.gguf"],
                 ["--out=o", "--rank", "4", "m.gguf"], ["--id", "x", "--", "m.gguf"], ["--train-step-buckets=none",
                                                                                  "m.gguf"]):
        a = ap.parse_args(argv)
        assert gate.cli_arguments(argv) == (str(a.gguf), None if a.out is None else str(a.out)), argv


def test_default_out(tmp_path, capsys):
    from pskills_train.export.from_gguf import main

    assert gate.default_out(Path("/m/x.Q4_0.GGUF")) == Path("/m/x.Q4_0")
    blob = write_gguf(tmp_path / "sha256-0123abcd", "qwen2")  # as Ollama stores its models
    for force in ([], ["--force"]):
        assert main([str(blob), *force]) == 1
        err = capsys.readouterr().err
        assert "does not end in .gguf, so there is no default bundle folder beside it; pass --out DIR" in err, err
        assert "Traceback" not in err
    got = cli(str(blob), "--force")
    assert_refused(got, blob, "pass --out DIR")
    assert sorted(os.listdir(tmp_path)) == ["sha256-0123abcd"]


def test_bundle_create_as_a_command_imports_a_good_file(tmp_path):
    """The path Node takes (python -m …from_gguf): the gate passes a good file and the bundle is written."""
    path = write_gguf(tmp_path / "m.gguf", "qwen2")
    got = cli(str(path), "--out", str(tmp_path / "b"))
    assert got["rc"] == 0 and f"wrote {tmp_path / 'b'}: qwen2 from m.gguf" in got["output"], got
    assert (tmp_path / "b" / "bundle.json").is_file()


def test_a_long_name_is_cut_in_the_message(tmp_path):
    """Names of 64 KiB (within the cap) were repeated whole in the message: 262 KB of `error:` line."""
    name = b"\0" * 60_000
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + struct.pack("<Q", len(name)) + name + struct.pack("<I", 5)
    path = tmp_path / "names.gguf"
    path.write_bytes(head + bytes(64))
    with pytest.raises(gate.GGUFGateError, match=r"has 5 dimensions") as e:
        gate.check_gguf(path)
    assert len(str(e.value)) < 2_000, len(str(e.value))
    assert "(60,000 characters)" in str(e.value)
