#!/usr/bin/env bash
# Create (or reuse) one venv per conversation producer and regenerate its four-turn fixtures.
#
#   scripts/capture_producers/run_conversations.sh                 # every producer
#   scripts/capture_producers/run_conversations.sh strands         # some
#
# Env: VENVS (default /work/venvs), PYTHON (default python3.11), VARIANTS (default "confirmed unconfirmed"),
#      OUT (default <repo>/tests/fixtures/conversations). The venv of a producer is conv-<name>, built
# from the requirements file the single-trace captures of the same packages use (pinned, `pip freeze`).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENVS="${VENVS:-/work/venvs}"
PYTHON="${PYTHON:-python3.11}"
OUT="${OUT:-$REPO/tests/fixtures/conversations}"
read -r -a VARIANT_LIST <<< "${VARIANTS:-confirmed unconfirmed}"
# producer  venv  requirements  modes
TABLE="langgraph-openinference conv-langgraph-oi langgraph-openinference plain,stream
langgraph-openllmetry conv-langgraph-ol langgraph-openllmetry plain,stream
openai-agents-otel conv-agents openai-agents-otel plain,stream
pydantic-ai conv-pydanticai pydantic-ai plain,stream
strands conv-strands strands plain,stream
openai-openinference conv-openai-oi openinference plain,stream
openai-otel-genai conv-openai-otel otel-genai-openai plain,stream"

while read -r producer venv_name req_name modes; do
  if [ "$#" -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$producer"; then continue; fi
  req="$HERE/requirements/$req_name.txt"
  venv="$VENVS/$venv_name"
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if ! [ -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
    echo "== creating venv $venv"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    echo "$want" > "$venv/.requirements.sha256"
  fi
  for variant in "${VARIANT_LIST[@]}"; do
    for mode in ${modes//,/ }; do
      # one process per capture: instrumentations patch libraries globally and read env at import
      "$venv/bin/python" "$HERE/capture_conversation.py" "$producer" "$variant" "$mode" \
        "$OUT/$producer/$variant-$mode"
    done
  done
done <<< "$TABLE"
echo "fixtures written under $OUT"
