"""Write a bundle folder under a temporary name and rename it into place, so a failed export never
leaves a partial bundle (docs/bundle-format.md)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_folder(out: Path, force: bool) -> Iterator[Path]:
    """Yields an empty folder beside `out`; when the block succeeds it replaces `out`."""
    if out.exists() and not force:
        raise FileExistsError(f"{out} exists (pass force=True / --force to replace it)")
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
