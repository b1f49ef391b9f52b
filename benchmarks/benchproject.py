"""What the dbt benchmarks here do alike: a working directory removed afterwards unless kept, a
DuckDB dbt project generated from a spec into it, and a `dbt build` timed by dbt itself.

Each node's time is dbt's own `execution_time` from run_results.json, so dbt's start-up and
parsing count against no side of a comparison.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from assay.api import generate_dbt_project
from assay.runtime.dbt import run_dbt
from assay.scaffold import duckdb_profile, write_dbt_skeleton

DATABASE = "bench.duckdb"


@contextmanager
def workdir(keep: Optional[str], prefix: str) -> Iterator[Path]:
    """`keep` (created if missing, left in place) or a fresh temporary directory removed at the end."""
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    try:
        yield work
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def generated_project(work: Path, spec: Path) -> Path:
    """A dbt project `bench` on the DuckDB file `work/bench.duckdb`, generated from `spec`; the file's path."""
    write_dbt_skeleton(work, "bench", duckdb_profile("bench", DATABASE))
    generate_dbt_project(spec, work)
    return work / DATABASE


def build_times(work: Path, *args: str) -> dict[str, float]:
    """`dbt deps` when no package is installed yet, then `dbt build --threads 1` (one thread: nodes do
    not overlap, so each node's time is its own); each node's execution time by unique id, hooks
    (`operation.*`) left out."""
    if not (work / "dbt_packages").exists():
        assert run_dbt(work, "deps").returncode == 0
    proc = run_dbt(work, "build", "--threads", "1", *args)
    if proc.returncode != 0:
        raise SystemExit(proc.stdout[-4000:])
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: r["execution_time"] for r in results if not r["unique_id"].startswith("operation.")}
