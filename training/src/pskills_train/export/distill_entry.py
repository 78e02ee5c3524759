"""Write the distil recipe (training/configs/distill.json) into existing bundles' bundle.json as its
`distill` object (docs/bundle-format.md, "distill"), the object every exporter now writes.

    python -m pskills_train.export.distill_entry BUNDLE [BUNDLE ...] [--check]

Only bundle.json changes, written beside and renamed into place: it lists every other file's hash and
none of its own, so the file table stays valid. Its bytes are the bundle's hash in the studio's store
(docs/store.md, `bundles.sha256`), so a library that holds the bundle sees a new bundle.json.
--check writes nothing and exits 1 when a bundle's `distill` differs from the recipe file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..distill_recipe import bundle_entry
from .manifest import MANIFEST


def with_recipe(bundle: Path) -> tuple[dict, bool]:
    """bundle.json with `distill` from the recipe file (placed before `training_card`), and whether it changed."""
    path = bundle / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no bundle.json (is {bundle} a bundle folder?)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    entry = bundle_entry()
    if manifest.get("distill") == entry:
        return manifest, False
    rest = {k: v for k, v in manifest.items() if k != "distill"}
    keys = list(rest)
    at = keys.index("training_card") if "training_card" in keys else len(keys)
    return {**{k: rest[k] for k in keys[:at]}, "distill": entry, **{k: rest[k] for k in keys[at:]}}, True


def write_recipe(bundle: Path) -> bool:
    """Writes `distill` into the bundle's bundle.json when it differs; returns whether it did."""
    manifest, changed = with_recipe(bundle)
    if changed:
        path = bundle / MANIFEST
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")  # as the writers write it
        os.replace(tmp, path)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.export.distill_entry",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("bundles", type=Path, nargs="+")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a bundle's recipe differs")
    a = ap.parse_args(argv)
    stale = []
    for b in a.bundles:
        if a.check:
            if with_recipe(b)[1]:
                stale.append(b)
            continue
        print(f"{b}: {'distill written' if write_recipe(b) else 'distill already the recipe'}")
    for b in stale:
        print(f"{b}: bundle.json's distill differs from training/configs/distill.json", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
