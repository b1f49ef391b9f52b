#!/usr/bin/env bash
# The test command: a virtual environment with assay and its test extras, then the whole suite
# (real dbt, DuckDB, SQLMesh, an embedded PostgreSQL and Spark). Needs nothing outside this
# checkout. Usage: bash scripts/test.sh [pytest args]   (tests/README.md has the fast loop)
#
# It prints the 30 slowest tests and every module's total time; with ASSAY_TEST_ARTIFACTS set
# (CI sets it) it also writes a JUnit report there, beside the report screenshot.
set -euo pipefail
source "$(dirname "$0")/venv.sh"
assay_venv test
cd "$ASSAY_ROOT"
# Bytecode is cached (in __pycache__, which git ignores) even where the shell says not to: without
# it every test process compiles assay and rewrites the asserts of every test module again, about
# 5 s of each worker's start.
unset PYTHONDONTWRITEBYTECODE
report=()
if [ -n "${ASSAY_TEST_ARTIFACTS:-}" ]; then
  mkdir -p "$ASSAY_TEST_ARTIFACTS"
  report=(--junitxml "$ASSAY_TEST_ARTIFACTS/junit.xml")
fi
# One worker more than the machine has cores (at most 4): a worker waits on DuckDB's and
# PostgreSQL's writes and on its servers, and a third worker on the 2-core CI machine fills those
# waits (the DuckDB dbt tests side by side: 151-169 s on 3 workers against 165-200 s on 2, in both
# orders). More workers than that only add servers, a dbt server and a PostgreSQL pool each.
# ASSAY_TEST_WORKERS overrides it.
workers="${ASSAY_TEST_WORKERS:-$(( $(nproc) + 1 < 4 ? $(nproc) + 1 : 4 ))}"
exec "$VENV/bin/python" -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder --durations=30 "${report[@]}" "$@"
