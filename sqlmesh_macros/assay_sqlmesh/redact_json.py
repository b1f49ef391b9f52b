"""A reject row's `raw` with the `quarantine.redact` paths removed, per engine (decision 0943).

`redact` entries are dotted paths relative to `$.`: `phone` drops the column, `payload.ssn` removes
the key `ssn` from the JSON document the text of column `payload` holds. A value of such a column
that is not JSON the engine reads cannot be rewritten and may hold the secret: `raw` keeps
NOT_JSON in its place, text that is not JSON either, so replay judges the row as the build did (a
path read of it is a coercion failure, decision 1123). A NULL leaves the member out. Every spelling leaves each path no field reads (validation
refuses a redaction that intersects one) reading the same text as before, so replay re-runs the
mapping on what the build judged. The dbt package's `row_json` spells the same table.
"""

from __future__ import annotations

import json as _json

from ._core import lit

# What `raw` keeps of a value that is not JSON (the package's row_json and assay.redaction agree).
NOT_JSON = "(redacted: not JSON)"


# Null members kept, whatever the session's setting, and a timestamp's microseconds (to_json's
# default format stops at milliseconds; a space, as DuckDB writes one): the dbt package's
# spark__row_json writes the same.
SPARK_JSON_OPTIONS = "MAP('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX')"


def split(redact: list[str]) -> tuple[list[str], dict[str, list[tuple[str, ...]]]]:
    """(whole columns, column -> key paths inside its JSON document), each sorted. A column left
    out whole has no key paths: a list may name both (`payload`, read by a pii field, beside
    `payload.ssn`, a redaction), and a rewritten document put back would carry the pii key
    (decision 1155)."""
    whole = sorted(e for e in redact if "." not in e)
    inside: dict[str, list[tuple[str, ...]]] = {}
    for entry in sorted(redact):
        column, *keys = entry.split(".")
        if keys and column not in whole:
            inside.setdefault(column, []).append(tuple(keys))
    return whole, inside


def _tree(paths: list[tuple[str, ...]]) -> dict:
    # {'a': {'ssn': None}}: None removes the key, a dict descends into it
    out: dict = {}
    for p in paths:
        node = out
        for k in p[:-1]:
            node = node.setdefault(k, {})
        node[p[-1]] = None
    return out


def _pointer(keys) -> str:
    # a JSON Pointer; keys are identifiers, so nothing in them needs escaping
    return "".join("/" + k for k in keys)


def duckdb_document(text_sql: str, paths: list[tuple[str, ...]], valid_sql: str) -> str:
    """An RFC 7396 merge patch per path (a null member removes its key), applied where the key's
    parent is an object, so a missing or non-object step is left as delivered (a patch would
    write `{}` there). DuckDB reads the first of repeated keys, so a step that repeats could hide
    a later copy from that test: where a level repeats a key and holds the path's step, the patch
    applies regardless, and it merges the copies.
    A document that is no object holds no key: it is kept as delivered (a patch would replace it)."""
    out = text_sql
    for p in paths:
        parent = f"JSON_TYPE({text_sql}, {lit(_pointer(p[:-1]), 'duckdb')})" if len(p) > 1 else f"JSON_TYPE({text_sql})"
        repeats = []
        for i in range(len(p)):
            keys = f"JSON_KEYS({text_sql}, {lit(_pointer(p[:i]), 'duckdb')})" if i else f"JSON_KEYS({text_sql})"
            # only where the step itself is there: a patch at a path whose step is absent would add
            # it (`"j": {}`) to a document that merely repeats another key (session 44)
            repeats.append(f"(LEN({keys}) > LEN(LIST_DISTINCT({keys})) AND LIST_CONTAINS({keys}, {lit(p[i], 'duckdb')}))")
        patch = lit(_json.dumps(_tree([p]), sort_keys=True), "duckdb")  # as dbt's tojson writes it
        applies = " OR ".join([f"{parent} = 'OBJECT'"] + repeats)
        out = f"JSON_MERGE_PATCH({out}, CASE WHEN {applies} THEN {patch} ELSE '{{}}' END)"
    return (f"CASE WHEN {valid_sql} THEN CASE WHEN JSON_TYPE({text_sql}) = 'OBJECT' THEN CAST({out} AS TEXT) ELSE {text_sql} END "
            f"WHEN {text_sql} IS NOT NULL THEN {lit(NOT_JSON, 'duckdb')} END")


def _members(node: dict, dialect: str) -> tuple[list[str], list[tuple[str, dict]]]:
    """One level of the tree: the keys it removes (as literals), and (literal, subtree) of each key
    a path descends into."""
    removed = [lit(k, dialect) for k, sub in sorted(node.items()) if sub is None]
    return removed, [(lit(k, dialect), sub) for k, sub in sorted(node.items()) if sub is not None]


def _postgres_level(t: str, node: dict, depth: int) -> str:
    # The object's members in document order, as json (not jsonb) keeps their text: a number reads
    # as delivered (`1E2`, not jsonb's `100`) and repeated keys stay (json reads the last).
    e = f"assay_e{depth}"
    removed, descend = _members(node, "postgres")
    whens = [f"WHEN {e}.key = {k} AND JSON_TYPEOF({e}.value) = 'object' THEN {_postgres_level(f'{e}.value', sub, depth + 1)}"
             for k, sub in descend]
    value = f"CASE {' '.join(whens)} ELSE {e}.value END" if whens else f"{e}.value"
    where = f" WHERE NOT {e}.key IN ({', '.join(removed)})" if removed else ""
    return (f"COALESCE((SELECT JSON_OBJECT_AGG({e}.key, {value} ORDER BY {e}.ordinality) "
            f"FROM JSON_EACH({t}) WITH ORDINALITY AS {e}(key, value, ordinality){where}), CAST('{{}}' AS JSON))")


def postgres_document(text_sql: str, paths: list[tuple[str, ...]], valid_sql: str) -> str:
    """The object rebuilt from its members without the redacted keys (jsonb's `#-` would re-spell
    every number the mapping reads through json). A document that is no object holds no key."""
    doc = f"CAST({text_sql} AS JSON)"
    return (f"CASE WHEN {valid_sql} THEN CASE WHEN JSON_TYPEOF({doc}) = 'object' THEN CAST({_postgres_level(doc, _tree(paths), 0)} AS TEXT) "
            f"ELSE {text_sql} END WHEN {text_sql} IS NOT NULL THEN {lit(NOT_JSON, 'postgres')} END")


def _spark_level(t: str, node: dict, depth: int) -> str:
    # An object's members rebuilt one by one: a string re-quoted, every other value as Jackson
    # copied it (the text get_json_object reads), a member on a path rewritten in turn.
    e = f"assay_e{depth}"
    removed, descend = _members(node, "spark")
    entries = f"MAP_ENTRIES(FROM_JSON({t}, 'map<string,string>'))"
    if removed:
        entries = f"FILTER({entries}, {e} -> NOT {e}.key IN ({', '.join(removed)}))"
    kind = f"SCHEMA_OF_VARIANT(FROM_JSON({t}, 'map<string,variant>')[{e}.key])"
    whens = [f"WHEN {e}.value IS NULL THEN 'null'"]
    whens += [f"WHEN {e}.key = {k} AND {kind} LIKE 'OBJECT%' THEN {_spark_level(f'{e}.value', sub, depth + 1)}"
              for k, sub in descend]
    whens.append(f"WHEN {kind} = 'STRING' THEN TRIM(BOTH '[]' FROM TO_JSON(ARRAY({e}.value)))")
    member = f"CONCAT(TRIM(BOTH '[]' FROM TO_JSON(ARRAY({e}.key))), ':', CASE {' '.join(whens)} ELSE {e}.value END)"
    return f"CONCAT('{{', ARRAY_JOIN(TRANSFORM({entries}, {e} -> {member}), ','), '}}')"


def spark_document(text_sql: str, paths: list[tuple[str, ...]]) -> str:
    """Spark has no JSON key removal: the object is rebuilt from its members. A document Spark's
    variant parser refuses (not JSON, or a repeated key) is NOT_JSON; one that is no object is
    written again as parsed, which drops whatever followed its first value."""
    parsed = f"TRY_PARSE_JSON({text_sql})"
    return (f"CASE WHEN {text_sql} IS NULL THEN NULL WHEN {parsed} IS NULL THEN {lit(NOT_JSON, 'spark')} "
            f"WHEN SCHEMA_OF_VARIANT({parsed}) LIKE 'OBJECT%' THEN {_spark_level(text_sql, _tree(paths), 0)} "
            f"ELSE TO_JSON({parsed}) END")


def duckdb_row(alias: str, whole: list[str], inside: dict, document) -> str:
    """The whole row, patched: a redacted column's member removed, a rewritten one replaced (a
    NULL removes it too). A column's text is read from the row's JSON, not named: an entity's
    mappings read relations of their own, and one may not have the column."""
    pairs = [f"{lit(c, 'duckdb')}, NULL" for c in whole]
    pairs += [f"{lit(c, 'duckdb')}, {document(f'JSON_EXTRACT_STRING(TO_JSON({alias}), ' + lit(_pointer([c]), 'duckdb') + ')', paths)}"
              for c, paths in sorted(inside.items())]
    return f"CAST(JSON_MERGE_PATCH(TO_JSON({alias}), JSON_OBJECT({', '.join(pairs)})) AS TEXT)"


def postgres_row(alias: str, whole: list[str], inside: dict, document) -> str:
    """The row without the redacted and rewritten members, then the rewritten ones that are not
    NULL (a column's text read from the row's JSON, as on DuckDB)."""
    dropped = "".join(f" - {lit(c, 'postgres')}" for c in whole + sorted(inside))
    pairs = ", ".join(f"{lit(c, 'postgres')}, {document(f'(TO_JSONB({alias}) ->> ' + lit(c, 'postgres') + ')', paths)}"
                      for c, paths in sorted(inside.items()))
    return f"CAST(((TO_JSONB({alias}){dropped}) || JSONB_STRIP_NULLS(JSONB_BUILD_OBJECT({pairs}))) AS TEXT)"


def spark_row(whole_row: str, whole: list[str], inside: dict) -> str:
    """The row as a map of variants (member order kept, each value its own JSON: a map of texts
    turned a decimal(38,9) into a double's digits), each rewritten member replaced, the redacted
    ones and a NULL rewritten one filtered out."""
    rows = "map<string,variant>"
    value = "v"
    if inside:
        value = "CASE k " + " ".join(f"WHEN {lit(c, 'spark')} THEN CAST({spark_document('CAST(v AS STRING)', paths)} AS VARIANT)"
                                     for c, paths in sorted(inside.items())) + " ELSE v END"
    drop = [f"k IN ({', '.join(lit(c, 'spark') for c in whole)})"] if whole else []
    if inside:
        drop.append(f"(k IN ({', '.join(lit(c, 'spark') for c in sorted(inside))}) AND v IS NULL)")
    mapped = f"FROM_JSON({whole_row}, '{rows}')"
    if inside:
        mapped = f"TRANSFORM_VALUES({mapped}, (k, v) -> {value})"
    return f"TO_JSON(MAP_FILTER({mapped}, (k, v) -> NOT ({' OR '.join(drop)})), {SPARK_JSON_OPTIONS})"
