"""The payloads of the security matrix (issue 21) and the spec that carries them.

One poisoned text `poison(...)` holds every character class the issue names: Jinja openers that
would run SQL, write a file on the host or read an environment variable if rendered, a Jinja
comment that would swallow text, SQLMesh macro syntax, both quote characters, `;`, `%`, `?`,
a newline and dollar quotes, and Jinja that does not parse (an opener with no end). It is put in every text position of the grammar of one spec, so
one build shows all of them inert: each arrives verbatim in the warehouse or the manifest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

CANARY_VAR = "ASSAY_SECURITY_CANARY"
CANARY_VALUE = "canary-5e1f0c9a-not-for-the-warehouse"


def assert_no_canary(tables, files) -> None:
    """No row of `tables` ((schema, table), rows) pairs and no file in `files` holds the canary's
    value: the environment variable a poisoned spec asks for was never read into the warehouse or
    into what the build wrote."""
    for name, rows in tables:
        for row in rows:
            assert not any(CANARY_VALUE in str(v) for v in row), name
    for path in files:
        assert CANARY_VALUE not in path.read_text(encoding="utf-8", errors="replace"), path


# One fragment per character class: each would act if rendered (a table, a file, a secret, text lost).
TOKENS = ("{{", "{%", "{#", "@", '"', "'", ";", "%", "?", "\n", "$$")


def poison(tag: str, pwned_file: Path) -> str:
    """The poisoned text for one position, `tag` naming the tables a live payload would create."""
    return (
        f"<{tag}>"
        f"{{{{ run_query(\"create table pwned_{tag} as select 1\") }}}}"
        f"{{% do run_query(\"copy (select 42) to '{pwned_file}'\") %}}"
        f"{{{{ env_var('{CANARY_VAR}') }}}}"
        "{# a live comment swallows this #}"
        "@assay_x @{gateway} @var"
        # not well-formed Jinja: SQLMesh's load-time Jinja scan of a model must still parse (decision 0971)
        " {{{{x}}}} {% x %}{# \\ \\' \\n \\\\"
        " \"; create table pwned_sql_" + tag + " (x int); -- ' % ? $$ $assay$ $$\n"
        f"</{tag}>"
    )


def y(value) -> str:
    """A YAML scalar holding `value` exactly (JSON is YAML)."""
    return json.dumps(value, ensure_ascii=False)


def sql_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# The bronze columns of the poisoned relation (all text) and, per field, the transforms.
BRONZE = ["_load_id", "_ingested_at", "_source_row_id", "id", "a", "b", "c", "d", "e", "f", "g", "h"]
EXTRACT = r"([{][{][^}]*[}][}])"  # regex_extract: the first {{ ... }} of the poison
PATTERN = r"^<[a-z_]+>[{][{] run_query[^~]*$"  # a pattern rule the poison matches
ENUM_PATTERN = r"^(given|<[a-z_]+>[{][{][^~]*)$"  # an entity field's `assert.regex`, both rows match


def spec_files(p: str, file_poison: str) -> dict[str, str]:
    """The spec of the poisoned entity `thing`, as file name -> text; `p` is the poison."""
    entity = f"""spec_version: 1
entities:
  thing:
    grain: {y(p)}
    owner: {y(p)}
    description: {y(p)}
    key: [id]
    fields:
      id: {{type: string, required: true, description: {y(p)}}}
      c_coalesce: {{type: string, assert: {{enum: {y([p, "given"])}, regex: {y(ENUM_PATTERN)}}}}}
      c_enum: {{type: string}}
      c_concat: {{type: string}}
      c_strip: {{type: string}}
      c_split: {{type: string}}
      c_nullif: {{type: string}}
      c_set: {{type: string}}
      c_extract: {{type: string}}
    quality:
      - rule: expression
        name: not_poison
        expr: {y("c_concat <> " + sql_quote("v" + p))}
        on_fail: flag
    quarantine: {{retention: 7d}}
    checks:
      - check_id: poison_described
        enforcement: advisory
        kind: null_ceiling
        columns: [c_set]
        max_null_ppm: 1000000
        description: {y(p)}
"""
    mapping = f"""mapping_version: 1
source: raw_things
target: thing
description: {y(p)}
key:
  id: {{from: "$.id"}}
fields:
  c_coalesce: {{from: "$.a", transform: [{{coalesce: {y(p)}}}]}}
  c_enum:
    from: "$.b"
    transform: [{{enum_map: {y(["k", p, p, "hit"])}}}]
    quality:
      - {{rule: in_enum, on_fail: flag}}
  c_concat: {{from: "$.c", transform: [{{concat: {y(p)}}}]}}
  c_strip: {{from: "$.d", transform: [{{strip_prefix: {y(p)}}}, {{strip_suffix: {y(p)}}}]}}
  c_split: {{from: "$.e", transform: [{{split_part: {y([p, 2])}}}]}}
  c_nullif: {{from: "$.f", transform: [{{nullif: {y(p)}}}]}}
  c_set:
    from: "$.g"
    quality:
      - {{rule: in_set, values: {y([p])}, on_fail: flag}}
      - {{rule: pattern, regex: {y(PATTERN)}, on_fail: flag}}
  c_extract: {{from: "$.h", transform: [{{regex_extract: {y([EXTRACT, 1])}}}]}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
    tables = f"""tables_version: 1
tables:
  bronze.raw_things:
    description: {y(p)}
    grain: [id]
    columns: [id, g]
    checks:
      - check_id: g_described
        kind: null_ceiling
        enforcement: advisory
        columns: [g]
        max_null_ppm: 1000000
        description: {y(p)}
"""
    # A SQL check whose literal must reach the warehouse verbatim: it blocks the build otherwise.
    check = (
        "/* assay\non_failure: block\n*/\n"
        f"select * from silver.thing where id = 'hit' and c_set <> {sql_quote(p)} -- {p.splitlines()[0]}\n"
    )
    return {f"entity_{file_poison}.yaml": entity, "mapping.yaml": mapping, "tables.yaml": tables,
            "checks/silver/thing/poison_is_data.sql": check}


def bronze_rows(p: str) -> list[list]:
    """Row `hit` exercises every transform on the poison; row `miss` the other branch of each."""
    at = "2026-03-01T08:00:00Z"
    return [
        ["l1", at, "s1", "hit", None, "k", "v", p + "mid" + p, "l" + p + "r", p, p, p],
        ["l1", at, "s2", "miss", "given", p, "w", "plain", "nodelim", "keep", "other", "no braces"],
    ]


def expected_rows(p: str) -> dict[str, dict]:
    """What the warehouse must hold for each row, the poison having been data all along."""
    return {
        "hit": {"c_coalesce": p, "c_enum": p, "c_concat": "v" + p, "c_strip": "mid", "c_split": "r",
                "c_nullif": None, "c_set": p, "c_extract": re.search(EXTRACT, p).group(1)},
        "miss": {"c_coalesce": "given", "c_enum": "hit", "c_concat": "w" + p, "c_strip": "plain", "c_split": "",
                 "c_nullif": "keep", "c_set": "other", "c_extract": None},
    }


# The rules each row fails: `hit` is the poisoned concat (not_poison); `miss` is outside the set
# and does not match the pattern.
EXPECTED_FLAGS = {"hit": {"not_poison"}, "miss": {"c_set_in_set", "c_set_pattern"}}


def flags(value) -> list:
    """`_quality_flags` as a list, whether the engine returns a list or comma-separated text."""
    if value is None:
        return []
    return [v for v in value.split(",") if v] if isinstance(value, str) else list(value)


def write_spec(spec_dir: Path, p: str, file_poison: str) -> None:
    spec_dir.mkdir(parents=True, exist_ok=True)
    for name, text in spec_files(p, file_poison).items():
        (spec_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (spec_dir / name).write_text(text, encoding="utf-8")
