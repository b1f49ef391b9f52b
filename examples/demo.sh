#!/usr/bin/env bash
# The demo: a virtual environment with assay and dbt, and the example warehouse end to end on
# DuckDB (init, generate, load bronze, dbt build, dbt source freshness, what landed where).
# Usage: bash examples/demo.sh [DIR]   (default: assay-demo; DIR is relative to where you run it)
# Exit codes are assay's (README, "Exit codes"): 0 built and checked, 1 a problem (dbt's own
# error is printed), 2 the build ran but blocking checks did not pass.
set -euo pipefail
source "$(dirname "$0")/../scripts/venv.sh"
assay_venv dbt
exec "$VENV/bin/assay" demo "${1:-assay-demo}"
