"""Build the pretraining corpus: Debian documentation prose + npm SKILL.md files, split by package.

    python -m pskills_train.data.build_corpus --out DIR [--cache DIR] [--config configs/corpus.json]

Writes DIR/{docs_train,skills_train,docs_val,skills_val}/*.jsonl, DIR/copyright/<pkg>.copyright and
DIR/manifest.json (packages, versions, bytes kept, file counts, licences, skills, the split). The
output is assembled in DIR.partial and swapped in at the end. With a warm cache (debs, unpacked
trees, npm tarballs, extracted text) a re-run downloads nothing and writes the same bytes.

Skills are the ones the studio's importer keeps: each pinned package goes through `pskills import`
into a scratch library and `pskills skills export --jsonl` lists them (studio_skills.py), so the
build needs node and the repository's node_modules (`npm ci`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .config import REPO, CorpusConfig, read_list
from .debian import copyright_text, download, licence_summary, unpack
from .doc_stage import Deduper, extract_packages
from .shards import SPLITS, ShardWriter
from .studio_skills import corpus_text, import_packages, split_spec

DEFAULT_CONFIG = REPO / "training/configs/corpus.json"
DEFAULT_CACHE = REPO / "training/.cache"


def build_docs(cfg: CorpusConfig, cache: Path, out: Path, writers: dict[str, ShardWriter]) -> list[dict[str, Any]]:
    names = sorted(read_list(cfg.list_path(cfg.debian_list)))
    unknown = sorted(set(cfg.val_debian) - set(names))
    if unknown:
        raise ValueError(f"val_debian names packages not in {cfg.debian_list}: {unknown}")
    download(names, cache / "debs")
    pkgs = [unpack(n, cache / "debs", cache / "debian") for n in tqdm(names, desc="unpack", unit="deb")]
    dedup = Deduper(cfg.dedup_min_words, cfg.min_doc_chars)
    (out / "copyright").mkdir(parents=True)
    entries = []
    for ex in extract_packages(pkgs, cfg.skip_paths, cache / "text", cfg.workers):
        split = "docs_val" if ex.pkg.name in cfg.val_debian else "docs_train"
        before = dedup.dropped_paragraphs
        kept_docs = kept_bytes = 0
        for rel, pars in ex.docs:
            text = dedup.document(pars)
            if text is None:
                continue
            writers[split].write({"id": f"{ex.pkg.name}/{rel}", "package": ex.pkg.name, "text": text})
            kept_docs += 1
            kept_bytes += len(text.encode("utf-8"))
        cr_text, cr_owner = copyright_text(ex.pkg, cache / "debs")
        (out / "copyright" / f"{ex.pkg.name}.copyright").write_text(cr_text, encoding="utf-8")
        entries.append({
            "package": ex.pkg.name, "version": ex.pkg.version, "deb": ex.pkg.deb.name, "split": split,
            "files_read": ex.files_seen, "files_skipped": ex.skipped, "files_kept": kept_docs,
            "bytes_kept": kept_bytes, "duplicate_paragraphs": dedup.dropped_paragraphs - before,
            "licences": licence_summary(cr_text),
            "copyright": f"copyright/{ex.pkg.name}.copyright", "copyright_from": cr_owner,
        })
    return entries


def build_skills(cfg: CorpusConfig, cache: Path, writers: dict[str, ShardWriter]) -> list[dict[str, Any]]:
    """The skills the studio's importer keeps from the pinned packages (studio_skills.py), split by package."""
    specs = sorted(read_list(cfg.list_path(cfg.skills_list)), key=lambda s: split_spec(s)[0])
    names = {split_spec(s)[0] for s in specs}
    unknown = sorted(set(cfg.val_skills) - names)
    if unknown:
        raise ValueError(f"val_skills names packages not in {cfg.skills_list}: {unknown}")
    with tempfile.TemporaryDirectory(prefix="pskills-corpus-") as work:
        runs = import_packages(tqdm(specs, desc="skills", unit="pkg"), cache / "npm", Path(work))
    entries = []
    for run in runs:
        split = "skills_val" if run.package in cfg.val_skills else "skills_train"
        texts = [corpus_text(r["content"]) for r in run.kept]
        for r, text in zip(run.kept, texts, strict=True):
            writers[split].write({"id": f"{run.package}/{r['path']}", "package": run.package,
                                  "version": r["packageVersion"], "name": r["name"], "text": text})
        entries.append({
            "package": run.package, "version": run.version, "split": split,
            "licence": run.kept[0]["provenance"]["license"] if run.kept else None,
            "skill_files": run.skill_files, "kept": len(run.kept),
            "bytes_kept": sum(len(t.encode("utf-8")) for t in texts), "skipped": dict(sorted(run.reasons().items())),
            "skills": [{"path": r["path"], "name": r["name"], "licence": r["license"], "body_hash": r["bodyHash"]}
                       for r in run.kept],
        })
    return entries


def build(cfg: CorpusConfig, out: Path, cache: Path) -> dict[str, Any]:
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    writers = {s: ShardWriter(partial, s, cfg.shard_bytes) for s in SPLITS}
    debian = build_docs(cfg, cache, partial, writers)
    skills = build_skills(cfg, cache, writers)
    totals = {s: w.close() for s, w in writers.items()}
    manifest = {
        "format": "pskills.corpus/1",
        "config": cfg.__dict__,
        "split": {"rule": "by package, explicit lists in the corpus config",
                  "val_debian": sorted(cfg.val_debian), "val_skills": sorted(cfg.val_skills)},
        "splits": totals,
        "debian": debian,
        "skills": skills,
        "skill_counts": dict(sorted(Counter(e["split"] for e in skills for _ in e["skills"]).items())),
    }
    (partial / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    partial.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return manifest


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    args = ap.parse_args(argv)
    t0 = time.time()
    manifest = build(CorpusConfig.load(args.config), args.out.resolve(), args.cache.resolve())
    for split, t in manifest["splits"].items():
        print(f"{split:13s} {t['documents']:7d} docs {t['text_bytes'] / 1e6:9.2f} MB  {len(t['shards'])} shards")
    print(f"skills kept: {manifest['skill_counts']}; {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
