#!/usr/bin/env bash
# Create (or reuse) one venv per framework producer and regenerate its fixtures.
#
#   scripts/capture_producers/run_frameworks.sh pydantic-ai          # one producer, every scenario x mode
#
# Env: VENVS (default /work/venvs), PYTHON (default python3.11), SCENARIOS (space list),
#      MODES (default "plain stream"), OUT (default <repo>/tests/fixtures/frameworks).
# The venv of producer P is built from requirements/P.txt (a full `pip freeze`), rebuilt when it changes.
# A JavaScript producer (frameworks/node/P/) gets $VENVS/node-P: that venv plus `npm ci` of its lock file.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENVS="${VENVS:-/work/venvs}"
PYTHON="${PYTHON:-python3.11}"
OUT="${OUT:-$REPO/tests/fixtures/frameworks}"
read -r -a SCENARIO_LIST <<< "${SCENARIOS:-chain schema_violation invalid_json parallel}"
read -r -a MODE_LIST <<< "${MODES:-plain stream}"
[ "$#" -gt 0 ] || { echo "usage: $0 PRODUCER..." >&2; exit 2; }

for producer in "$@"; do
  req="$HERE/requirements/$producer.txt"
  venv="$VENVS/$producer"
  node_src="$HERE/frameworks/node/$producer"  # a JavaScript producer: its npm packages join the venv
  locks=("$req")
  if [ -d "$node_src" ]; then venv="$VENVS/node-$producer"; locks+=("$node_src/package-lock.json"); fi
  want="$(cat "${locks[@]}" | sha256sum | cut -d' ' -f1)"
  if ! [ -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
    echo "== creating venv $venv"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    if [ -d "$node_src" ]; then
      cp "$node_src/package.json" "$node_src/package-lock.json" "$venv/"
      (cd "$venv" && npm ci --no-audit --no-fund --silent)
    fi
    echo "$want" > "$venv/.requirements.sha256"
  fi
  for scenario in "${SCENARIO_LIST[@]}"; do
    for mode in "${MODE_LIST[@]}"; do
      # one process per capture: instrumentations patch libraries globally and read env at import
      "$venv/bin/python" "$HERE/capture_framework.py" "$producer" "$scenario" "$mode" \
        "$OUT/$producer/$scenario-$mode"
    done
  done
done
echo "fixtures written under $OUT"
