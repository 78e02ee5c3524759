#!/usr/bin/env bash
# The studio check on held-out skills, as a new user would: import two packages never trained on (agent-flutter,
# blueprint-os; their .tgz files from the corpus build in training/.cache/npm), take 10 of their skills
# spread over the sorted names, run `pskills compare` on each with one prompt, and count the skills
# whose instant column differs from the wrong-skill column. Prints a table, writes
# bench/results/compare-heldout.json. Usage: bash bench/compare-heldout.sh [BUNDLE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-resources/bundles/default}
npm_dir=training/.cache/npm
pkgs=("$npm_dir"/agent-flutter-*.tgz "$npm_dir"/blueprint-os-*.tgz)
for p in "${pkgs[@]}"; do [[ -f $p ]] || { echo "compare-heldout: $p missing (run the corpus build first)" >&2; exit 2; }; done
data=$(mktemp -d); trap 'rm -rf "$data"' EXIT
for p in "${pkgs[@]}"; do node bin/pskills.mjs import "$p" --data-dir "$data" > /dev/null; done
node bin/pskills.mjs skills list --data-dir "$data" --json > "$data/list.json"
prompt="How do I use this skill? Give the steps."
mapfile -t names < <(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1])); rows = rows if isinstance(rows, list) else rows.get("skills", rows)
names = sorted(r["name"] for r in rows); step = max(1, len(names) // 10)
print("\n".join(names[::step][:10]))' "$data/list.json")
for i in "${!names[@]}"; do
  node bin/pskills.mjs compare "${names[$i]}" --bundle "$bundle" --prompt "$prompt" --max-tokens 48 \
    --data-dir "$data" --json > "$data/cmp-$i.json"
done
python3 - "$data" "$bundle" "$prompt" "${names[@]}" <<'PY'
import json, sys
data, bundle, prompt, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = []
for i, name in enumerate(names):
    cols = {c["condition"]: c["text"] for c in json.load(open(f"{data}/cmp-{i}.json"))["columns"]}
    rows.append({"skill": name, "differs": cols["instant"] != cols["wrong_skill"],
                 "differs_from_none": cols["instant"] != cols["none"], "instant": cols["instant"],
                 "wrong_skill": cols["wrong_skill"]})
print(f"{'skill':40} instant≠wrong  instant≠none")
for r in rows:
    print(f"{r['skill'][:40]:40} {str(r['differs']):17} {r['differs_from_none']}")
n = sum(r["differs"] for r in rows)
print(f"instant differs from wrong_skill in {n} of {len(rows)}")
out = {"bundle": bundle, "prompt": prompt, "max_tokens": 48, "differs": n, "of": len(rows), "skills": rows}
json.dump(out, open("bench/results/compare-heldout.json", "w"), indent=1, ensure_ascii=False)
PY
