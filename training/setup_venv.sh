#!/usr/bin/env bash
# Create or refresh training/.venv. Idempotent: a second run is a no-op while pyproject.toml and
# constraints.txt are unchanged (their hash is kept in the venv's marker file).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
marker="$venv/.pskills-installed"
want="$(cat "$here/pyproject.toml" "$here/constraints.txt" "$here/setup_venv.sh" | sha256sum | cut -d' ' -f1)"

if [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; then
  echo "training/.venv is up to date"
  exit 0
fi

[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check)
# torch first, pinned exactly: any other spec pulls a multi-GB CUDA build (shared/ENVIRONMENT.md).
"${pip[@]}" "torch==2.13.0"
(cd "$here" && "${pip[@]}" -c constraints.txt -e '.[dev]')
echo "$want" > "$marker"
echo "training/.venv ready"
