"""export/staging.py: `--force` replaces only a folder the studio wrote (its marker, or a pskills
bundle.json from before the marker), through `bundle create --from-gguf` and `--from-hf` too; the
staging folder goes on an exception, SIGTERM and SIGINT, and after a kill -9 the next run removes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gguf_cases import SRC
from gguf_tiny import write_gguf
from pskills_train.export.manifest import file_table
from pskills_train.export.staging import MARKER, check_replaceable, is_ours, staged_folder


def persons_folder(path: Path) -> Path:
    path.mkdir()
    (path / "notes.txt").write_text("mine")
    (path / "sub").mkdir()
    (path / "sub" / "deep.txt").write_text("also mine")
    return path


def untouched(path: Path) -> bool:
    return (path / "notes.txt").read_text() == "mine" and (path / "sub" / "deep.txt").read_text() == "also mine"


def test_force_refuses_a_folder_the_studio_did_not_write(tmp_path):
    out = persons_folder(tmp_path / "out")
    with pytest.raises(FileExistsError, match=r"out holds notes\.txt, sub/, and no \.pskills-bundle or pskills "
                       r"bundle\.json: not a folder the studio wrote, so --force does not replace it"):
        with staged_folder(out, force=True) as tmp:
            (tmp / "lm.onnx").write_text("x")
    assert untouched(out) and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match=r"file is a file \(1 bytes\), not a bundle folder"):
        check_replaceable(tmp_path / "file", force=True)
    with pytest.raises(FileExistsError, match=r"exists \(pass --force to replace it\)"):
        check_replaceable(out, force=False)


def test_force_replaces_its_own_bundles(tmp_path):
    out = tmp_path / "out"
    with staged_folder(out, force=False) as tmp:
        (tmp / "lm.onnx").write_text("1")
        assert list(file_table(tmp)) == ["lm.onnx"]  # the marker is not a bundle file
    assert (out / MARKER).is_file() and is_ours(out)
    with staged_folder(out, force=True) as tmp:
        (tmp / "lm.onnx").write_text("2")
    assert (out / "lm.onnx").read_text() == "2"
    old = tmp_path / "old"  # a bundle from before the marker
    old.mkdir()
    (old / "bundle.json").write_text(json.dumps({"format": "pskills.bundle/1"}))
    assert is_ours(old)
    check_replaceable(old, force=True)
    (old / "bundle.json").write_text(json.dumps({"format": "something/1"}))
    assert not is_ours(old)
    empty = tmp_path / "empty"
    empty.mkdir()
    check_replaceable(empty, force=True)  # nothing in it to lose


def test_bundle_create_force_leaves_a_persons_folder(tmp_path, capsys):
    from pskills_train.commands.from_hf import main as from_hf
    from pskills_train.export.from_gguf import main as from_gguf

    out = persons_folder(tmp_path / "out")
    gguf = write_gguf(tmp_path / "m.gguf", "qwen2")
    assert from_gguf([str(gguf), "--out", str(out), "--force"]) == 1
    err = capsys.readouterr().err
    assert f"error: {out} holds notes.txt, sub/" in err and "--force does not replace it" in err, err
    assert from_hf(["--from-hf", str(tmp_path), "--out", str(out), "--force"]) == 1
    assert f"error: {out} holds notes.txt, sub/" in capsys.readouterr().err
    assert untouched(out)



# A person's folder whose bundle.json is a FIFO or a link to /dev/zero: deciding whether the studio wrote it
# used to open and read it whole, so `--force` waited on the FIFO for good and read /dev/zero until memory ran
# out (3.8 GB in 6 s). Each runs in a child with a deadline and, for the light check, a 1 GB address space.
CHECK_CHILD = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pskills_train.export.staging import check_replaceable
try:
    check_replaceable(Path(sys.argv[1]), force=True)
except FileExistsError as e:
    print(e)
"""


@pytest.mark.parametrize("special", ["fifo", "devzero"])
def test_force_never_opens_a_special_bundle_json(tmp_path, special):
    out = persons_folder(tmp_path / "out")
    if special == "fifo":
        os.mkfifo(out / "bundle.json")
    else:
        (out / "bundle.json").symlink_to("/dev/zero")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    r = subprocess.run([sys.executable, "-c", CHECK_CHILD, str(out)], capture_output=True, text=True, timeout=30,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert f"{out} holds bundle.json, notes.txt, sub/, and no .pskills-bundle" in r.stdout, r.stdout
    # The same through the CLI (`bundle create --from-hf … --force` checks --out before the checkpoint).
    r = subprocess.run([sys.executable, "-m", "pskills_train.commands.from_hf", "--from-hf", str(tmp_path),
                        "--out", str(out), "--force"], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 1 and "--force does not replace it" in r.stderr, r.stderr
    assert untouched(out)

# SIGINT as an interactive shell or Node's spawn leaves it (a background job of a script inherits it ignored,
# and an ignored SIGINT never ends the process, so nothing needs removing then).
STAGING_CHILD = """
import signal, sys, time
from pathlib import Path
from pskills_train.export.staging import staged_folder
signal.signal(signal.SIGINT, signal.default_int_handler)
with staged_folder(Path(sys.argv[1]), force=False) as tmp:
    (tmp / "lm.onnx").write_bytes(bytes(1000))
    print("staged", tmp, flush=True)
    time.sleep(60)
"""


def stage_in_child(out: Path) -> tuple[subprocess.Popen, Path]:
    child = subprocess.Popen([sys.executable, "-c", STAGING_CHILD, str(out)], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(SRC)})
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert line[0] == "staged", line
    tmp = Path(line[1])
    assert tmp.is_dir() and tmp.name == f".out.tmp-{child.pid}"
    return child, tmp


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_removes_the_staging_folder(tmp_path, sig):
    child, tmp = stage_in_child(tmp_path / "out")
    child.send_signal(sig)
    assert child.wait(30) == 128 + sig
    assert list(tmp_path.iterdir()) == []


def test_after_kill_9_the_next_run_removes_the_staging_folder(tmp_path):
    child, tmp = stage_in_child(tmp_path / "out")
    child.kill()
    child.wait(30)
    assert tmp.is_dir()  # nothing can run on SIGKILL
    mine = tmp_path / ".other.tmp-1"  # by that pattern, but not the studio's: kept
    mine.mkdir()
    with staged_folder(tmp_path / "out", force=False) as t:
        (t / "lm.onnx").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.tmp-1", "out"]
