"""The generated SQL of an incremental entity: its shape in both branches, and that nothing else moves.

The staged model is rendered with stand-ins for dbt's context (every `assay.*` macro becomes an
opaque function call whose arguments are recorded) and parsed with sqlglot, once as the first
build and once as an incremental build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
import pytest
import yaml
import sqlglot
from sqlglot import exp

from assay.duration import duration
from assay.api import load_project
from assay.targets.dbt import generate_dbt
from assay.targets.dbt.incremental import LATE_RULE, lag_hours

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "incremental"
STAGED = "models/assay/orders/orders__staged.sql"
THIS = "silver.orders__staged"


class _Assay:
    def __init__(self, incremental: bool = False, fingerprinted: bool = True, counted: bool = False, ledger: str | None = None,
                 locator: str | None = None):
        self.calls: list[tuple] = []
        self.locator = locator
        self.ledger = ledger
        self.incremental = incremental
        self.fingerprinted = fingerprinted
        self.counted = counted

    def __getattr__(self, name):
        def macro(*args):
            self.calls.append((name, args))
            if name == "incremental_ledger_check":
                return ""
            if name == "keyed_is_incremental":
                return self.incremental
            if name == "ledger_fingerprinted":  # a ledger an earlier assay built has no fingerprints
                return self.incremental and self.fingerprinted
            if name == "built_this_run":  # whether this invocation built the loads model (decision 0411)
                return self.counted
            if name == "fingerprinted_ledger":  # the ledger the loads model finds, if any
                return self.ledger
            if name == "row_locator":  # `rowid` on DuckDB, none elsewhere (decision 0953)
                return self.locator
            if name == "byte_order":  # DuckDB's spelling: text sorts by its bytes already (decision 0984)
                return args[0]
            if name == "sql_type":
                return {"string": "VARCHAR", "int": "BIGINT", "timestamp": "TIMESTAMP"}.get(args[0], "VARCHAR")
            return f"assay_{name}()"

        return macro


def render(sql: str, incremental: bool, fingerprinted: bool = True, counted: bool = False,
           ledger: str | None = None, locator: str | None = None) -> tuple[exp.Expression, _Assay]:
    assay = _Assay(incremental, fingerprinted, counted, ledger, locator)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    text = env.from_string(sql).render(
        config=lambda **kw: "",
        source=lambda s, t: f"bronze.{t}",
        ref=lambda name: f"silver.{name}",
        this=THIS,
        is_incremental=lambda: incremental,
        assay=assay,
    )
    return sqlglot.parse_one(text, read="duckdb"), assay


@pytest.fixture(scope="module")
def files() -> dict:
    return generate_dbt(load_project(SPEC))


def table_variant(tmp_path: Path) -> Path:
    root = tmp_path / "table"
    shutil.copytree(SPEC, root)
    path = root / "entities.yaml"
    path.write_text(path.read_text().replace("    materialized: incremental\n", "").replace("    incremental: {lag: 2h}\n", ""))
    return root


def ctes(tree: exp.Expression) -> list[str]:
    return [c.alias for c in tree.find(exp.With).expressions]


def cte(tree: exp.Expression, name: str) -> exp.Expression:
    return next(c.this for c in tree.find(exp.With).expressions if c.alias == name)


def test_lag_hours():
    entity = load_project(SPEC).entity("orders")
    assert lag_hours(entity) == 2
    for lag, hours in ((None, 0), ("1h", 1), ("3d", 72), ("2w", 336)):
        assert lag_hours(type(entity)(**{**entity.__dict__, "incremental_lag": duration(lag)})) == hours


def test_config_is_a_refreshable_delete_insert_ledger(files):
    config = files[STAGED].splitlines()[1]
    assert "materialized=assay.keyed_materialization()" in config  # incremental; assay_keyed on Spark
    assert "unique_key='_ledger_id'" in config and "incremental_strategy='delete+insert'" in config
    assert "on_schema_change='append_new_columns'" in config
    # A full refresh re-derives the ledger from bronze: it is the documented fix, so it stays allowed.
    assert "full_refresh" not in config


def test_first_build_reads_all_of_bronze_and_judges_like_a_full_rebuild(files):
    tree, assay = render(files[STAGED], incremental=False)
    assert ctes(tree) == ["extracted", "pool", "delivered", "ranked", "probed", "judged"]
    assert THIS not in tree.sql()
    assert not [c for c in assay.calls if c[0] == "incremental_window_start"]


def test_incremental_build_reads_new_rows_and_the_stored_rows_of_their_keys(files):
    # the ledger of an earlier assay, without fingerprints: every load is searched (decision 0406)
    tree, assay = render(files[STAGED], incremental=True, fingerprinted=False)
    assert ctes(tree) == ["extracted", "held", "restated", "touched", "prior", "pool", "delivered", "ranked", "probed", "judged"]
    assert [args for name, args in assay.calls if name == "incremental_window_start"] == [(THIS, 2)]
    extracted = cte(tree, "extracted")
    # Already processed = the same delivery: mapping, _source_row_id, _load_id and _ingested_at,
    # compared on bronze's own rows, below the transforms: only new rows are transformed.
    bronze_select = next(s for s in extracted.find_all(exp.Select)
                         if (s.args.get("from") or s.args.get("from_")).this.sql() == "bronze.raw_orders AS b")
    # A left join kept where nothing matched (decision 0405): one hash join on DuckDB.
    (join,) = bronze_select.args["joins"]
    assert join.sql() == ("LEFT JOIN silver.orders__staged AS l ON l._mapping = 'raw_orders' "
                          "AND l._source_row_id = CAST(b._source_row_id AS TEXT) AND l._load_id = CAST(b._load_id AS TEXT) "
                          "AND l._ingested_at IS NOT DISTINCT FROM ASSAY_INGESTION_TIMESTAMP()"), join.sql()
    assert bronze_select.args["where"].sql() == "WHERE l._mapping IS NULL"
    # The ledger's columns are beside bronze's: every column the select reads is bronze's own.
    read = {c.table for e in bronze_select.expressions for c in e.find_all(exp.Column)}
    assert read == {"b"}, read
    # the stand-in `assay` renders a macro call without its arguments; the call records them
    assert "ASSAY_TRIM_WHITE_SPACE() AS order_id" in bronze_select.sql()
    assert ("cast(b.id as VARCHAR)",) in [args for name, args in assay.calls if name == "trim_white_space"]
    # A full build reads all of bronze.
    full, _ = render(files[STAGED], incremental=False)
    assert not any(s.args.get("where") for s in cte(full, "extracted").find_all(exp.Select))
    prior = cte(tree, "prior").sql()
    # The stored rows are narrowed first (decision 0404), by joins (decision 0406): every stored
    # delivery of a source row delivered again, so the delivery order sees them all...
    assert ("SELECT s.*, TRUE AS _redelivered FROM silver.orders__staged AS s "
            "INNER JOIN (SELECT DISTINCT _mapping, _source_row_id FROM extracted) AS r "
            "ON r._mapping = s._mapping AND r._source_row_id = s._source_row_id UNION ALL ") in prior
    # ...and, once only, the latest stored deliveries of the keys touched by new or superseded deliveries.
    assert ("SELECT s.*, FALSE AS _redelivered FROM silver.orders__staged AS s "
            "INNER JOIN (SELECT DISTINCT order_id FROM touched) AS t ON t.order_id = s.order_id "
            "LEFT JOIN (SELECT DISTINCT _mapping, _source_row_id FROM extracted) AS r "
            "ON r._mapping = s._mapping AND r._source_row_id = s._source_row_id "
            "WHERE r._source_row_id IS NULL AND s._delivery_rank = 1 AND NOT s._late") in prior
    # Then, on those rows only: the same delivery delivered again is replaced, and a stored delivery
    # an upserting loader overwrote (bronze no longer holds it) is replaced, not superseded.
    assert prior.endswith(") AS l WHERE NOT EXISTS(SELECT 1 FROM extracted AS x WHERE x._mapping = l._mapping "
                          "AND x._source_row_id = l._source_row_id AND x._load_id = l._load_id) AND (NOT l._redelivered "
                          "OR EXISTS(SELECT 1 FROM held AS h WHERE h._mapping = l._mapping AND h._source_row_id = l._source_row_id "
                          "AND h._load_id = l._load_id))"), prior
    assert cte(tree, "held").sql() == (
        "SELECT 'raw_orders' AS _mapping, CAST(b._source_row_id AS TEXT) AS _source_row_id, CAST(b._load_id AS TEXT) AS _load_id "
        "FROM bronze.raw_orders AS b"
    )
    # a stored delivery about to be superseded hands on its key: the keys of those stored rows are touched
    assert cte(tree, "restated").sql() == (
        "SELECT l.order_id AS order_id FROM silver.orders__staged AS l "
        "INNER JOIN (SELECT DISTINCT _mapping, _source_row_id FROM extracted) AS x "
        "ON x._mapping = l._mapping AND x._source_row_id = l._source_row_id")
    assert cte(tree, "touched").sql() == "SELECT order_id FROM extracted UNION ALL SELECT order_id FROM restated"
    # A rewritten foreign key is read back as delivered, so a re-judged row probes with the source's value.
    assert "l._orig__customer_id AS customer_id" in prior


def test_an_engine_with_a_row_locator_reads_the_touched_stored_rows_whole_by_it(files):
    """Decision 0953: where `assay.row_locator()` names a column (DuckDB's `rowid`), the stored rows
    are found by their identity and key columns and then read whole by locator, the same rows as
    the joins above select; elsewhere (PostgreSQL, Spark) the model is the one tested above."""
    tree, _ = render(files[STAGED], incremental=True, locator="rowid")
    assert cte(tree, "restated").sql() == (
        "SELECT l.rowid AS _locator, l.order_id AS order_id FROM silver.orders__staged AS l "
        "INNER JOIN (SELECT DISTINCT _mapping, _source_row_id FROM extracted) AS x "
        "ON x._mapping = l._mapping AND x._source_row_id = l._source_row_id")
    assert cte(tree, "touched").sql() == "SELECT order_id FROM extracted UNION ALL SELECT order_id FROM restated"
    prior = cte(tree, "prior").sql()
    assert ("SELECT s.*, f._redelivered FROM silver.orders__staged AS s INNER JOIN ("
            "SELECT _locator, TRUE AS _redelivered FROM restated UNION ALL "
            "SELECT s.rowid AS _locator, FALSE AS _redelivered FROM silver.orders__staged AS s "
            "INNER JOIN (SELECT DISTINCT order_id FROM touched) AS t ON t.order_id = s.order_id "
            "LEFT JOIN (SELECT DISTINCT _mapping, _source_row_id FROM extracted) AS r "
            "ON r._mapping = s._mapping AND r._source_row_id = s._source_row_id "
            "WHERE r._source_row_id IS NULL AND s._delivery_rank = 1 AND NOT s._late) AS f "
            "ON f._locator = s.rowid") in prior, prior
    # the stored rows are read by locator only: no join on the key reads the whole ledger row
    assert "SELECT s.*, TRUE AS _redelivered" not in prior and "SELECT s.*, FALSE AS _redelivered" not in prior
    plain, _ = render(files[STAGED], incremental=True)
    # everything after the stored rows are found is the same model
    for name in ("pool", "delivered", "ranked", "probed", "judged"):
        assert cte(tree, name).sql() == cte(plain, name).sql()


def test_late_rows_are_not_ranked_and_carry_the_reserved_rule(files):
    tree, assay = render(files[STAGED], incremental=True)
    ranked = cte(tree, "ranked").sql()
    # Only latest deliveries that are not late compete for a key; the others get no rank.
    assert ranked.startswith("SELECT d.*, CASE WHEN _delivery_rank = 1 AND NOT _late THEN ROW_NUMBER() OVER (PARTITION BY _delivery_rank = 1 AND NOT _late, order_id,")
    assert ranked.endswith("END AS _dedupe_rank FROM delivered AS d")
    # Late rows are in the delivery order: a late re-delivery still supersedes an older delivery.
    delivered = cte(tree, "delivered").sql()
    # a replayed delivery is the latest of its source row's deliveries at its instant (decision 1100)
    assert ("ROW_NUMBER() OVER (PARTITION BY _mapping, _source_row_id ORDER BY _ingested_at DESC, "
            "CASE WHEN _load_id = '__replay__' THEN 0 ELSE 1 END NULLS LAST, _load_id DESC)") in delivered
    # and never late: it keeps the `_ingested_at` of the delivery it re-delivers (decision 1100)
    late = [e.sql() for e in cte(tree, "extracted").find_all(exp.Alias) if e.alias == "_late"]
    assert late and set(late) == {"COALESCE(x._ingested_at < ASSAY_INCREMENTAL_WINDOW_START() "
                                  "AND COALESCE(x._load_id, '') <> '__replay__', FALSE) AS _late"}
    assert cte(tree, "pool").left.args.get("where") is None
    [(flags,)] = [args for name, args in assay.calls if name == "quality_flags"]
    assert flags[0] == [LATE_RULE, "_late"]
    assert [f[0] for f in flags] == sorted(f[0] for f in flags)  # the package checks the order
    route = next(e for e in tree.expressions if e.alias == "_route").this
    assert [i.sql() for i in route.args["ifs"][:3]] == [
        "CASE WHEN _delivery_rank > 1 THEN 'deduped' END",
        "CASE WHEN _late THEN 'quarantined' END",
        "CASE WHEN _dedupe_rank > 1 THEN 'deduped' END",
    ]
    # A superseded late delivery is no longer held in the reject table.
    assert [e.sql() for e in cte(tree, "judged").expressions if e.alias == "_late"] == ["_late AND _delivery_rank = 1 AS _late"]


def test_an_incumbent_whose_rank_did_not_move_is_not_written_again(files):
    tree, _ = render(files[STAGED], incremental=True)
    assert tree.args["where"].sql() == (
        "WHERE NOT _prior OR _old_delivery_rank <> _delivery_rank OR COALESCE(_old_rank, 0) <> COALESCE(_dedupe_rank, 0)"
    )


def test_one_ledger_row_per_delivery(files):
    tree, _ = render(files[STAGED], incremental=True)
    ledger_id = next(e for e in tree.expressions if e.alias == "_ledger_id").this
    # the latest delivery holds the source row's id, so a new latest delivery replaces its row
    assert ledger_id.sql() == (
        "CASE WHEN _delivery_rank = 1 THEN _mapping || '|' || _source_row_id "
        "ELSE _mapping || '|' || _source_row_id || '|' || _load_id END"
    )


def test_ledger_columns_extend_the_full_rebuild_staged_columns(files, tmp_path):
    full = generate_dbt(load_project(table_variant(tmp_path)))
    full_tree, _ = render(full[STAGED], incremental=False)
    full_cols = [e.alias_or_name for e in full_tree.expressions]
    markers = [f"_c__{c}" for c in ("order_id", "customer_id", "status", "amount", "quantity")]
    for incremental in (False, True):
        tree, _ = render(files[STAGED], incremental)
        cols = [e.alias_or_name for e in tree.expressions]
        assert cols == full_cols + markers + ["_ledger_id", "_late", "_bronze_fp", "_row_fp", "_orig__customer_id", "_processed_at"]


def test_rule_predicates_are_the_full_rebuild_predicates(files, tmp_path):
    full = generate_dbt(load_project(table_variant(tmp_path)))
    full_tree, _ = render(full[STAGED], incremental=False)
    tree, _ = render(files[STAGED], incremental=True)
    rules = lambda t: {e.alias: e.sql() for e in cte(t, "judged").expressions if e.alias.startswith("_r__")}  # noqa: E731
    assert rules(tree) == rules(full_tree)


def test_staged_carries_a_late_arrival_warning(files):
    yml = files["models/assay/orders/_orders.yml"]
    assert "assay.assay_late_arrivals:\n      name: assay_late_arrivals__orders\n      config:\n        severity: warn" in yml


def test_only_the_staged_model_its_properties_and_the_conservation_audit_change(files, tmp_path):
    full = generate_dbt(load_project(table_variant(tmp_path)))
    # two files more: the rows the ingestion-metadata test of raw_orders reads (decision 0408) and
    # the loads counted once per build (decision 0411)
    assert sorted(full) == sorted(set(files) - {"macros/assay/ingestion/raw_orders.sql", "models/assay/orders/orders__loads.sql"})
    body = lambda text: text.split("\n", 1)[1]  # noqa: E731  (line 1 names the spec fingerprint)
    changed = {rel for rel in full if body(files[rel]) != body(full[rel])}
    # (the mart's rows of orders count its late arrivals under their rule, decision 1131)
    assert changed == {STAGED, "models/assay/orders/_orders.yml", "macros/assay/audits/orders.sql", "models/assay/orders/orders.sql",
                       "models/assay/orders/orders__reject.sql", "models/assay/sources.yml", "macros/assay/mart_rows.sql"}
    # The test of raw_orders, which the incremental orders read, is told its ledger; raw_customers' is not.
    sources, full_sources = yaml.safe_load(files["models/assay/sources.yml"]), yaml.safe_load(full["models/assay/sources.yml"])
    tests = {t["name"]: t["data_tests"] for t in sources["sources"][0]["tables"]}
    assert tests["raw_orders"] == [{"assay.assay_ingestion_metadata": {
        "name": "assay_ingestion_metadata__raw_orders",
        "arguments": {"rows": "assay_ingestion_rows__raw_orders", "ledger": "orders__staged", "loads": "ref(\"orders__loads\")"},
        "config": {"meta": {"assay_stops": [{"table": "orders", "node": "orders", "check": "INGESTION_METADATA", "order": 0, "records": False}],
                            "assay_meta_schema": "assay_meta"}}}}]
    assert tests["raw_customers"] == {t["name"]: t["data_tests"] for t in full_sources["sources"][0]["tables"]}["raw_customers"]
    assert "{% macro assay_ingestion_rows__raw_orders(ledger) %}" in files["macros/assay/ingestion/raw_orders.sql"]
    # The reject model writes only the diverted ledger rows written after their open reject row
    # (decision 0407); where no reject table exists yet, it is the full rebuild's query.
    reject, full_reject = files["models/assay/orders/orders__reject.sql"], full["models/assay/orders/orders__reject.sql"]
    bound = ("{% if assay.keyed_is_incremental() %}    left join {{ this }} as w\n"
             "        on w.source_relation = 'raw_orders' and w.mapping = s._mapping and w._source_row_id = s._source_row_id\n"
             "        and w.resolved_at is null and w.last_evaluated_at >= s._processed_at{% endif %}\n")
    unbound = body(reject).replace(bound, "").replace(
        "{% if assay.keyed_is_incremental() %} and w._source_row_id is null{% endif %}", "")
    assert bound in reject and unbound == body(full_reject)
    # The entity carries the ledger's _processed_at and names its ledger: it publishes only what
    # changed since its newest row (decision 1090).
    entity, full_entity = files["models/assay/orders/orders.sql"], full["models/assay/orders/orders.sql"]
    assert body(entity) == body(full_entity).replace(", tags=['assay']", ", tags=['assay'], assay_ledger=\"orders__staged\"").replace(
        " as _quality_ok\n", " as _quality_ok,\n    _processed_at\n").replace(
        "-- depends_on: {{ source('bronze', \"raw_orders\") }}\n",
        "-- depends_on: {{ source('bronze', \"raw_orders\") }}\n-- depends_on: {{ ref(\"orders__loads\") }}\n")
    # The ledger outlives bronze rows, so the audit places bronze rows one by one instead of counting.
    audit, full_audit = files["macros/assay/audits/orders.sql"], full["macros/assay/audits/orders.sql"]
    assert "left join assay_placements as c" in audit and "left join assay_placements" not in full_audit
    assert "or open_rejects <> diverted_rows" in full_audit and "open_rejects <> diverted_rows" not in audit
    # Beside the conservation audit's query (the first one the macro lists), only the reject
    # resolution differs: when the entity publishes changes, it reads the ledger rows written since.
    rest = lambda text: text.split("{% endset %}", 1)[1]  # noqa: E731
    since = "{% if since is not none %}\n    and s._processed_at > {{ since }}\n{% endif %}\n"
    assert rest(audit).count(since) == 1 and "_processed_at" not in rest(full_audit)
    assert rest(audit).replace(since, "") == rest(full_audit)
    # The full-rebuild entity in the same project is generated exactly as before.
    assert body(files["models/assay/customers/customers__staged.sql"]) == body(full["models/assay/customers/customers__staged.sql"])


def test_an_incremental_build_first_checks_the_columns_it_reads_back(files):
    _tree, assay = render(files[STAGED], incremental=True, fingerprinted=False)
    [(relation, columns)] = [args for name, args in assay.calls if name == "incremental_ledger_check"]
    assert relation == THIS
    prior = cte(_tree, "prior")
    # `s` is the ledger, `l` the ledger rows the build narrowed to, with `_redelivered` beside them
    read = {c.name for c in prior.find_all(exp.Column) if c.table in ("l", "s")} - {"_redelivered", "*"}
    assert read == set(columns)
    # A ledger with fingerprints is read for them too; the check does not ask for them, so a ledger
    # an earlier assay built is still read (decision 0406).
    tree, assay = render(files[STAGED], incremental=True, fingerprinted=True)
    read = {c.name for c in cte(tree, "prior").find_all(exp.Column) if c.table in ("l", "s")} - {"_redelivered", "_settled", "*"}
    assert read == set(columns) | {"_bronze_fp"}
    assert "_bronze_fp" not in columns


def test_bronze_is_counted_once_per_build(files):
    """Decision 0411: `<entity>__loads` is the query by which the ledger step, the
    ingestion-metadata test and the conservation audit each counted bronze's loads, with the loads
    the ledger held alike before this build (`_settled`), which the two nodes before the ledger's
    write also computed. Each reads the model where this invocation built it, and counts itself
    where not (a selection without the model, whose rows may then be older than bronze)."""
    model = files["models/assay/orders/orders__loads.sql"]
    assert "materialized='table'" in model and 'assay.fingerprinted_ledger("orders__staged")' in model
    query = model.split("\n\nwith assay_bronze_loads as (\n", 1)[1].split("\n)", 1)[0]
    counts = ('{% if assay.built_this_run("orders__loads") %}\n'
              '    select _mapping, _load_id, _rows, _fp from {{ ref("orders__loads") }}\n{% else %}\n' + query + "\n{% endif %}")
    settled = '{% if assay.built_this_run("orders__loads") %}\n    select _mapping, _load_id from {{ ref("orders__loads") }} where _settled\n'
    audit, test = "macros/assay/audits/orders.sql", "macros/assay/ingestion/raw_orders.sql"
    for rel in (STAGED, audit, test):
        assert counts in files[rel], rel
    # the settled loads before the ledger's write; the audit, after it, compares the ledger as written
    for rel, gates in ((STAGED, 2), (test, 2), (audit, 1)):
        assert files[rel].count("assay.built_this_run(") == gates and (settled in files[rel]) == (gates == 2), rel
    # the nodes that read it depend on it: the test by its `loads` argument (checked above), the
    # others by a depends_on line, since dbt sees a ref inside an `if` only where its parse takes it
    for rel in (STAGED, "models/assay/orders/orders.sql"):
        assert '-- depends_on: {{ ref("orders__loads") }}' in files[rel]
    counted, _ = render(files[STAGED], incremental=True, counted=True)
    assert cte(counted, "assay_bronze_loads").sql() == "SELECT _mapping, _load_id, _rows, _fp FROM silver.orders__loads"
    assert cte(counted, "assay_settled").sql() == "SELECT _mapping, _load_id FROM silver.orders__loads WHERE _settled"
    # the model's _settled is the inline assay_settled's join, over the ledger it finds at run time
    inline, _ = render(files[STAGED], incremental=True)
    for ledger, settled_sql in ((THIS, "NOT o._mapping IS NULL AS _settled"), (None, "FALSE AS _settled")):
        tree, _ = render(model, incremental=True, ledger=ledger)
        assert cte(tree, "assay_bronze_loads").sql() == cte(inline, "assay_bronze_loads").sql()
        assert (cte(tree, "assay_ledger_loads").sql() == cte(inline, "assay_ledger_loads").sql()) if ledger else (
            "assay_ledger_loads" not in ctes(tree))
        assert tree.expressions[-1].sql() == settled_sql
    joined, _ = render(model, incremental=True, ledger=THIS)
    assert joined.args["joins"][0].args["on"].sql() == cte(inline, "assay_settled").args["joins"][0].args["on"].sql()


def test_loads_bronze_and_the_ledger_hold_alike_are_left_out(files):
    """Decision 0406: a load whose bronze rows and ledger rows agree in count and fingerprint sum
    has no new row; it is left out of the search for new rows on both sides, and bronze holds
    every stored delivery of it."""
    tree, assay = render(files[STAGED], incremental=True)
    assert ctes(tree) == ["assay_bronze_loads", "assay_ledger_loads", "assay_settled", "assay_open_loads", "extracted", "held",
                          "restated", "touched", "prior", "pool", "delivered", "ranked", "probed", "judged"]
    # bronze per load: its rows and the sum of the fingerprints of its raw metadata, unparsed
    bronze_loads = cte(tree, "assay_bronze_loads").sql()
    assert bronze_loads.startswith("SELECT 'raw_orders' AS _mapping, CAST(b._load_id AS TEXT) AS _load_id, COUNT(*) AS _rows, ")
    assert bronze_loads.endswith("FROM bronze.raw_orders AS b GROUP BY CAST(b._load_id AS TEXT)")
    fingerprints = [args for name, args in assay.calls if name == "delivery_fingerprint"]
    assert ("b._source_row_id", "b._ingested_at") in fingerprints
    assert [args for name, args in assay.calls if name == "ingestion_timestamp"], "the new rows are still parsed"
    ledger_loads = cte(tree, "assay_ledger_loads").sql()
    # a ledger row without a fingerprint is not counted: its load never settles
    assert "COUNT(_bronze_fp) AS _rows" in ledger_loads and "GROUP BY _mapping, _load_id" in ledger_loads
    assert cte(tree, "assay_settled").sql() == (
        "SELECT n._mapping, n._load_id FROM assay_bronze_loads AS n INNER JOIN assay_ledger_loads AS o "
        "ON o._mapping = n._mapping AND o._load_id = n._load_id AND o._rows = n._rows AND o._fp = n._fp")
    assert cte(tree, "assay_open_loads").sql() == (
        "SELECT n._mapping, n._load_id FROM assay_bronze_loads AS n LEFT JOIN assay_settled AS s "
        "ON s._mapping = n._mapping AND s._load_id = n._load_id WHERE s._mapping IS NULL")
    # Bronze's rows of the open loads by an inner join (the scan filtered by load, decision 0409),
    # and the rows without a _load_id, which no load holds.
    open_rows = ("(SELECT b.* FROM bronze.raw_orders AS b INNER JOIN assay_open_loads AS u ON u._mapping = 'raw_orders' "
                 "AND u._load_id = CAST(b._load_id AS TEXT) UNION ALL SELECT b.* FROM bronze.raw_orders AS b "
                 "WHERE b._load_id IS NULL) AS b")
    bronze_select = next(s for s in cte(tree, "extracted").find_all(exp.Select)
                         if (s.args.get("from") or s.args.get("from_")).this.sql() == open_rows)
    (ledger,) = bronze_select.args["joins"]
    # the ledger side is narrowed to the loads that did not settle before the join
    assert ("FROM silver.orders__staged AS x INNER JOIN assay_open_loads AS v ON v._mapping = x._mapping "
            "AND v._load_id = x._load_id) AS l") in ledger.sql(), ledger.sql()
    assert bronze_select.args["where"].sql() == "WHERE l._mapping IS NULL"
    # new rows carry their fingerprint into the ledger
    assert any(e.alias == "_bronze_fp" for e in bronze_select.expressions)
    # bronze holds every stored delivery of a settled load: `held` reads the other loads only
    assert cte(tree, "held").sql() == (
        "SELECT 'raw_orders' AS _mapping, CAST(b._source_row_id AS TEXT) AS _source_row_id, CAST(b._load_id AS TEXT) AS _load_id "
        "FROM " + open_rows)
    assert cte(tree, "prior").sql().endswith(
        "AND (NOT l._redelivered OR l._settled OR EXISTS(SELECT 1 FROM held AS h WHERE h._mapping = l._mapping "
        "AND h._source_row_id = l._source_row_id AND h._load_id = l._load_id))")
