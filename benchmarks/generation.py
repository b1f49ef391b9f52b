"""Generation cost: `assay generate dbt` wall time, interpreter start-up included.

Targets (DESIGN.md section 6): the 13-entity corpus spec in under 1 s, 200 entities in under 3 s,
and no dbt, sqlmesh or duckdb import on the generate path.

    python benchmarks/generation.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "dirty" / "spec"


def synthetic_spec(directory: Path, n: int) -> Path:
    """n entities, each with a mapping, dedupe, quarantine and a few rules."""
    ents = ["spec_version: 1", "entities:"]
    for i in range(n):
        ents += [
            f"  e{i:03d}:",
            "    grain: one row per thing",
            "    key: [id]",
            "    fields: {id: {type: string}, amount: {type: \"decimal(12,2)\"}, day: {type: date}, code: {type: string}}",
            "    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}",
            "    quarantine: {retention: 30d}",
        ]
        (directory / f"m{i:03d}.yml").write_text(
            "\n".join(
                [
                    "mapping_version: 1",
                    f"source: raw_{i:03d}",
                    f"target: e{i:03d}",
                    "key: {id: {from: \"$.id\", transform: [trim]}}",
                    "fields:",
                    "  amount: {from: \"$.amount\", transform: [{to_decimal: [12, 2]}], quality: [{rule: range, min: 0, on_fail: quarantine}]}",
                    "  day: {from: \"$.day\", transform: [{parse_date: ISO8601}]}",
                    "  code: {from: \"$.code\", transform: [upper], quality: [{rule: in_set, values: [A, B], on_fail: flag}]}",
                    "unmapped: [\"$._load_id\", \"$._ingested_at\", \"$._source_row_id\"]",
                    "",
                ]
            )
        )
    (directory / "entities.yml").write_text("\n".join(ents) + "\n")
    return directory


def time_generate(spec: Path) -> float:
    with tempfile.TemporaryDirectory() as project:
        Path(project, "dbt_project.yml").write_text("name: p\nprofile: p\nconfig-version: 2\n")
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "assay.cli.main", "generate", "dbt", "--spec", str(spec), "--project", project],
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(proc.stdout + proc.stderr)
        return elapsed


def heavy_imports() -> list[str]:
    code = (
        "import sys; from assay.api import load_project, dbt_files; "
        f"dbt_files(load_project({str(CORPUS)!r})); "
        "print(','.join(sorted(m for m in ('dbt', 'sqlmesh', 'duckdb') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return [m for m in out.split(",") if m]


def main() -> None:
    corpus = time_generate(CORPUS)
    with tempfile.TemporaryDirectory() as d:
        big = time_generate(synthetic_spec(Path(d), 200))
    print(f"corpus spec (13 entities): {corpus:.2f} s (target < 1 s): ratio {corpus / 1.0:.2f} of budget")
    print(f"synthetic spec (200 entities): {big:.2f} s (target < 3 s): ratio {big / 3.0:.2f} of budget")
    print(f"engine modules imported while generating: {heavy_imports() or 'none'}")


if __name__ == "__main__":
    main()
