"""The Spark demo's child runs dbt in its own process (`spark_conn._run_dbt`, decision 0841): it must
answer as the dbt CLI does, with the CLI's exit codes and dbt's output caught at the descriptors.

`_run_dbt` needs no Spark (the demo's child runs it beside its Spark session), so it is tried here
on a three-model DuckDB project, in a child Python of its own (dbt must not run in the test process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

PROBE = textwrap.dedent("""
    import json, sys
    from assay.runtime.spark_conn import _run_dbt
    project = sys.argv[1]
    out = {}
    for name, args in (("ok", ["build", "--select", "ok"]), ("failed", ["build", "--select", "broken"]),
                       ("cannot_run", ["build", "--no-such-flag"])):
        out[name] = _run_dbt(project, None, None, args)
    print("\\nPROBE " + json.dumps(out))
""")


def test_exit_codes_and_output_are_the_clis(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "dbt_project.yml").write_text("name: probe\nversion: '1.0'\nprofile: probe\nconfig-version: 2\n")
    (tmp_path / "profiles.yml").write_text(
        f"probe:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: {tmp_path / 'w.duckdb'}\n      threads: 1\n")
    (tmp_path / "models" / "ok.sql").write_text("select 1 as x\n")
    (tmp_path / "models" / "broken.sql").write_text("select * from no_such_table\n")
    run = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    # Only the probe's own line reached the child's stdout: dbt's output went to the captured texts.
    lines = [x for x in run.stdout.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("PROBE "), run.stdout[-3000:]
    out = json.loads(lines[0][len("PROBE "):])
    code, stdout, _ = out["ok"]
    assert code == 0 and "Completed successfully" in stdout and "PASS=1" in stdout, stdout
    code, stdout, _ = out["failed"]
    assert code == 1 and "no_such_table" in stdout and "ERROR=1" in stdout, stdout
    code, stdout, stderr = out["cannot_run"]
    assert code == 2 and "no-such-flag" in stdout + stderr, (stdout, stderr)
