"""Python GGUF gate: wall time and peak RSS of each crafted header of tests/fixtures/gguf-gate-cases.json,
through the gate alone (a child running gguf_gate.check_gguf) and through `python -m
pskills_train.export.from_gguf FILE --out DIR` (the importer, which runs the gate before torch loads).
Targets: each refused in <= 2 s and <= 300 MB. Prints a table, writes bench/results/gguf-gate-python.json.

    PYTHONPATH=training/src:training/tests training/.venv/bin/python bench/gguf_gate.py
"""

import json
import platform
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from gguf_cases import ROOT, gate_in_child, load_cases, measure, write_case

cases = load_cases()
rows = []
with tempfile.TemporaryDirectory() as tmp:
    for i, c in enumerate(cases["cases"]):
        folder = Path(tmp) / str(i)
        folder.mkdir()
        path = write_case(c, folder)
        gate = gate_in_child(path)
        cli = measure([sys.executable, "-m", "pskills_train.export.from_gguf", str(path), "--out",
                       str(folder / "out"), "--train-step-buckets", "none"], timeout=120)
        rows.append({"case": c["name"], "expected": c["refusal"], "gate": gate["output"].strip()[:160],
                     "gate_s": round(gate["seconds"], 3), "gate_rss_mb": round(gate["rss_mb"], 1),
                     "cli_rc": cli["rc"], "cli": cli["output"].strip().splitlines()[-1][:160] if cli["output"] else "",
                     "cli_s": round(cli["seconds"], 3), "cli_rss_mb": cli["rss_mb"] and round(cli["rss_mb"], 1)})

print(f"{'case':<66} {'gate s':>7} {'MB':>6} {'cli s':>7} {'MB':>6}  refusal")
for r in rows:
    print(f"{r['case'][:66]:<66} {r['gate_s']:>7.3f} {r['gate_rss_mb']:>6.1f} {r['cli_s']:>7.3f} "
          f"{r['cli_rss_mb'] or 0:>6.1f}  {r['expected']}")
worst = {k: max(r[k] or 0 for r in rows) for k in ("gate_s", "gate_rss_mb", "cli_s", "cli_rss_mb")}
print("worst:", worst)
out = ROOT / "bench" / "results" / "gguf-gate-python.json"
out.write_text(json.dumps({"measured": datetime.now(UTC).isoformat(), "machine": platform.processor() or
                           platform.machine(), "python": platform.python_version(), "worst": worst, "cases": rows},
                          indent=1) + "\n")
print(f"wrote {out}")
