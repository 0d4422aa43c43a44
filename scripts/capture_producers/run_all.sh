#!/usr/bin/env bash
# Create (or reuse) one venv per producer config and regenerate every producer fixture.
#
#   scripts/capture_producers/run_all.sh                 # all producers x all scenarios
#   scripts/capture_producers/run_all.sh openinference   # only these producers
#
# Env: VENVS (default /work/venvs), PYTHON (default python3.11), SCENARIOS (space list),
#      OUT (default <repo>/tests/fixtures/producers).
# A venv is rebuilt when its requirements file changed (sha256 stamp inside the venv).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENVS="${VENVS:-/work/venvs}"
PYTHON="${PYTHON:-python3.11}"
OUT="${OUT:-$REPO/tests/fixtures/producers}"
read -r -a SCENARIO_LIST <<< "${SCENARIOS:-parallel invalid_json no_ids}"
ALL_PRODUCERS=(otel-openai-v2-default otel-openai-v2-experimental otel-genai-openai openinference openllmetry openllmetry-legacy)
if [ "$#" -gt 0 ]; then PRODUCER_LIST=("$@"); else PRODUCER_LIST=("${ALL_PRODUCERS[@]}"); fi

ensure_venv() {
  local producer="$1"
  local req="$HERE/requirements/$producer.txt"
  local venv="$VENVS/$producer"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
    return
  fi
  echo "== creating venv $venv"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$want" > "$venv/.requirements.sha256"
}

for producer in "${PRODUCER_LIST[@]}"; do
  ensure_venv "$producer"
  for scenario in "${SCENARIO_LIST[@]}"; do
    # one process per capture: instrumentations patch openai globally and read env at import
    "$VENVS/$producer/bin/python" "$HERE/capture.py" "$producer" "$scenario" "$OUT/$producer/$scenario" \
      | { grep -v -e 'Traceloop exporting' -e 'Metrics are disabled' -e 'Setting agent name' -e '^.\[[0-9;]*m$' -e '^$' || true; }
  done
done
echo "fixtures written under $OUT"
