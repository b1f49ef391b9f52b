"""The `item` spec the threshold tests share (rate thresholds, change limits: docs/thresholds.md):
one entity with a flag rule on `name` and a quarantine rule on `qty`, its mapping, bronze rows of
it, and what a test reads back after a dbt build (the run id, `assay checks`, the published keys).

`ENTITY` and `MAPPING` are templates for the unit tests (`compile_items` fills the `@part@`
places); the integration tests write their whole spec and use the rest."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.support.corpus import Relation

ENTITY = """\
spec_version: 1
entities:
  item:
    grain: one row per item
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      name: {type: string}
      qty: {type: int}
    quarantine: {retention: 30d}
@thresholds@
    quality:
      - {rule: expression, name: name_not_x, expr: "name <> 'x'", on_fail: @expr_fail@@expr_limit@}
@checks@
"""
MAPPING = """\
mapping_version: 1
source: raw_items
target: item
key:
  item_id: {from: "$.id"}
fields:
  name: {from: "$.name"}
  qty:
    from: "$.qty"
    transform: [to_int]
    quality:
      - {rule: range, min: 0, on_fail: quarantine@range_limit@}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "name", "qty"]


def fill(text: str, **parts: str) -> str:
    for name, part in parts.items():
        text = text.replace(f"@{name}@", part)
    return text


def compile_items(tmp_path: Path, thresholds="", expr_limit="", range_limit="", checks="", expr_fail="flag"):
    """The `item` spec with these parts, compiled (assay.ir.resolve.compile_spec's result)."""
    from assay.ir.resolve import compile_spec

    spec = tmp_path / "spec"
    spec.mkdir(exist_ok=True)
    (spec / "entities.yml").write_text(fill(ENTITY, thresholds=thresholds, expr_limit=expr_limit, checks=checks,
                                            expr_fail=expr_fail))
    (spec / "items.yml").write_text(fill(MAPPING, range_limit=range_limit))
    return compile_spec(spec)


def problems(diagnostics) -> list[tuple]:
    return [(d.file, d.line, d.code, d.message) for d in diagnostics]


def write_spec(root: Path, entities: str, mapping: str) -> Path:
    spec = root / "spec"
    spec.mkdir()
    (spec / "entities.yml").write_text(entities)
    (spec / "items.yml").write_text(mapping)
    return spec


def items_load(load: str, rows: list[tuple[str, str]]) -> list[list[str]]:
    """Bronze rows i1..iN of one load `l<k>` (ingested on day k), each (name, qty)."""
    return [[load, f"2026-02-0{load[-1]}T08:00:00Z", f"{load}-{n}", f"i{n}", name, qty]
            for n, (name, qty) in enumerate(rows, 1)]


def one_load(load: str, rows: list[tuple[str, str]]) -> Relation:
    """raw_items holding only load `l<k>` (bronze replaced by each load)."""
    return Relation("raw_items", COLS, items_load(load, rows))


def bronze(*loads: list[tuple[str, str]]) -> Relation:
    """raw_items holding every load given, in load order."""
    return Relation("raw_items", COLS, [r for k, load in enumerate(loads, 1) for r in items_load(f"l{k}", load)])


def run_id(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def checks(project, run: str):
    """(`assay checks RUN --json`'s exit code, its results by check id, the text output)."""
    from assay.cli.main import cli

    res = CliRunner().invoke(cli, ["checks", run, "--json", "--project", str(project.path)])
    text = CliRunner().invoke(cli, ["checks", run, "--project", str(project.path)])
    return res.exit_code, {r["check_id"]: r for r in json.loads(res.stdout)}, text.stdout


def published(project) -> list[str]:
    return [r[0] for r in project.query('select item_id from silver."item" order by item_id')]
