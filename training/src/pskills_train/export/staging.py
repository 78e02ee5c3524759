"""Write a bundle folder under a temporary name and rename it into place, so a failed export never
leaves a partial bundle (docs/bundle-format.md).

`--force` replaces only a folder the studio wrote: one holding MARKER (written into every bundle folder
made here), or a bundle from before the marker (a bundle.json of format pskills.bundle/N, read only when it
is a regular file of at most 4 MiB: a FIFO or /dev/zero there is never opened). Anything else, a person's
folder or a file, is refused with what it holds. The staging folder `.OUT.tmp-PID` goes on any
exit Python sees (an exception, SIGTERM, SIGINT); after a kill -9 the next staging beside it removes it,
once its process is gone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

MARKER = ".pskills-bundle"
BUNDLE_JSON_LIMIT = 4 << 20  # READ_LIMITS["bundle.json"] in main/files/read-gate.ts
MARKER_TEXT = "A model bundle folder written by ParametricSkills Studio; `--force` may replace it.\n"
_STAGING = re.compile(r"\.(.+)\.tmp-(\d+)")


def is_ours(folder: Path) -> bool:
    """A bundle folder the studio wrote: MARKER inside, or a bundle.json of format pskills.bundle/N."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    if (folder / MARKER).is_file():
        return True
    try:
        m = json.loads(_read_small(folder / "bundle.json"))
    except (OSError, ValueError):
        return False
    return isinstance(m, dict) and re.fullmatch(r"pskills\.bundle/\d+", str(m.get("format"))) is not None


def _read_small(path: Path) -> bytes:
    """A regular file of at most BUNDLE_JSON_LIMIT bytes, never a FIFO or device (a person's folder may hold
    one: the open would wait for good, /dev/zero would never end); anything else raises OSError."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size > BUNDLE_JSON_LIMIT:
        raise OSError(f"{path}: not a regular file of at most {BUNDLE_JSON_LIMIT:,} bytes")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        return os.read(fd, BUNDLE_JSON_LIMIT + 1)
    finally:
        os.close(fd)


def _holds(path: Path) -> str:
    if path.is_symlink():
        return f"is a symbolic link to {os.readlink(path)}"
    if not path.is_dir():
        return f"is a file ({path.stat().st_size:,} bytes), not a bundle folder"
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return f"holds {shown}, and no {MARKER} or pskills bundle.json"


def check_replaceable(out: Path, force: bool) -> None:
    """Refuses an existing `out` unless `force` and the studio wrote it (an empty folder goes too)."""
    if not out.exists() and not out.is_symlink():
        return
    if not force:
        raise FileExistsError(f"{out} exists (pass --force to replace it)")
    if is_ours(out) or (out.is_dir() and not out.is_symlink() and not any(out.iterdir())):
        return
    raise FileExistsError(f"{out} {_holds(out)}: not a folder the studio wrote, so --force does not replace it; "
                          f"choose another --out, or move it away")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(parent: Path) -> list[Path]:
    """Staging folders in `parent` left by a process that no longer runs (kill -9, a crash of Python
    itself); only those holding MARKER, so nothing else by that name is touched."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = _STAGING.fullmatch(p.name)
        if m and int(m[2]) != os.getpid() and not p.is_symlink() and (p / MARKER).is_file() and not _alive(int(m[2])):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


class _ExitOnSignal:
    """SIGTERM and SIGINT raise SystemExit(128 + signal) while staging, so the `finally` below removes
    the folder; the previous handlers come back afterwards. Only the main thread can set handlers."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __enter__(self) -> None:
        self.saved: dict[int, object] = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for s in self.SIGNALS:
            if signal.getsignal(s) is signal.SIG_IGN:
                continue
            self.saved[s] = signal.signal(s, self._raise)

    @staticmethod
    def _raise(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    def __exit__(self, *exc: object) -> None:
        for s, h in self.saved.items():
            signal.signal(s, h)  # type: ignore[arg-type]


@contextmanager
def staged_folder(out: Path, force: bool) -> Iterator[Path]:
    """Yields an empty folder beside `out` (MARKER in it); when the block succeeds it replaces `out`."""
    check_replaceable(out, force)
    remove_stale(out.parent)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    if tmp.exists() or tmp.is_symlink():
        if not is_ours(tmp):
            raise FileExistsError(f"{tmp} {_holds(tmp)}: in the way of the staging folder; move it away")
        shutil.rmtree(tmp)
    with _ExitOnSignal():
        try:
            tmp.mkdir(parents=True)
            (tmp / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
            yield tmp
            if out.exists() or out.is_symlink():
                check_replaceable(out, force)  # again: `out` may have appeared while the bundle was built
                shutil.rmtree(out)
            os.replace(tmp, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
