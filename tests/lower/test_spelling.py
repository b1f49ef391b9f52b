"""The lowering layer decides once; each target's spelling only writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.ir.model import FieldSource, Loc
from assay.ir.resolve import compile_spec
from assay.lower.fields import lower_field, step_type
from assay.lower.spelling import Spelling, Sql
from assay.lower.staged import staged_query, staged_relation
from assay.spec.transforms import TRANSFORMS, Step
from assay.targets.dbt.spelling import DBT
from assay.targets.sqlmesh.spelling import SqlmeshSpelling

KITCHEN_SINK = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "kitchen_sink"


def test_upper_case_touches_only_the_template():
    sp = SqlmeshSpelling()
    assert sp.sql("case when {} is null then {} end", "case_col", "'when'") == "CASE WHEN case_col IS NULL THEN 'when' END"
    assert DBT.sql("case when {} is null then 1 end", "x") == "case when x is null then 1 end"


def test_one_decision_two_spellings():
    src = FieldSource("amount", ("amount",), (Step("trim"), Step("to_int")), "int", False, Loc("m.yml", 1))
    dbt_value, dbt_marker = lower_field(DBT, src, "b", True)
    sm_value, sm_marker = lower_field(SqlmeshSpelling(), src, "b", True)
    # trim is each target's macro (one set of white space on every engine, decision 0960)
    trimmed = 'assay.trim_white_space("cast(b.amount as " ~ (assay.sql_type("string")) ~ ")")'
    assert dbt_value == '{{ assay.try_cast((' + trimmed + '), "int") }}'
    assert sm_value == "@assay_try_cast(@assay_trim_white_space(@assay_cast(b.amount, 'string')), 'int')"
    # the marker is decided once (lower/spelling.py): the same SQL around each target's cast
    assert sm_marker == f"(@assay_trim_white_space(@assay_cast(b.amount, 'string')) IS NOT NULL AND {sm_value} IS NULL)"
    assert dbt_marker == f"({{{{ {trimmed} }}}} is not null and {dbt_value} is null)"


def test_a_json_path_read_is_guarded_once_for_both_targets():
    # decision 1123: text that is not JSON is a coercion failure of the field, never an engine error;
    # decision 1130: so is a readable document whose shape stops the path, asked only when readable
    src = FieldSource("city", ("payload", "loc", "city"), (), "string", False, Loc("m.yml", 1))
    sm_value, sm_marker = lower_field(SqlmeshSpelling(), src, "b", True)
    assert sm_value == "CASE WHEN @assay_json_valid(b.payload) THEN @assay_json_extract_text(b.payload, 'loc', 'city') END"
    assert sm_marker == ("(CASE WHEN @assay_json_valid(b.payload) THEN @assay_json_path_blocked(b.payload, 'loc', 'city') "
                         "ELSE b.payload IS NOT NULL END)")
    dbt_value, dbt_marker = lower_field(DBT, src, "b", True)
    assert dbt_value == ('case when {{ assay.json_valid("b.payload") }} then '
                         '{{ assay.json_extract_text("b.payload", ["loc", "city"]) }} end')
    assert dbt_marker == ('(case when {{ assay.json_valid("b.payload") }} then '
                          '{{ assay.json_path_blocked("b.payload", ["loc", "city"]) }} else b.payload is not null end)')
    # an entity that is not opted in keeps the produce-or-raise read
    assert lower_field(DBT, src, "b", False) == ('{{ assay.json_extract_text("b.payload", ["loc", "city"]) }}', None)


def _marker_on(doc) -> bool:
    """The marker of a read of $.billed.amount into decimal(10,2), evaluated on DuckDB for one
    bronze value (the plain spelling: DuckDB's own functions, as the package spells them there)."""
    import duckdb

    src = FieldSource("amount", ("billed", "amount"), (), "decimal(10,2)", False, Loc("m.yml", 1))
    _value, marker = lower_field(_Plain(), src, "b", True)
    return duckdb.sql(f"select {marker} from (select ?::varchar as billed) as b", params=[doc]).fetchone()[0]


@pytest.mark.parametrize("doc, fires", [
    ("382.16", True), ('"382.16"', True), ("[1]", True), ("true", True),  # the document is no object
    ('{"amount": "12.50"}', False), ('{"amount": 12.5}', False),  # well-shaped
    ('{"amount": null}', False), ('{"currency": "EUR"}', False), ("null", False), (None, False),  # absence
    ('{"amount": "lots"}', True), ('{"amount": {"v": 1}}', True),  # the last value is the cast's to judge
    ("{not json", True),  # decision 1123
])
def test_the_marker_of_a_path_read_fires_on_the_shape_not_on_absence(doc, fires):
    assert _marker_on(doc) is fires


def test_output_types_come_from_the_transform_table():
    args = {"decimal": (12, 2)}
    for name, spec in TRANSFORMS.items():
        produced = step_type(Step(name, args.get(spec.arg, ("x", 1))), "date")
        expected = {"same": "date", "decimal": "decimal(12,2)"}.get(spec.produces, spec.produces)
        assert produced == expected, name


class _Plain(Spelling):
    """A minimal third target: what a new one must provide."""

    def ident(self, name):
        return f'"{name}"'

    def string(self, value):
        return "'" + value.replace("'", "''") + "'"

    def cast(self, expr, assay_type, safe):
        return f"{'try_cast' if safe else 'cast'}({expr} as {assay_type})"

    def call(self, macro, *args):
        return f"{macro}(" + ", ".join(a.text if isinstance(a, Sql) else repr(a) for a in args) + ")"

    def json_extract_text(self, expr, keys):
        return f"json_extract_string({expr}, '$.{'.'.join(keys)}')"

    def json_valid(self, expr):
        return f"json_valid({expr})"

    def json_path_blocked(self, expr, keys):
        steps = ["/" + "/".join(keys[:i]) if i else "" for i in range(len(keys))]
        return "coalesce(" + " or ".join(f"json_type({expr}, '{p}') not in ('OBJECT', 'NULL')" for p in steps) + ", false)"

    def charset_ranges(self, ranges):
        return repr(list(ranges))

    def quality_flags(self, flags):
        return "list_sort([" + ", ".join(f"case when {c} then '{n}' end" for n, c in flags) + "])"

    def bronze(self, source):
        return f"bronze.{source}"

    def model(self, entity):
        return f"silver.{entity.name}"

    def engine_sql(self, write):
        return write("duckdb")


def test_a_new_target_needs_only_a_spelling():
    project, diags, _ = compile_spec(KITCHEN_SINK)
    assert project is not None, diags
    for entity in project.entities:
        text = staged_query(_Plain(), staged_relation(_Plain(), entity, project))
        assert text.startswith("with extracted as (") and text.rstrip().endswith("from judged")
        assert "{{" not in text and "@assay" not in text
