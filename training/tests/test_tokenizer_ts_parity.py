"""The default bundle's tokenizer.json gives the same ids in Python (`tokenizers`) and in the studio's
TypeScript engine (`@huggingface/tokenizers` through main/engine/tokenizer.ts), on the validation
text: every skill of the five held-out skill packages (configs/corpus.json `val_skills`), imported by
the studio as the corpus builder does (data/studio_skills.py), plus edge cases."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from pskills_train.data.studio_skills import import_packages

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "resources/bundles/default"
# The held-out packages at the versions ../shared/data/skill-packages.txt pins (corpus.json val_skills).
VAL_SKILL_SPECS = ["@malamute/ai-rules@1.11.0", "@paw-workflow/cli@0.5.0", "@plaited/development-skills@0.8.1",
                   "agent-flutter@0.1.33", "blueprint-os@1.3.1"]
EDGE = ["", " leading space", "trailing space ", "line\r\nbreaks\n\n\n  indented", "Café naïve — 日本語 🙂\ttabs",
        "<|im_start|>user\nhi<|im_end|>\n", "emoji 👩‍💻 and ß ẞ", "a`b_12`: c;d!"]

TS = """
import { readFileSync } from 'node:fs';
import { BundleTokenizer } from '__TOKENIZER_TS__';
const [tokFile, cfgFile, textsFile] = process.argv.slice(-3);
const tok = new BundleTokenizer(JSON.parse(readFileSync(tokFile, 'utf8')), JSON.parse(readFileSync(cfgFile, 'utf8')));
const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
process.stdout.write(JSON.stringify(texts.map((t) => tok.encode(t))));
"""


def test_python_and_typescript_ids_agree_on_the_held_out_skills(tmp_path):
    if not (ROOT / "node_modules" / "tsx").exists():
        pytest.skip("node_modules missing: run `npm ci` in the repo root first (CI does, before pytest)")
    manifest = json.loads((BUNDLE / "bundle.json").read_text())
    assert json.loads((ROOT / "training/configs/corpus.json").read_text())["val_skills"] == \
        [s.rsplit("@", 1)[0] for s in VAL_SKILL_SPECS]
    texts = list(EDGE)
    for run in import_packages(VAL_SKILL_SPECS, ROOT / "training/.cache/npm", tmp_path):
        texts += [r["content"] for r in run.kept]  # the text as the library stores it
    assert len(texts) > 70
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    script = tmp_path / "ids.mts"
    script.write_text(TS.replace("__TOKENIZER_TS__", (ROOT / "main/engine/tokenizer.ts").as_uri()))
    tok_file, cfg_file = BUNDLE / manifest["tokenizer"]["file"], BUNDLE / manifest["tokenizer"]["config"]
    res = subprocess.run(["node", "--import", "tsx", str(script), str(tok_file), str(cfg_file),
                          str(tmp_path / "texts.json")],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    ts_ids = json.loads(res.stdout)
    tok = Tokenizer.from_file(str(tok_file))
    n_tokens = 0
    for text, got in zip(texts, ts_ids, strict=True):
        want = tok.encode(text, add_special_tokens=False).ids
        assert got == want, f"ids differ for {text[:80]!r}"
        n_tokens += len(want)
    assert n_tokens > 100_000  # the comparison covered real text, not only the edge cases
