#!/usr/bin/env bash
# The demo: a fresh virtual environment, assay with dbt, and the example warehouse end to end
# on DuckDB (init, generate, load bronze, dbt build, dbt source freshness, what landed where).
# Usage: bash examples/demo.sh [DIR]   (default: ./assay-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ASSAY_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e ".[dbt]"
exec "$VENV/bin/assay" demo "${1:-assay-demo}"
