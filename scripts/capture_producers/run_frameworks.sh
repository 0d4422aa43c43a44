#!/usr/bin/env bash
# Create (or reuse) one venv per framework producer and regenerate its fixtures.
#
#   scripts/capture_producers/run_frameworks.sh pydantic-ai          # one producer, every scenario x mode
#
# Env: VENVS (default /work/venvs), PYTHON (default python3.11), SCENARIOS (space list),
#      MODES (default "plain stream"), OUT (default <repo>/tests/fixtures/frameworks).
# The venv of producer P is built from requirements/P.txt (a full `pip freeze`), rebuilt when it changes.
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
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if ! [ -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
    echo "== creating venv $venv"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
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
