"""YAML properties: sources with freshness, model docs, meta, and the generated tests."""

from __future__ import annotations

import yaml

from ...duration import Duration
from ...ir.model import Entity, Project
from ...lower.check_reads import upstream_entities
from ...lower.mart import counts_recorded_when_stopped
from ...privacy import pii_columns
from ...lower.audits import INGESTION_CHECK, bronze_audits, reading_entities, staged_audits
from .incremental import ingestion_test_arguments, late_arrivals_test
from .kept import test_gate
from .table_checks import bronze_check_tasks
from .naming import current_name, ingestion_test_name, model_name, reject_name, staged_name
from .spelling import inert, jstr, qi

_PERIOD = {"h": ("hour", 1), "d": ("day", 1), "w": ("day", 7)}


def _threshold(value: Duration) -> dict:
    # dbt's freshness periods are minute, hour and day: a week is seven days
    period, factor = _PERIOD[value.unit]
    return {"count": value.count * factor, "period": period}


def dump_yaml(data) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)


def ranked_test_arguments(entity: Entity, mappings: tuple[str, ...]) -> dict:
    """The metadata test's arguments where a staged relation rebuilt in full ranks the deliveries
    (decision 0412): a ref, so that the test runs after it (and before every node that reads it),
    and the mappings whose ranks it reads."""
    return {"ranked": f"ref({jstr(staged_name(entity))})", "mappings": [inert(m) for m in mappings]}


def stops_config(project: Project, entities: list[Entity], check: str, order: int, records: bool) -> dict:
    """The config of a blocking test that stops `entities` before they are written: the meta the
    package's on-run-end hook (`assay.record_stopped_builds`) reads to record, for each entity dbt
    then skipped, CHECK_FAILED `check` and TABLE_BUILD_FAILED `not_written` (decision 0935). `node`
    is the entity's published node (whose skip says the entity was not written), `order` ranks the
    stops of one entity (the first names the failed build: ingestion first, then the fail rules in
    the order of their audits); `records` is whether the entity's counts of a build this stops
    still go to the quality history (`lower.mart.counts_recorded_when_stopped`; decision 1162);
    `assay_meta_schema` is where the entity records its events."""
    stops = [{"table": e.name, "node": current_name(e) if e.scd == "type2" else model_name(e), "check": check,
              "order": order, "records": records} for e in entities]
    return {"meta": {"assay_stops": stops, "assay_meta_schema": project.schema("meta")}}


def upstream_meta(entity: Entity, project: Project) -> dict:
    """The meta of an entity's published node that names the entities it reads
    (`lower.check_reads.upstream_entities`: its referential parents and the entities its SQL check
    files join), each through the node its models ref, and the checked bronze relations it extracts
    from, each through its check task (`upstream_failed: bronze.<table>` when a blocking check of it
    fails). When one of them fails or is skipped, dbt
    skips this entity; the package's
    on-run-end hook (`assay.record_stopped_builds`) then records TABLE_BUILD_FAILED
    `upstream_failed: <parent>` for it (decision 0940). `assay_meta_schema`, on every entity, is
    where the hook records such a skip, and the skip for an error of the entity's own staged, reject
    or current model (`node_errored: <model>`)."""
    upstream = [{"table": name, "node": model_name(project.entity(name))} for name in upstream_entities(entity, project)]
    # and the checked bronze relations it extracts from: a failing check task stops it too
    upstream += [{"table": table, "node": node} for table, node in bronze_check_tasks(entity, project)]
    return {**({"assay_upstream": upstream} if upstream else {}), "assay_meta_schema": project.schema("meta")}


def sources_yml(project: Project) -> dict:
    """One `bronze` source; a table per bronze relation, with freshness from its mappings."""
    tables: dict[str, dict] = {}
    for b in bronze_audits(project):  # decided once for both targets
        t = tables[b.source] = {"name": b.source}
        if b.ingestion_metadata:
            test: dict = {"name": ingestion_test_name(b.source)}
            if b.settled_by:  # an incremental entity's ledger proves loads clean (decision 0408)
                test["arguments"] = ingestion_test_arguments(*b.settled_by)
            elif b.ranked_by:  # a staged relation ranks the deliveries (decision 0412)
                test["arguments"] = ranked_test_arguments(*b.ranked_by)
            # its stop is recorded for the entities that read the relation (decision 0935)
            test["config"] = stops_config(project, reading_entities(project, b.source), INGESTION_CHECK, 0,
                                          counts_recorded_when_stopped(b))
            t["data_tests"] = [{"assay.assay_ingestion_metadata": test}]
        fresh = {key: _threshold(value) for key, value in (("warn_after", b.warn_after), ("error_after", b.error_after))
                 if value is not None}
        if fresh:
            t["freshness"] = fresh
            # read as every other step reads it: an offset is converted to UTC (a plain cast drops it
            # on DuckDB); dbt renders this query, with the package's macros, when it measures freshness
            t["config"] = {"loaded_at_query": "select max({{ assay.ingestion_timestamp('_ingested_at') }}) from {{ this }}"}
    # Bronze relations that only a tables document names: their check task reads them (decision 0520).
    from .table_checks import checked_bronze_sources

    for name in checked_bronze_sources(project):
        tables.setdefault(name, {"name": name})
    return {
        "version": 2,
        "sources": [
            {
                "name": "bronze",
                "schema": project.schema("bronze"),
                "tables": [tables[k] for k in sorted(tables)],
            }
        ],
    }


def _admitted(project: Project, name: str) -> tuple[str, str | None]:
    """The relation consumers read for an entity, and the filter to its current rows."""
    e = project.entity(name)
    if e.scd == "type2":
        # The kept rows of this build are exactly the snapshot's current versions.
        return f"ref('{e.name}__current')", None
    return f"ref('{e.name}')", None


def cross_entity_tests(entity: Entity, project: Project) -> list:
    """Coverage tests on a parent, reconcile tests on a left side: `fail` blocks, `flag` warns."""
    tests = []
    for cov in project.coverage:
        if cov.parent != entity.name:
            continue
        child, _f = _admitted(project, cov.child)
        _p, parent_filter = _admitted(project, cov.parent)
        args = {"child": child, "pairs": [list(p) for p in cov.columns], "min": cov.min}
        if parent_filter:
            args["parent_filter"] = parent_filter
        # Refused while either side is kept (decision 0512).
        args["assay_kept"] = test_gate(project, project.entity(cov.parent), project.entity(cov.child))
        # shown as the marker under dbt's --store-failures (decision 1156)
        hidden = sorted({p for _c, p in cov.columns} & pii_columns(project.entity(cov.parent)))
        if hidden:
            args["hidden"] = hidden
        config = {"severity": "error" if cov.on_fail == "fail" else "warn"}
        tests.append({"assay.assay_coverage": {"name": f"assay_coverage__{cov.name}", "arguments": args, "config": config}})
    for rec in project.reconcile:
        if rec.left.entity != entity.name:
            continue
        args = {}
        for side_name, side in (("left", rec.left), ("right", rec.right)):
            rel, _f = _admitted(project, side.entity)
            args[f"{side_name}_relation"] = rel
            args[f"{side_name}_column"] = side.column
            args[f"{side_name}_agg"] = side.agg
            args[f"{side_name}_by"] = list(side.by)
        args["tolerance"] = rec.tolerance
        args["assay_kept"] = test_gate(project, project.entity(rec.left.entity), project.entity(rec.right.entity))
        hidden = reconcile_hidden(rec, project)
        if hidden:
            args["hidden"] = hidden
        config = {"severity": "error" if rec.on_fail == "fail" else "warn"}
        tests.append({"assay.assay_reconcile": {"name": f"assay_reconcile__{rec.name}", "arguments": args, "config": config}})
    return tests


def reconcile_hidden(rec, project: Project) -> list[str]:
    """The outputs of a reconcile test that may hold a pii value, shown as the marker (decision
    1156): a group key either side reads from a pii field, a side's value read from one (its
    count excepted: a number of rows)."""
    left, right = pii_columns(project.entity(rec.left.entity)), pii_columns(project.entity(rec.right.entity))
    out = [f"k{i}" for i, (a, b) in enumerate(zip(rec.left.by, rec.right.by), 1) if a in left or b in right]
    for name, side, private in (("left_value", rec.left, left), ("right_value", rec.right, right)):
        if side.column in private and side.agg != "count":
            out.append(name)
    return out


def _entity_meta(entity: Entity) -> dict:
    """The entity's meta; grain and owner are spec text, which dbt renders as Jinja (inert)."""
    meta = {"assay_entity": entity.name, "grain": inert(entity.grain)}
    if entity.owner:
        meta["owner"] = inert(entity.owner)
    return meta


def _description(entity: Entity, fallback: str) -> str:
    """The entity's description (or `fallback`), inert: dbt renders descriptions as Jinja."""
    return inert(entity.description or fallback)


def _meta_value(value):
    """An `assert:` value as YAML meta: a list for a tuple, spec text made inert (dbt renders YAML)."""
    if isinstance(value, tuple):
        return [_meta_value(v) for v in value]
    return inert(value) if isinstance(value, str) else value


def fail_rule_columns(entity: Entity) -> list[str]:
    """What a fail rule's test selects of a violating row: what identifies it and cannot hold a
    pii value (its lineage, the key fields not classified pii) and assay's verdict on it (its
    route and failed rules: names only). dbt's `--store-failures` copies a test's rows into
    `dbt_test__audit`, outside the governed tables (decision 1156)."""
    private = pii_columns(entity)
    kept = ("_source_row_id", "_load_id", "_mapping", *entity.key, "_route", "_failed_rules")
    return [qi(c) for c in kept if c not in private]


def entity_yml(entity: Entity, project: Project) -> dict:
    meta = {**_entity_meta(entity), **upstream_meta(entity, project)}
    columns = []
    for c in entity.columns:
        col = {"name": c.name, "data_type": None}
        del col["data_type"]
        if c.description:
            col["description"] = inert(c.description)
        cmeta = {"assay_type": c.type}
        if c.classification:
            cmeta["classification"] = c.classification
        if c.asserts:
            # alerts recorded as column metadata (docs/spec.md); spec text, so inert like a description
            cmeta["assert"] = {k: _meta_value(v) for k, v in c.asserts}
        col["config"] = {"meta": cmeta}
        columns.append(col)
    models = []
    main = {
        "name": current_name(entity) if entity.scd == "type2" else model_name(entity),
        "description": _description(entity, f"{entity.name}: {entity.grain}"),
        "config": {"meta": meta},
        "columns": columns,
    }
    cross = cross_entity_tests(entity, project)
    if cross:
        main["data_tests"] = cross
    models.append(main)
    # the entity's key is judged on its candidate (assay_entity), so only the fail rules are here
    staged_tests = [
        {
            "assay.assay_fail_rule": {
                "name": f"assay_fail_rule__{entity.name}__{audit.rule}",
                "arguments": {"rule_name": audit.rule, "flags_column": "_failed_rules",
                              "columns": fail_rule_columns(entity)},
                # its stop is recorded under the rule's name, as on SQLMesh (decision 0935)
                "config": stops_config(project, [entity], audit.rule, n, counts_recorded_when_stopped(audit)),
            }
        }
        for n, audit in enumerate(staged_audits(entity, audits_a_candidate=True), 1)
    ]
    if entity.materialized == "incremental":
        staged_tests.append(late_arrivals_test(entity))
    staged = {
        "name": staged_name(entity),
        "description": f"Extracted, deduped and judged rows of {entity.name}; internal to assay.",
        "config": {"meta": {"assay_entity": entity.name}},
    }
    if staged_tests:
        staged["data_tests"] = staged_tests
    models.append(staged)
    # The history's model twin (enabled where the snapshot is not, decision 0807) carries its meta
    # in its own config: listed here, dbt would warn that the snapshot is in the models section.
    if entity.has_reject:
        models.append(
            {
                "name": reject_name(entity),
                "description": f"Rows of {entity.name} diverted by quality rules, with their raw payload, for replay.",
                "config": {"meta": {"assay_entity": entity.name, "retention": str(entity.retention) if entity.retention else None,
                                    "retention_hours": entity.retention.hours if entity.retention else None}},
            }
        )
    return {"version": 2, "models": models}
