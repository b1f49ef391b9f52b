"""docs/quickstart.md is true: every `sh` block runs, in order, as a user would type it (bash, the
`assay` and `dbt` of this environment on PATH, real dbt on DuckDB), and each step does what the
page says. The `psql` block loads the same bronze into an embedded PostgreSQL."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("docs/quickstart.md typed from a shell; in the fast loop test_operator_commands_dbt.py builds the example on DuckDB"),
]

DOC = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def blocks(kind: str, doc: Path = DOC) -> list[str]:
    """The code blocks of `doc` (the quickstart) fenced as `kind` ('' for a bare fence), in page order."""
    return [body for fence, body in BLOCK.findall(doc.read_text(encoding="utf-8")) if fence == kind]


def _env() -> dict:
    env = dict(os.environ)
    # The commands are the ones this environment installed (its assay, dbt and python), as
    # after `pip install -e '.[dbt]'` in an activated virtual environment.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    env["DBT_USE_COLORS"] = "false"
    env.pop("DBT_PROFILES_DIR", None)
    return env


def _run_block(body: str, cwd: Path, state: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """Run one block in bash from `cwd`; returns the result and the directory it ended in."""
    script = f"set -euo pipefail\n{body}\npwd > {state}\n"
    proc = subprocess.run(["bash", "-c", script], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    after = Path(state.read_text().strip()) if proc.returncode == 0 else cwd
    return proc, after


def walk(doc: Path, home: Path) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Every sh block of `doc`, run in order from `home` as a user types them: [(block, result)].

    Fails at the first block that exits non-zero, naming it (also used by test_quickstart_sqlmesh)."""
    state = home / ".cwd"
    cwd = home
    done = []
    for body in blocks("sh", doc):
        proc, cwd = _run_block(body, cwd, state)
        done.append((body, proc))
        assert proc.returncode == 0, f"this block of docs/{doc.name} failed:\n{body}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    """Every sh block of the page, run in order from a fresh directory: [(block, result)]."""
    home = tmp_path_factory.mktemp("user")
    return home, walk(DOC, home)


def _step(walked, first_line: str) -> subprocess.CompletedProcess:
    for body, proc in walked[1]:
        if body.splitlines()[0] == first_line:
            return proc
    raise AssertionError(f"docs/quickstart.md has no block starting with {first_line!r}")


def test_the_page_has_every_step():
    firsts = [b.splitlines()[0] for b in blocks("sh")]
    assert firsts == ["assay init shop", "python - <<'EOF'", "assay validate", "dbt deps", "dbt source freshness",
                      "cd ..", "assay report --out report.html"]


def test_init_makes_a_project_whose_profile_works_from_anywhere(walked):
    home, _ = walked
    profile = (home / "shop" / "profiles.yml").read_text()
    assert f"path: {(home / 'shop' / 'warehouse.duckdb').resolve().as_posix()}\n" in profile
    assert "assay init: example project in shop" in _step(walked, "assay init shop").stdout


def test_bronze_is_loaded_by_hand(walked):
    assert _step(walked, "python - <<'EOF'").stdout == "raw_customers 6 rows\nraw_orders 10 rows\n"


def test_validate_and_generate_find_the_spec_in_the_project(walked):
    out = _step(walked, "assay validate").stdout.splitlines()
    assert out[0].startswith("ok: 2 entities, ")
    owned = len(json.loads((walked[0] / "shop" / ".assay" / "manifest.json").read_text())["files"])
    assert out[1].startswith(f"assay generate: {owned} written, 0 unchanged, 0 removed (2 entities, spec . ")
    # the first generate adds the package to packages.yml, and says so (quickstart.md, section 4)
    assert out[2] == "packages.yml: the assay package entry changed; run `dbt deps` before the build"
    assert out[3] == ("tables land in silver (entities, staged and reject tables), gold (mart_data_quality), "
                      "assay_meta (check results, events); bronze is read from bronze")
    assert out[4].startswith("next: dbt deps && dbt build")


def test_dbt_deps_and_build_pass_with_the_flagged_rule_warning(walked):
    out = _step(walked, "dbt deps").stdout
    assert "Installed from <local @ assay_packages/assay>" in out or "Installing assay_packages/assay" in out, out[-2000:]
    assert re.search(r"Done\. PASS=14 WARN=1 ERROR=0 SKIP=0 NO-OP=0 TOTAL=15", out), out[-2000:]


def test_source_freshness_passes_on_the_init_sample(walked):
    out = _step(walked, "dbt source freshness").stdout
    assert re.search(r"PASS freshness of bronze\.raw_customers", out), out[-2000:]
    assert re.search(r"PASS freshness of bronze\.raw_orders", out), out[-2000:]
    assert "STALE" not in out and "WARN" not in out


def test_dbt_and_assay_run_from_another_directory(walked):
    home, _ = walked
    proc = _step(walked, "cd ..")
    assert re.search(r"Done\. PASS=14 WARN=1 ERROR=0", proc.stdout), proc.stdout[-2000:]
    assert "order: ENOUGH_ORDERS: passed: row count 5 satisfies the declared minimum of 1\n" in proc.stdout
    assert re.search(r"^run [0-9a-f-]{36} \(the latest\)$", proc.stderr, re.M), proc.stderr
    # one warehouse, not a second one created relative to where dbt ran
    assert not (home / "warehouse.duckdb").exists()


def test_report_and_explain(walked):
    home, _ = walked
    proc = _step(walked, "assay report --out report.html")
    assert "wrote report.html (2 entities); open it in a browser, it needs no network" in proc.stdout
    assert (home / "shop" / "report.html").stat().st_size > 1000
    assert "order order_id='O-6': 1 delivery in bronze." in proc.stdout
    assert "It is not in the entity" in proc.stdout


@pytest.mark.postgres
def test_the_psql_block_loads_bronze_into_postgresql(tmp_path, pg_servers):
    from assay.cli.init_cmd import init_project
    from tests.support.engines import ENGINES, Engine

    (body,) = blocks("psql")
    init_project(tmp_path / "shop")
    pg18 = next(e for e in ENGINES if e.id == "pg18")
    server = pg_servers.get(pg18.server_label)
    database = Engine(pg18, server).database("quickstart_psql")["dbname"]
    script = tmp_path / "load.sql"
    script.write_text(body)
    env = {**_env(), "PGPASSWORD": server.password}
    proc = subprocess.run(
        [str(server.bin_dir / "psql"), "-v", "ON_ERROR_STOP=1", "-h", server.host, "-p", str(server.port),
         "-U", server.user, "-d", database, "-f", str(script)],
        cwd=tmp_path / "shop", env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    conn = server.connect(database)
    try:
        cur = conn.cursor()
        cur.execute("select count(*), count(distinct _load_id), max(_ingested_at) from bronze.raw_orders")
        count, loads, newest = cur.fetchone()
        cur.execute("select count(*) from bronze.raw_customers where phone is null")
        (null_phones,) = cur.fetchone()
    finally:
        conn.close()
    assert (count, loads) == (10, 2) and newest.endswith("Z")
    assert null_phones > 0  # an empty CSV field is NULL, as the DuckDB load reads it
