"""A development plan over an explicit range can publish an entity whose reject model it skipped
(decision 0938; an outside tester's report on SQLMesh 0.236 / DuckDB).

Real plans on DuckDB, the smallest spec that shows it: a type-2 parent `emp` and a child `slip`
whose referential rule quarantines a slip without a current employee.

1. prod is planned at the wall clock (the model start is yesterday), then run once with an
   execution time in the future (tomorrow), as the tester did;
2. a rule is added to `emp`; `sqlmesh plan dev` (wall clock) has no batch to execute but creates
   the environment, then `sqlmesh plan dev --start <yesterday> --end <today>` is applied.

SQLMesh evaluates only the FULL models in dev: `emp__staged`, `emp__current`, `slip__staged` and
`slip`. The forward-only models that depend on their own past (the SCD type-2 `emp`, both
`__reject` models, the mart) are left unevaluated, so `slip`'s referential rule probes the empty
dev `emp` and quarantines every slip, while the dev `slip__reject` stays empty: the slips are in
no table of dev. Before decision 0939 the conservation audit was the reject model's, which did not
run, so no audit failed and the environment was published (decision 0938).

The promise (README): every bronze row lands in the entity, the reject table or the dedupe count,
and a blocking audit proves it on every run. This test asserts it for dev: either the conservation
law stopped the plan, or dev's tables account for every bronze slip. Since decision 0939 the law is
judged on the entity (`__current` for type 2), after its reject model, and SQLMesh evaluates the
entity in this plan: the plan stops, in the name of `assay_conservation` (SQLMesh runs the audits
of a development preview on DuckDB as non-blocking, so `@assay_record_conservation_stop` records
the stop and raises).

A plan with a consistent execution time (`test_a_dev_plan_at_the_prod_clock_conserves`) evaluates
every model in dev and conserves: that is the normal path, and it must keep passing.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from assay.api_sqlmesh import generate_sqlmesh_project
from tests.support.corpus import Relation
from tests.support.sqlmeshfailures import collect

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  emp:
    grain: one row per employee, versioned
    key: [emp_id]
    scd: type2
    fields:
      emp_id: {type: string, required: true}
      level: {type: int}
    quarantine: {retention: 90d}
  slip:
    grain: one row per slip
    key: [slip_id]
    fields:
      slip_id: {type: string, required: true}
      emp_id: {type: string}
    quarantine: {retention: 90d}
    quality:
      - {rule: referential, via: slip_of_emp, on_missing: quarantine}
relationships:
  - {name: slip_of_emp, from: slip, to: emp, via: {emp_id: emp_id}, cardinality: many_to_one}
"""
EMP = """\
mapping_version: 1
source: raw_emps
target: emp
key:
  emp_id: {from: "$.id"}
fields:
  level:
    from: "$.level"
    transform: [to_int]
%sunmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
LEVEL_RULE = """\
    quality:
      - {rule: range, min: 1, max: 3, on_fail: quarantine}
"""
SLIP = """\
mapping_version: 1
source: raw_slips
target: slip
key:
  slip_id: {from: "$.id"}
fields:
  emp_id: {from: "$.emp"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
META = ["_load_id", "_ingested_at", "_source_row_id"]
SLIPS = 5


def write_spec(spec: Path, level_rule: bool) -> Path:
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "emp.yml").write_text(EMP % (LEVEL_RULE if level_rule else ""))
    (spec / "slip.yml").write_text(SLIP)
    return spec


def project(tmp_path: Path, start: str):
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec", level_rule=False)
    sm = make_project(tmp_path / "sqlmesh", spec)
    (sm.path / "config.yaml").write_text((sm.path / "config.yaml").read_text() + f"  start: '{start}'\n")
    ts = "2026-01-01T00:00:00Z"
    sm.load_bronze([
        Relation("raw_emps", ["id", "level", *META], [[f"E{i}", "2", "l1", ts, f"e{i}"] for i in range(3)]),
        Relation("raw_slips", ["id", "emp", *META], [[f"S{i}", f"E{i % 3}", "l1", ts, f"s{i}"] for i in range(SLIPS)]),
    ])
    return spec, sm


def change_rule(spec: Path, sm) -> None:
    write_spec(spec, level_rule=True)
    assert not generate_sqlmesh_project(spec, sm.path, dialect=sm.dialect).report.conflicts
    sm.close()


def dev_slips(sm) -> tuple[int, int, int]:
    """(slips in dev's entity, dev's open rejects, dev's deduped slips)."""
    entity = sm.query("select count(*) from silver__dev.slip")[0][0]
    rejects = sm.query("select count(*) from silver__dev.slip__reject where resolved_at is null")[0][0]
    deduped = sm.query("select count(*) from silver__dev.slip__staged where _route = 'deduped'")[0][0]
    return entity, rejects, deduped


def test_a_dev_plan_at_the_prod_clock_conserves(tmp_path):
    """The normal path: prod and dev planned with one clock; dev evaluates every model."""
    today = datetime.now(timezone.utc).date()
    spec, sm = project(tmp_path, str(today - timedelta(days=1)))
    try:
        sm.plan()
        change_rule(spec, sm)
        sm.plan(advance=False, environment="dev")
        entity, rejects, deduped = dev_slips(sm)
        assert entity + rejects + deduped == SLIPS, (entity, rejects, deduped)
        assert sm.query("select count(*) from silver__dev.emp")[0][0] == 3
    finally:
        sm.close()


def test_a_dev_range_plan_that_skips_the_reject_model_is_stopped_or_conserves(tmp_path):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    today = now.date()
    spec, sm = project(tmp_path, str(today - timedelta(days=1)))
    try:
        # 1. prod at the wall clock, then one run with a future execution time (the tester's)
        ctx = sm.context()
        ctx.plan(auto_apply=True, no_prompts=True)
        assert sm.query("select count(*) from silver.slip")[0][0] == SLIPS
        ctx.run(execution_time=now + timedelta(days=1))
        # 2. a rule change planned into dev: at the wall clock there is nothing to evaluate (prod's
        # last interval is tomorrow's), yet the environment is created; then over an explicit range
        change_rule(spec, sm)
        sm.context().plan("dev", auto_apply=True, no_prompts=True)
        with collect() as found:
            try:
                sm.context().plan(
                    "dev", auto_apply=True, no_prompts=True, start=str(today - timedelta(days=1)), end=str(today)
                )
            except Exception as exc:  # noqa: BLE001 - which stop it was is asserted below
                if "Plan application failed" not in str(exc):
                    raise
                stopped = True
            else:
                stopped = False
        if stopped:
            # the conservation law of `slip` stopped it (decision 0939): SQLMesh runs the audits of
            # this development preview as non-blocking, so the recorder raises in the audit's name
            causes = [f for f in found if isinstance(f, Exception)]
            assert causes, found
            message = " ".join(str(f.__cause__ or f) for f in causes)
            assert "assay_conservation" in message and "for slip" in message, message
            events = sm.query("select check_name, why from assay_meta.assay_events "
                              "where event_type = 'CHECK_FAILED' and table_name = 'slip'")
            assert [c for c, _w in events] == ["CONSERVATION"], events
            assert "bronze_rows 5" in events[0][1] and "open_rejects 0" in events[0][1], events
            return
        entity, rejects, deduped = dev_slips(sm)
        assert entity + rejects + deduped == SLIPS, (
            f"dev: bronze {SLIPS} = entity {entity} + open rejects {rejects} + deduped {deduped}? "
            f"{SLIPS - entity - rejects - deduped} slips are in no table of dev and no audit failed"
        )
    finally:
        sm.close()
