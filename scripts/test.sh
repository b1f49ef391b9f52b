#!/usr/bin/env bash
# The test command: a fresh virtual environment, assay with its test extras, the whole suite.
# Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ASSAY_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e ".[test]"
exec "$VENV/bin/python" -m pytest -n 2 --dist loadfile "$@"
