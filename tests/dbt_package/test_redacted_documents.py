"""`row_json` with key paths (decision 0943) on odd documents, run on DuckDB for both packages
(the dbt package's Jinja, rendered as tests/dbt_package/test_macro_render.py renders it, and the
SQLMesh macro); tests/integration/test_spark_redact_json_keys.py runs the same cases on Spark.

Each document is judged by what matters to the reject table: no value a redaction names is left
(each carries SECRET, no other value does), nothing else is removed, added or changed (unless the
document repeats a key, which each engine reads its own way), and every path a field could still
read (one that intersects no redaction) reads the same text through the mapping's own reader, the package's
`json_extract_text`, from the kept document as from the delivered one, so replay re-runs the
mapping on what the build judged. A value that is not JSON is replaced by text that is not JSON
either; a NULL stays without a member.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from assay.redaction import NOT_JSON
from assay_sqlmesh import render_sql
from tests.dbt_package.test_macro_render import render_env

REDACT = ["phone", "payload.ssn", "payload.j.ssn", "payload.j.k.ssn", "payload.card.number"]
SECRET = "SECRET"
DOCS = [
    '{"b":1.50,"ssn":"SECRET1","c":1E2,"d":-0,"f":123456789012345678901234567890,"h":"\\u00e9\\n\\"q",'
    '"i":[{"x":1.50}],"j":{"k":2.0,"ssn":"SECRET2"},"n":null,"o":true,"p":"1.50","q":"{\\"s\\":1}","we\\"ird":1}',
    '{"a":{"ssn":"not at a redacted path","city":"K"},"ssn":{"deep":"SECRET3"},"card":{"number":"SECRET4","exp":"01/30"}}',
    '  {"j" : {"k": {"ssn": "SECRET5", "z": [1, {"y": 2}]}, "m": "kept"}, "x": "tail"}  ',
    '{"ssn":"SECRET6","ssn":"SECRET7","card":"no object","j":[{"ssn":"in an array, at no path"}]}',
    '{"j":"text","ssn":null,"card":{}}',
    '{}', '[1,2,{"x":1}]', '5', '"str"', 'null',
    '{not json SECRET8', '', None,
]


def paths(doc, prefix=()):
    """Every key path of a JSON value, objects only (a path has no array index)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,)
            yield from paths(v, prefix + (k,))


def readable(text: str) -> list[tuple[str, ...]]:
    """The paths a field may still read: inside `payload`, intersecting no redaction."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return [("x",)]  # a read of text that is not JSON: NULL, with a coercion marker
    redacted = [tuple(r.split(".")[1:]) for r in REDACT if r.startswith("payload.")]
    return sorted({p for p in paths(doc) if not any(p[:len(r)] == r[:len(p)] for r in redacted)})


def _unique(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a repeated key")
    return dict(pairs)


def expected(text: str):
    """The delivered document without the redacted keys, written out here by hand; None for a
    document that repeats a key (each engine reads those its own way)."""
    try:
        doc = json.loads(text, object_pairs_hook=_unique)
    except ValueError:
        return None
    for r in REDACT:
        column, *keys = r.split(".")
        node = doc
        for k in keys[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if column == "payload" and isinstance(node, dict):
            node.pop(keys[-1], None)
    return doc


def rows_sql(values_of) -> str:
    """The documents as a relation `b` (id, phone, payload)."""
    return " UNION ALL ".join(f"SELECT {i} AS id, {values_of(f'+49 {SECRET}')} AS phone, "
                              f"{'NULL' if d is None else values_of(d)} AS payload" for i, d in enumerate(DOCS))


def judge(raws: dict, reads) -> None:
    """`raws`: id -> raw text; `reads(pairs)`: [(delivered text, kept text, path)] -> [(a, b)]."""
    pairs = []
    for i, doc in enumerate(DOCS):
        raw = json.loads(raws[i])
        assert SECRET not in raws[i] and "phone" not in raw and str(raw["id"]) == str(i), raws[i]  # Spark: text
        kept = raw.get("payload")
        if doc is None:
            assert kept is None, raws[i]
            continue
        if kept == NOT_JSON:
            assert readable(doc) == [("x",)] or "SECRET7" in doc, (doc, kept)  # Spark refuses repeated keys
            continue
        want = expected(doc)
        assert want is None or json.loads(kept) == want, (doc, kept)  # nothing else removed, added or changed
        pairs += [(doc, kept, p) for p in readable(doc)]
    got = reads(pairs)
    assert [(p, a) for (_, _, p), (a, _) in zip(pairs, got)] == [(p, b) for (_, _, p), (_, b) in zip(pairs, got)]


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def duckdb_reads(pairs):
    extract = render_env("duckdb").json_extract_text
    conn = duckdb.connect()
    return [conn.execute(f"SELECT {extract(literal(a), list(p))}, {extract(literal(b), list(p))}").fetchone() for a, b, p in pairs]


@pytest.mark.parametrize("package", ["dbt", "sqlmesh"])
def test_duckdb_keeps_no_redacted_value_and_reads_every_other_path_the_same(package):
    row_json = render_env("duckdb").row_json("b", REDACT) if package == "dbt" else \
        render_sql(f"@assay_row_json(b, {', '.join(literal(r) for r in REDACT)})", "duckdb")
    conn = duckdb.connect()
    raws = dict(conn.execute(f"SELECT b.id, {row_json} FROM ({rows_sql(literal)}) AS b").fetchall())
    judge(raws, duckdb_reads)


@pytest.mark.parametrize("package", ["dbt", "sqlmesh"])
def test_duckdb_adds_no_member_to_a_document_that_repeats_a_key(package):
    """A document repeating a key (`ssn` twice) with no `j` or `card`: the patches of `j.ssn`,
    `j.k.ssn` and `card.number` applied regardless and added `"j": {"k": {}}` and `"card": {}`, so
    `raw` held members the delivery never had and replay would re-deliver them (an outside tester,
    session 44)."""
    row_json = render_env("duckdb").row_json("b", REDACT) if package == "dbt" else \
        render_sql(f"@assay_row_json(b, {', '.join(literal(r) for r in REDACT)})", "duckdb")
    conn = duckdb.connect()
    doc = '{"city":"a","ssn":"D1","ssn":"D2"}'
    (raw,) = conn.execute(f"SELECT {row_json} FROM (SELECT 1 AS id, {literal(doc)} AS payload) AS b").fetchone()
    kept = json.loads(json.loads(raw)["payload"]) if isinstance(json.loads(raw)["payload"], str) else json.loads(raw)["payload"]
    assert set(kept) == {"city"} and "D1" not in raw and "D2" not in raw, raw


@pytest.mark.parametrize("package", ["dbt", "sqlmesh"])
def test_postgres_keeps_no_redacted_value_and_reads_every_other_path_the_same(package, postgres_server):
    """PostgreSQL 18 (16+'s validity guard; 15's stand-in function is the package integration
    project's and test_redact_json_keys's): jsonb's `#-`, guarded against scalars and arrays."""
    row_json = render_env("postgres").row_json("b", REDACT).replace('"analytics".assay_input_is_valid(', "pg_input_is_valid(") \
        if package == "dbt" else render_sql(f"@assay_row_json(b, {', '.join(literal(r) for r in REDACT)})", "postgres")
    conn = postgres_server.connect()
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT b.id, {row_json} FROM ({rows_sql(lambda v: literal(v) + '::text')}) AS b")
        raws = dict(cur.fetchall())
        extract = render_env("postgres").json_extract_text

        def reads(pairs):
            out = []
            for a, b, p in pairs:
                cur.execute(f"SELECT {extract(literal(a), list(p))}, {extract(literal(b), list(p))}")
                out.append(cur.fetchone())
            return out

        judge(raws, reads)
    finally:
        conn.close()


def test_the_stand_in_for_text_that_is_not_json_is_one_text():
    """The generator (explain, the report) and both packages write the same stand-in."""
    from assay_sqlmesh.redact_json import NOT_JSON as sqlmesh_not_json

    assert sqlmesh_not_json == NOT_JSON
    assert render_env("duckdb").row_json("b", ["payload.ssn"]).count(literal(NOT_JSON)) == 1
    for engine in ("postgres", "spark"):
        assert literal(NOT_JSON) in render_env(engine).row_json("b", ["payload.ssn"])


# A column named by a SQL check file's alias reaches row_json as a name to leave out; an outside
# tester (session 36) ended the dbt package's string literal with one and ran a query of their own.
HOSTILE = 'x": 1, "leak": "\'||(select 40 + 2)||\'", "y'


def _hostile_row(cur, engine: str) -> str:
    ident = '"' + HOSTILE.replace('"', '""') + '"'
    cur.execute(f"select {render_env(engine).row_json('t', [HOSTILE])} from (select 'SECRET-pii' as {ident}, 'kept' as city) as t")
    return cur.fetchone()[0]


def test_a_name_to_leave_out_is_a_literal_on_duckdb():
    said = json.loads(_hostile_row(duckdb.connect(), "duckdb"))
    assert said == {"city": "kept"}, said


@pytest.mark.postgres
def test_a_name_to_leave_out_is_a_literal_on_postgres(postgres_server):
    conn = postgres_server.connect()
    try:
        said = json.loads(_hostile_row(conn.cursor(), "postgres"))
    finally:
        conn.close()
    assert said == {"city": "kept"}, said
