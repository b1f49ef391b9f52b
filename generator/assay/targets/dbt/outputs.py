"""The entity, reject, type-2 current, snapshot and history nodes derived from the staged model."""

from __future__ import annotations

from ...ir.model import Entity, Project
from ...lower.audits import CONSERVATION, INGESTION_CHECK, Audited, bronze_audits, entity_audits
from ...lower.check_reads import check_dependencies
from ...lower.outputs import kept_query, versioned_query
from ...lower.rejects import Prior, reject_query, resolution_bound, resolving_query
from .incremental import loads_dependency
from .spelling import DBT, jstr
from .declared_checks import RESULTS_TABLE, capture_macro, declared_macro
from .sql_checks import sqlchecks_macro
from .kept import EVENTS_MODEL, has_checks, history_kept_hook, keeps_history, snapshot_gate
from .naming import audits_macro_name, current_name, ingestion_test_name, model_name, reject_name, resolve_macro_name, staged_name



def _ref(name: str) -> str:
    return "{{ ref(" + jstr(name) + ") }}"


def _source(name: str) -> str:
    return "{{ source('bronze', " + jstr(name) + ") }}"


def _config(**items) -> str:
    parts = []
    for k, v in items.items():
        if v is None:
            continue
        parts.append(f"{k}={v}")
    return "{{ config(" + ", ".join(parts) + ") }}"


def _grants(entity: Entity) -> str | None:
    if not entity.grants_select:
        return None
    return "{'select': [" + ", ".join(jstr(g) for g in entity.grants_select) + "]}"


def entity_sql(entity: Entity, project: Project, header: str) -> str:
    """The published entity (type 1) or the kept rows a type-2 snapshot versions."""
    deps = []
    incremental = entity.materialized == "incremental"
    if entity.has_reject:
        deps.append(f"-- depends_on: {_ref(reject_name(entity))}")
    for m in entity.mappings:
        deps.append(f"-- depends_on: {_source(m.source)}")
    if incremental:  # its conservation audit reads the loads the build counted (decision 0411)
        deps.append(loads_dependency(entity))
    # A SQL check file that joins another entity reads it as built in this run (decision 0974).
    deps.extend(f"-- depends_on: {_ref(model_name(project.entity(other)))}" for other in check_dependencies(entity, project))
    if entity.declared_checks or entity.sql_checks:
        deps.append(f"-- depends_on: {_ref(RESULTS_TABLE)}")
        deps.append(f"-- depends_on: {_ref(EVENTS_MODEL)}")
    config = _config(
        materialized="'assay_entity'",
        schema=jstr(project.schema("silver")),
        assay_audits=jstr(audits_macro_name(entity)),
        # Always: a build clears a kept mark even when this version has no checks (decision 0512).
        assay_meta_schema=jstr(project.schema("meta")),
        assay_checked="true" if has_checks(entity) else None,
        tags="['assay']",
        grants=_grants(entity) if entity.scd == "type1" else None,
        # An incremental entity publishes only the ledger rows written since its last publish (decision 1090).
        assay_ledger=jstr(staged_name(entity)) if incremental else None,
        # A type-2 entity kept by a keep check is published whole: its history versions the kept
        # rows and its node, not this one, fails with TABLE_KEPT (decision 1127).
        assay_history=jstr(model_name(entity)) if keeps_history(entity) else None,
    )
    return "\n".join([header, config, *deps, "", kept_query(DBT, entity, processed_at=incremental)])


def _ingestion_audits(entity: Entity, project: Project) -> list[str]:
    """The ingestion-metadata audit of each bronze relation the entity reads that has the test, for
    an invocation that did not select that test (`dbt run`, `--exclude test_type:data`): the entity
    is then audited for it before it publishes, as `dbt build` stops it before it is written
    (decision 0987). When the test is selected it runs, and stops the entity, on its own."""
    tested = {b.source for b in bronze_audits(project) if b.ingestion_metadata}
    lines = []
    for source in sorted({m.source for m in entity.mappings} & tested):
        lines += [
            f"  {{% if not assay.selected_this_run({jstr(ingestion_test_name(source))}, ['test']) %}}",
            f"  {{% do audits.append({{'name': {jstr(INGESTION_CHECK.lower())}, "
            f"'sql': assay.ingestion_metadata_violations(source('bronze', {jstr(source)}))}}) %}}",
            "  {% endif %}",
        ]
    return lines


def audits_macro(entity: Entity, header: str, project: Project | None = None) -> str:
    """The blocking audits the `assay_entity` materialization runs on the candidate before publishing."""
    lines = [
        header,
        f"{{% macro default__{audits_macro_name(entity)}(candidate) %}}",
        "  {% set audits = [] %}",
    ]
    reject = "{{ ref(" + jstr(reject_name(entity)) + ") }}" if entity.has_reject else None
    # Blocking ones only: the materialization stops on every audit it runs; flags are the mart's to count.
    blocking = [a for a in entity_audits(DBT, entity, Audited("{{ candidate }}", reject)) if a.blocking]
    for n, audit in enumerate(blocking):
        lines += [f"  {{% set audit_{n} %}}", audit.sql.rstrip("\n"), "  {% endset %}"]
        # the conservation law reads the staged relation: a set-back names it when this
        # invocation did not build it (decision 0988)
        staged = f", 'staged': {jstr(staged_name(entity))}" if audit.name == CONSERVATION else ""
        lines.append(f"  {{% do audits.append({{'name': {jstr(audit.name)}, 'sql': audit_{n}{staged}}}) %}}")
    if project is not None:
        lines += _ingestion_audits(entity, project)
    lines += ["  {{ return(audits) }}", "{% endmacro %}", ""]
    if entity.has_reject:
        # `since`: what the entity had published before this build, when it publishes changes
        bound = resolution_bound(DBT, entity, "{{ since }}")
        lines += [
            "",
            f"{{% macro default__{resolve_macro_name(entity)}(since=none) %}}",
            "  {% set resolving %}",
            resolving_query(DBT, entity),
            *([] if bound is None else ["{% if since is not none %}", bound, "{% endif %}"]),
            "  {% endset %}",
            "  {{ return(assay.reject_resolution_sql(ref(" + jstr(reject_name(entity)) + "), resolving)) }}",
            "{% endmacro %}",
            "",
        ]
    if project is not None and entity.declared_checks:
        # Declared checks (000) ride in the same file; the materialization finds them by name.
        lines += ["", declared_macro(entity, project)]
    if project is not None and entity.sql_checks:
        lines += ["", sqlchecks_macro(entity, project)]
    if project is not None and capture_macro(entity):
        lines += ["", capture_macro(entity)]  # what captured failing rows leave out (redact)
    return "\n".join(lines)


def _incremental(when: str, otherwise: str) -> str:
    """Text that holds only where the reject table exists already (dbt's incremental run)."""
    if not otherwise:
        return "{% if assay.keyed_is_incremental() %}" + when + "{% endif %}"
    return "{% if assay.keyed_is_incremental() %}" + when + "{% else %}" + otherwise + "{% endif %}"


def reject_sql(entity: Entity, project: Project, header: str) -> str:
    """The reject table: incremental on reject_id, history kept across full refreshes and rule changes.

    The rows are `lower.rejects.reject_query`'s; open rejects this build admits or dedupes are
    resolved by the entity's materialization after it publishes (`audits_macro`), never here: a
    build whose audits refuse to publish must not mark rows as admitted."""
    config = (
        "{{ config(materialized=assay.keyed_materialization(), unique_key='reject_id', incremental_strategy='delete+insert', "
        "schema=" + jstr(project.schema("silver")) + ", full_refresh=false, on_schema_change='append_new_columns', tags=['assay', 'assay_reject']) }}"
    )
    query = reject_query(DBT, entity, Prior("{{ this }}", _incremental), resolve=False)
    return "\n".join([header, config, "", query])


def _history_config(entity: Entity, project: Project, **extra) -> dict:
    """What the snapshot and the assay_history model of a type-2 entity both say (one history, two spellings)."""
    return dict(
        schema=jstr(project.schema("silver")),
        unique_key="[" + ", ".join(jstr(k) for k in entity.key) + "]",
        **extra,
        check_cols="[" + ", ".join(jstr(c.name) for c in entity.columns) + "]",
        # a key the build no longer admits (its newest delivery quarantined, its rows gone from
        # bronze) has no current version: the stale clean one is closed (decision 0415)
        hard_deletes="'invalidate'",
        grants=_grants(entity),
        # the stored columns take the spec's types first, so versions compare in them (decision
        # 1139: a type change on a type-2 field), then the kept gate
        pre_hook="[" + _history_types_hook(entity) + ", " + snapshot_gate(entity, project) + "]",
        post_hook=history_kept_hook(entity, project) if keeps_history(entity) else None,
    )


def _history_types_hook(entity: Entity) -> str:
    """The pre-hook (a Jinja string literal) that alters a type-2 history's columns to the types of
    the kept rows it versions (dbt_package/macros/materializations/align_history_types.sql)."""
    return jstr("{{ assay.align_history_types(this, ref(" + jstr(current_name(entity)) + ")) }}")


def snapshot_sql(entity: Entity, project: Project, header: str) -> str:
    """Type-2 history: dbt owns the validity interval, so assay only feeds the kept rows.

    Enabled where dbt's snapshot runs (assay.type2_is_snapshot(), decided by the adapter at parse
    time); elsewhere (Spark parquet) the model of `history_sql` builds the same table.
    """
    return "\n".join(
        [
            header,
            f"{{% snapshot {entity.name} %}}",
            # meta here, not in a properties file: a `snapshots:` entry names a model where the model
            # of history_sql is the one enabled (Spark), and dbt warns on every parse there
            _config(enabled="assay.type2_is_snapshot()", **_history_config(entity, project, strategy="'check'"),
                    meta=_meta_literal(entity)),
            versioned_query(DBT, entity, _ref(current_name(entity))).rstrip("\n"),
            "{% endsnapshot %}",
            "",
        ]
    )


def _meta_literal(entity: Entity) -> str:
    """The entity's meta (as the properties files carry it) as a Jinja dict of string literals."""
    items = [("assay_entity", entity.name), ("grain", entity.grain)] + ([("owner", entity.owner)] if entity.owner else [])
    return "{" + ", ".join(f"{jstr(k)}: {jstr(v)}" for k, v in items) + "}"


def history_sql(entity: Entity, project: Project, header: str) -> str:
    """The same history as the snapshot, as a model materialized by assay_history (decision 0807).

    Enabled exactly where the snapshot is not: on an engine whose tables dbt's snapshot cannot
    change (Spark parquet), the package builds the next history beside the stored one and swaps.
    """
    return "\n".join(
        [
            header,
            _config(
                enabled="not assay.type2_is_snapshot()",
                materialized="'assay_history'",
                **_history_config(entity, project),
                tags="['assay']",
                # here, not in a properties file: dbt matches a `models:` entry's name to the
                # snapshot where that is enabled and warns on every parse (issue 19); the snapshot
                # carries its meta the same way, for the same reason the other way round
                meta=_meta_literal(entity),
            ),
            "",
            versioned_query(DBT, entity, _ref(current_name(entity))),
        ]
    )
