"""Re-delivery is normal (decision 0014), through `sqlmesh plan` on DuckDB.

The loads and the hand-written expectations are the dbt story's
(tests/integration/test_redelivery_dbt.py), imported rather than copied so both targets are judged
on the same bronze history. SQLMesh refuses incremental entities (decision 0207), so its project
holds `orders` (dedupe) and `customers` (no dedupe) and the story's `events` rows are left out.
Each load is one SQLMesh interval later than the previous one, as production runs are.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.test_redelivery_dbt import (
    ENTITIES,
    KEY_OF,
    LABELS,
    LOADS,
    MART,
    PLACES,
    SPEC_FILES,
    T4,
    Bronze,
    delivery_places,
    expected_rejects,
    order,
)
from tests.support.corpus import Relation
from tests.support.sqlmeshproject import SQLMeshProject, make_project

pytestmark = pytest.mark.slow
# DuckDB only: the same loads are judged on PostgreSQL by the dbt story (test_redelivery_dbt.py), and
# SQLMesh's re-deliveries on PostgreSQL 18 by the multi-load story (test_multiload.py, pg18-sqlmesh).
ENGINE_IDS = ("duckdb",)

ENTITY_OF = {"raw_orders": "orders", "raw_customers": "customers"}


def _spec_files() -> dict:
    files = {k: v for k, v in SPEC_FILES.items() if k != "mapping_events.yaml"}
    text = files["entities.yaml"]
    events = text.index("  events:\n")
    files["entities.yaml"] = text[:events]
    return files


def _relations(bronze: Bronze) -> list[Relation]:
    return [r for r in bronze.relations() if r.name in ENTITY_OF]


def _list(v):
    return list(v) if v is not None else None


def read_state(project: SQLMeshProject, run_id: str | None) -> dict:
    q = project.query
    state: dict = {"entities": {}, "rejects": {}, "mart": {}, "places": {}, "reject_rows": {}}
    for relation, entity in ENTITY_OF.items():
        key = KEY_OF[entity]
        state["entities"][entity] = {k: (s, l) for k, s, l in q(f"select {key}, _source_row_id, _load_id from silver.{entity}")}
        rows = q(
            "select _source_row_id, first_seen, last_seen, _load_id, failed_rules, key_values, resolved_at is null, resolution "
            f"from silver.{entity}__reject"
        )
        state["reject_rows"][entity] = [r[0] for r in rows]
        for srid, first, last, load, rules, key_values, is_open, resolution in rows:
            state["rejects"][(entity, srid)] = (first, last, load, _list(rules), json.loads(key_values)[key], is_open, resolution)
        if run_id is not None:
            state["mart"][entity] = tuple(q(
                "select rows_evaluated, rows_quarantined, rows_deduped from gold.mart_data_quality "
                f"where entity = '{entity}' and rule = '(entity)' and run_id = '{run_id}'"
            )[0])
        state["places"].update(delivery_places(q, relation, entity))
    return state


def _only(expected: dict, entities) -> dict:
    return {k: v for k, v in expected.items() if k in entities}


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine) -> dict:
    root = tmp_path_factory.mktemp(f"sqlmesh_redelivery_{engine.id}")
    spec = root / "spec"
    spec.mkdir()
    for name, text in _spec_files().items():
        (spec / name).write_text(text)
    project: SQLMeshProject = make_project(root / "project", spec, engine=engine.kind,
                                           pg=engine.database("sqlmesh_redelivery"))
    bronze = Bronze()
    out: dict = {}
    try:
        for label, deliveries in LOADS:
            bronze.deliver(deliveries)
            project.load_bronze(_relations(bronze))
            plan_id = f"SQLMESH_PLAN: {project.plan().plan_id}"
            out[label] = read_state(project, plan_id)
        before = read_state(project, None)
        bronze.deliver([order("o9", "l5", T4, "A9"), order("o9", "l5", T4, "A9", amount="11.00")])
        project.load_bronze(_relations(bronze))
        # SQLMesh names the failing audit in the errors it hands its console, not in the PlanError.
        console, failed = project.context().console, []
        log_failed_models = console.log_failed_models

        def record(errors):
            failed.extend(f"{e} {e.__cause__}" for e in errors)
            return log_failed_models(errors)

        console.log_failed_models = record
        try:
            project.plan()
            error = None
        except Exception as exc:  # the plan's failure, as SQLMesh reports it
            error = exc
        finally:
            console.log_failed_models = log_failed_models
        report = "\n".join(failed)
        out["repeat_within_load"] = {"error": error, "report": report, "before": before, "after": read_state(project, None)}
        yield out
    finally:
        project.close()


@pytest.mark.parametrize("label", LABELS)
def test_conservation_per_delivery(story, label):
    state = story[label]
    misplaced = {k: v for k, v in state["places"].items() if len(v) != 1}
    assert not misplaced, "each bronze delivery must be in exactly one of entity, unresolved reject, deduped"
    assert {k: v[0] for k, v in state["places"].items()} == {k: v for k, v in PLACES[label].items() if k[0] in ENTITY_OF}


@pytest.mark.parametrize("label", LABELS)
def test_entity_rows(story, label):
    assert story[label]["entities"] == _only(ENTITIES[label], ENTITY_OF.values())


@pytest.mark.parametrize("label", LABELS)
def test_reject_rows(story, label):
    state = story[label]
    assert state["rejects"] == {k: v for k, v in expected_rejects(label).items() if k[0] in ENTITY_OF.values()}
    for entity, srids in state["reject_rows"].items():
        assert len(srids) == len(set(srids)), f"one reject row per source row of {entity}"


@pytest.mark.parametrize("label", LABELS)
def test_mart_counts_superseded_deliveries_as_deduped(story, label):
    assert story[label]["mart"] == _only(MART[label], ENTITY_OF.values())


def test_a_repeat_within_one_load_stops_the_plan_at_the_ingestion_audit(story):
    result = story["repeat_within_load"]
    error = result["error"]
    assert error is not None, "a source row delivered twice within one load must stop the plan"
    assert "Plan application failed" in str(error)
    assert "assay_ingestion_metadata" in result["report"], result["report"][-4000:]
    assert result["after"]["entities"] == result["before"]["entities"]
    assert result["after"]["rejects"] == result["before"]["rejects"]

