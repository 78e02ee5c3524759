#!/usr/bin/env bash
# The studio path on SkillWorld, as a new user would (docs/distill.md "Practice"): `pskills skillworld
# generate` at SEED, `pskills import` of one skill per family (≤ 512 tokens, the first in the manifest),
# `pskills compile NAME --distill` with no tests set, then `pskills compare --conditions
# in_context,distilled` on every single-turn task of those skills, each answer judged by the task's
# checker. Prints a table, writes bench/results/studio-path-SEED.json.
# Usage: bash bench/studio-path.sh [SEED (default 9173)] [MAX_TOKENS (default 64)]
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-9173}
max_tokens=${2:-64}
py="${PYTHON:-training/.venv/bin/python}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PSKILLS_DATA_DIR="$work/data"
node bin/pskills.mjs skillworld generate --split test --n 30 --out "$work/world" --seed "$seed" > /dev/null
mapfile -t names < <(python3 -c '
import json, sys
picked = {}
for s in json.load(open(sys.argv[1]))["skills"]:
    if s["tokens"] <= 512 and s["family"] not in picked:
        picked[s["family"]] = s["name"]
print("\n".join(picked.values()))' "$work/world/manifest.json")
mkdir -p "$work/six"
for n in "${names[@]}"; do cp -r "$work/world/skills/$n" "$work/six/"; done
node bin/pskills.mjs import "$work/six" > /dev/null
for n in "${names[@]}"; do
  node bin/pskills.mjs compile "$n" --distill --json > "$work/distill-$n.json"
  node bin/pskills.mjs adapters show "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["adapter"])' "$work/distill-$n.json")" --json > "$work/adapter-$n.json"
done
python3 - "$work/world/tasks.jsonl" "$work/tasks.jsonl" "${names[@]}" <<'PY'
import json, sys
src, out, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
rows = [json.loads(line) for line in open(src)]
with open(out, "w") as f:
    for t in rows:
        if t["skill"] in names and len(t["messages"]) == 1 and t["messages"][0]["role"] == "user":
            f.write(json.dumps(t) + "\n")
PY
i=0
while IFS= read -r line; do
  name=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["skill"])' "$line")
  prompt=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["messages"][0]["content"])' "$line")
  node bin/pskills.mjs compare "$name" --prompt "$prompt" --conditions in_context,distilled \
    --max-tokens "$max_tokens" --json > "$work/cmp-$i.json"
  i=$((i + 1))
done < "$work/tasks.jsonl"
PYTHONPATH=training/src "$py" - "$work" "$seed" "$max_tokens" "${names[@]}" <<'PY'
import json, sys
from pskills_train.skillworld.check import check
work, seed, max_tokens, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
tasks = [json.loads(line) for line in open(f"{work}/tasks.jsonl")]
rows = []
for i, t in enumerate(tasks):
    cols = {c["condition"]: c["text"] for c in json.load(open(f"{work}/cmp-{i}.json"))["columns"]}
    rows.append({"task": t["task_id"], "skill": t["skill"], "family": t["family"],
                 **{c: check(t["checker"], cols[c]) for c in ("in_context", "distilled")},
                 "answers": cols})
recipes = {n: json.load(open(f"{work}/adapter-{n}.json"))["recipe"] for n in names}
fams = sorted({r["family"] for r in rows})
print(f"{'family':12} {'tasks':>5} {'in_context':>10} {'distilled':>9}")
for f in fams:
    rs = [r for r in rows if r["family"] == f]
    print(f"{f:12} {len(rs):5} {sum(r['in_context'] for r in rs):10} {sum(r['distilled'] for r in rs):9}")
ic, di = sum(r["in_context"] for r in rows), sum(r["distilled"] for r in rows)
print(f"{'all':12} {len(rows):5} {ic:10} {di:9}   distilled / in_context = {di / max(ic, 1):.2f} (target ≥ 0.9)")
for n, rec in recipes.items():
    print(f"  {n}: {rec['questions']} writer={rec.get('practice', {}).get('writer')}")
out = {"seed": seed, "max_tokens": max_tokens, "skills": names, "in_context": ic, "distilled": di, "tasks": len(rows),
       "ratio": di / max(ic, 1), "recipes": recipes, "rows": rows}
json.dump(out, open(f"bench/results/studio-path-{seed}.json", "w"), indent=1)
print(f"wrote bench/results/studio-path-{seed}.json")
PY
