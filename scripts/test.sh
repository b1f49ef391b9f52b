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
exec "$VENV/bin/python" -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=30 "${report[@]}" "$@"
