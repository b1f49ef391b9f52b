#!/usr/bin/env bash
# The test command: a virtual environment with assay and its test extras, then the whole suite
# (real dbt, DuckDB, SQLMesh and an embedded PostgreSQL). Needs nothing outside this checkout.
# Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
source "$(dirname "$0")/venv.sh"
assay_venv test
cd "$ASSAY_ROOT"
exec "$VENV/bin/python" -m pytest -n 2 --dist loadfile --no-loadscope-reorder "$@"
