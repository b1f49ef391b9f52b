"""The one table of engine primitives both targets are held to (issue 18): the seeds of the dbt
package's integration project (`integration_tests/dbt/seeds`: `<family>_input.csv`, the outputs
written by hand in `it_<family>_expected.csv`, column types in `_seeds.yml`).

`FAMILIES` gives, per family, the query the SQLMesh macros answer over `input` (the input seed,
typed), mirroring the integration project's model `it_<family>.sql`; `jinja_family` renders that
model itself with the dbt package's macros for an engine (tests/dbt_package/test_macro_render.py's
stand-in for dbt's context), for engines the integration project has no dbt profile for.
`compare` checks an engine's rows against the expected seed.
"""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Callable

import yaml

INTEGRATION = Path(__file__).resolve().parents[2] / "integration_tests" / "dbt"
SEEDS = INTEGRATION / "seeds"
TYPES = {name: seed["config"]["column_types"]
         for seed in yaml.safe_load((SEEDS / "_seeds.yml").read_text())["seeds"] if "config" in seed
         for name in [seed["name"]]}


def seed(name: str) -> tuple[list[str], list[list]]:
    """(columns, rows) of a seed as text, an empty cell as NULL (as dbt's seed loader reads it)."""
    with (SEEDS / f"{name}.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], [[None if v == "" else v for v in r] for r in rows[1:]]


def lit(text: str, dialect: str = "duckdb") -> str:
    """`text` as a string literal of `dialect` (Spark escapes with backslashes, not by doubling)."""
    from sqlglot import exp

    return exp.Literal.string(text).sql(dialect=dialect)


def decode(col: str) -> str:
    """integration_tests/dbt/macros decode_markers: the seeds spell '', edge spaces and controls as markers."""
    return (f"CASE WHEN {col} = '<empty>' THEN '' ELSE "
            f"REPLACE(REPLACE(REPLACE({col}, '<sp>', ' '), '<tab>', CHR(9)), '<nel>', CHR(133)) END")


def show_empty(expr: str) -> str:
    return f"CASE WHEN {expr} = '' THEN '<empty>' ELSE {expr} END"


def distinct(rows: list[list], columns: list[str], name: str) -> list[str]:
    i = columns.index(name)
    return sorted({r[i] for r in rows if r[i] is not None})


# family -> its query over `input` (the input seed's rows, typed), given the input seed's rows
def _try_cast(columns, rows, dialect: str = "duckdb") -> str:
    types = {"as_int": "int", "as_decimal": "decimal(10,2)", "as_date": "date", "as_timestamp": "timestamp",
             "as_bool": "bool", "as_string": "string"}
    cols = ", ".join(f"CASE WHEN assay_type = '{t}' THEN @assay_try_cast(raw, '{t}') END AS {c}" for c, t in types.items())
    return (f"WITH i AS (SELECT case_id, assay_type, {decode('raw')} AS raw FROM input) SELECT case_id, {cols}, "
            "CASE WHEN assay_type = 'variant' THEN NOT @assay_try_cast(raw, 'variant') IS NULL END AS variant_ok FROM i")


def _parsed(macro: str) -> Callable:
    def query(columns, rows, dialect: str = "duckdb") -> str:
        whens = " ".join(f"WHEN {lit(f, dialect)} THEN @{macro}(raw, {lit(f, dialect)})" for f in distinct(rows, columns, "fmt"))
        return f"WITH i AS (SELECT case_id, fmt, {decode('raw')} AS raw FROM input) SELECT case_id, CASE fmt {whens} END AS parsed FROM i"
    return query


def _to_utc(columns, rows, dialect: str = "duckdb") -> str:
    whens = " ".join(f"WHEN {lit(z, dialect)} THEN @assay_to_utc(local_ts, {lit(z, dialect)})" for z in distinct(rows, columns, "zone"))
    return f"SELECT case_id, CASE zone {whens} END AS utc_ts FROM input"


def _regex(columns, rows, dialect: str = "duckdb") -> str:
    cid, pat, grp = columns.index("case_id"), columns.index("pattern"), columns.index("grp")
    matches = " ".join(f"WHEN {r[cid]} THEN @assay_regex_matches(value, {lit(r[pat], dialect)})" for r in rows)
    extracted = " ".join(f"WHEN {r[cid]} THEN @assay_regex_extract(value, {lit(r[pat], dialect)}, {int(r[grp])})" for r in rows)
    return f"SELECT case_id, CASE case_id {matches} END AS matches, CASE case_id {extracted} END AS extracted FROM input"


def _text(columns, rows, dialect: str = "duckdb") -> str:
    return (f"WITH i AS (SELECT case_id, {decode('value')} AS value FROM input) SELECT case_id, "
            "@assay_char_length(value) AS char_length, @assay_is_nfc(value) AS is_nfc, "
            "@assay_charset_violates(value, 'U+0020-U+007E', 'allow') AS outside_printable_ascii, "
            "@assay_charset_violates(value, 'U+0000-U+001F,U+007F-U+009F', 'forbid') AS has_control, "
            "@assay_charset_violates(value, 'U+1F300-U+1FAFF', 'forbid') AS has_emoji, "
            "@assay_charset_violates(value, '', 'allow') AS allow_nothing, "
            "@assay_charset_violates(value, '', 'forbid') AS forbid_nothing, "
            "@assay_char_length(@assay_trim_white_space(value)) AS trimmed_length FROM i")


def _keys(columns, rows, dialect: str = "duckdb") -> str:
    return ("SELECT case_id, @assay_reject_id('bronze.orders', source_row_id) AS reject_id, "
            "@assay_reject_id('bronze.orders', case_id) AS reject_id_of_int, "
            "@assay_reject_id('bronze.orders', source_row_id, 'export') AS reject_id_of_mapping, "
            "@assay_unknown_member(fk, probe) AS member FROM input")


def _flags(columns, rows, dialect: str = "duckdb") -> str:
    flags = "@assay_quality_flags(('amount_negative', amount < 0), ('status_unknown', NOT status IN ('new', 'paid')))"
    return (f"WITH f AS (SELECT case_id, {flags} AS q, @assay_quality_flags() AS no_rules FROM input) SELECT case_id, "
            f"{show_empty('@assay_flags_to_text(q)')} AS flags_text, @assay_quality_ok(q) AS is_ok, "
            "@assay_flags_contain(q, 'amount_negative') AS has_amount_negative, "
            "@assay_flags_contain(q, 'status_unknown') AS has_status_unknown, q IS NULL AS flags_is_null, "
            f"@assay_quality_ok(no_rules) AS no_rules_ok, {show_empty('@assay_flags_to_text(no_rules)')} AS no_rules_text FROM f")


def _json(columns, rows, dialect: str = "duckdb") -> str:
    def read(*keys: str) -> str:  # guarded as a generated model reads a JSON path (decision 1123)
        path = ", ".join("'" + k + "'" for k in keys)
        return f"CASE WHEN @assay_json_valid(doc) THEN @assay_json_extract_text(doc, {path}) END"

    def blocked(*keys: str) -> str:  # the shape test under the same guard (decision 1130)
        path = ", ".join("'" + k + "'" for k in keys)
        return f"CASE WHEN @assay_json_valid(doc) THEN @assay_json_path_blocked(doc, {path}) END AS {'_'.join(keys)}_blocked"

    return (f"SELECT case_id, {read('a', 'b')} AS a_b, {read('t')} AS t, {read('nul')} IS NULL AS nul_is_null, "
            f"{read('missing', 'deeper')} IS NULL AS missing_is_null, {read('we' + chr(34) + 'ird/key~')} AS weird, "
            f"{read('arr')} AS arr, {read('a')} AS a_object, "
            "@assay_json_object(('id', case_id), ('name', name), ('qty', qty), ('flag', flag), ('day', day), "
            "('nothing', CAST(NULL AS TEXT))) AS object_text, @assay_json_valid(doc) AS readable, "
            + ", ".join(blocked(*p) for p in (("a", "b"), ("a", "b", "c"), ("t", "x"), ("nul", "x"), ("missing", "x", "y"), ("arr", "x")))
            + " FROM input")


FAMILIES = {
    "try_cast": _try_cast, "parse_ts": _parsed("assay_parse_ts"), "parse_date": _parsed("assay_parse_date"),
    "to_utc": _to_utc, "regex": _regex, "text": _text, "keys": _keys, "flags": _flags, "json": _json,
}
# The integration model's last two regex columns exercise Jinja-internal group rewrites for other
# engines; `matches` and `extracted` are the primitives both targets have.
OMITTED = {"regex": ("extracted_single_group", "extracted_posix_groups")}
SQL_TYPES = {"bigint": "BIGINT", "integer": "INTEGER", "varchar": "TEXT", "boolean": "BOOLEAN", "date": "DATE",
             "timestamp": "TIMESTAMP", "decimal(10,2)": "DECIMAL(10,2)"}


def expected_value(text, column_type: str):
    """A cell of an expected seed as the engine's driver returns that type."""
    if text is None:
        return None
    kind = column_type.split("(")[0]
    if kind in ("bigint", "integer"):
        return int(text)
    if kind == "decimal":
        return Decimal(text)
    if kind == "boolean":
        return {"true": True, "false": False}[text.lower()]
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind == "timestamp":
        return dt.datetime.fromisoformat(text)
    return text




def compare(family: str, got: list[dict], *, omitted: tuple = ()) -> None:
    """`got` (rows by column name, ordered by case_id) must be the family's expected seed, over the
    seed's columns (a model's other columns are its intermediates, as the integration project's
    `equals_expected` test reads only the seed's) but the `omitted` ones."""
    expected_columns, expected_rows = seed(f"it_{family}_expected")
    types = TYPES[f"it_{family}_expected"]
    wanted = [c for c in expected_columns if c not in omitted]
    assert got and set(wanted) <= set(got[0]), (sorted(got[0]) if got else None, wanted)
    got = [{c: r[c] for c in wanted} for r in got]
    expected = [{c: expected_value(r[expected_columns.index(c)], types[c]) for c in wanted} for r in expected_rows]
    expected.sort(key=lambda r: r["case_id"])
    assert len(got) == len(expected)
    differences = [(e, g) for e, g in zip(expected, got) if e != g]
    assert not differences, "\n".join(f"expected {e}\n     got {g}" for e, g in differences)


def jinja_family(family: str, engine: str, relation: Callable[[str], str]) -> str:
    """The integration project's model of `family` (integration_tests/dbt/models/it_<family>.sql),
    rendered with the dbt package's macros for `engine` and each `ref('<seed>')` as
    `relation(<seed>)`: what `dbt build` would run there, for an engine the integration project
    has no profile for. `seed_values` reads the seed file, as the model reads the seed table."""
    import jinja2

    from tests.dbt_package.test_macro_render import render_env

    env = jinja2.Environment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    own = env.from_string((INTEGRATION / "macros" / "decode_markers.sql").read_text(encoding="utf-8")).module
    refs: dict[str, str] = {}

    def ref(name: str) -> str:
        refs[relation(name)] = name
        return relation(name)

    def seed_values(rel: str, columns: list[str], order_by: str = "case_id") -> list[tuple]:
        names, rows = seed(refs[rel])
        key = names.index(order_by)
        ordered = sorted(rows, key=lambda r: (r[key] is None, int(r[key]) if str(r[key]).lstrip("-").isdigit() else 0, str(r[key])))
        return [tuple(r[names.index(c)] for c in columns) for r in ordered]

    env.globals.update(assay=render_env(engine), ref=ref, seed_values=seed_values,
                       decode_markers=own.decode_markers, show_empty=own.show_empty)
    model = (INTEGRATION / "models" / f"it_{family}.sql").read_text(encoding="utf-8")
    return env.from_string(model).render()
