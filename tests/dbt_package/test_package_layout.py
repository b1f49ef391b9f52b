"""The `assay` dbt package is laid out like dbt-utils (decision 0600):

- one public macro per file, named after it, beside its `default__`/`<adapter>__` forms;
- internal helpers (called only by package macros) start with `_`, and generated code never
  calls one; every name generated code calls is a public macro of the package;
- every public macro is documented in macros/schema.yml with a description and its arguments,
  and has a README section;
- every public macro that emits SQL dispatches through `adapter.dispatch(..., 'assay')` and has
  a `default__` form.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
MACROS = REPO / "dbt_package" / "macros"
ADAPTERS = ("default", "duckdb", "postgres", "redshift", "spark", "snowflake", "bigquery", "trino", "databricks")
DEFINITION = re.compile(r"\{%-?\s*(macro|test|materialization)\s+([A-Za-z0-9_]+)\s*(?:\(([^)]*)\))?")
# Emits no SQL, so there is nothing for an adapter to change.
NOT_DISPATCHED = {"built_this_run", "selected_this_run", "fingerprinted_ledger", "incremental_ledger_check", "ledger_fingerprinted", "assay_entity", "assay_check_task", "kept_history"}


def _implementation(name: str) -> bool:
    return any(name.startswith(a + "__") for a in ADAPTERS)


def _definitions() -> dict[Path, list[tuple[str, str, list[str]]]]:
    out = {}
    for path in sorted(MACROS.rglob("*.sql")):
        defs = []
        for kind, name, args in DEFINITION.findall(path.read_text()):
            params = [a.split("=")[0].strip() for a in args.split(",") if a.strip()]
            defs.append((kind, name, params))
        out[path] = defs
    return out


def _owned(path: Path) -> list[tuple[str, str, list[str]]]:
    return [d for d in _definitions()[path] if not _implementation(d[1])]


def _public() -> dict[str, tuple[str, list[str], Path]]:
    out = {}
    for path, defs in _definitions().items():
        for kind, name, params in defs:
            if not _implementation(name) and not name.startswith("_"):
                out[name] = (kind, params, path)
    return out


def _yml_name(kind: str, name: str) -> str:
    return {"test": f"test_{name}", "materialization": f"materialization_{name}_default"}.get(kind, name)


def _generated_calls() -> set[str]:
    names = set()
    for root in (REPO / "generator" / "assay" / "targets" / "dbt", REPO / "tests" / "golden" / "dbt"):
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in (".py", ".sql", ".yml"):
                text = path.read_text(errors="replace")
                names.update(re.findall(r"\bassay\.([A-Za-z_][A-Za-z0-9_]*)\s*\(", text))
                names.update(re.findall(r"\bcall\(\"([A-Za-z_][A-Za-z0-9_]*)\"", text))
                names.update(re.findall(r"['\"]assay\.([A-Za-z_][A-Za-z0-9_]*)['\"]?", text))
    return names


@pytest.mark.parametrize("path", sorted(_definitions()), ids=lambda p: str(p.relative_to(MACROS)))
def test_one_macro_per_file_named_after_it(path: Path) -> None:
    owned = _owned(path)
    assert len(owned) == 1, f"{path.name} defines {[d[1] for d in owned]}"
    assert owned[0][1] == path.stem
    for kind, name, _ in _definitions()[path]:
        if _implementation(name):
            base = name.split("__", 1)[1]
            assert base in (path.stem, f"test_{path.stem}"), f"{name} does not belong in {path.name}"


def test_generated_code_calls_public_macros_only() -> None:
    public = _public()
    internal = {d[1] for defs in _definitions().values() for d in defs if d[1].startswith("_")}
    calls = _generated_calls() & (set(public) | internal)
    assert calls, "no call of the package found in the generator"
    assert not calls & internal, f"generated code calls internal helpers {sorted(calls & internal)}"


def test_internal_helpers_are_called_by_the_package() -> None:
    text = "\n".join(p.read_text() for p in MACROS.rglob("*.sql"))
    for path, defs in _definitions().items():
        for _, name, _ in defs:
            if name.startswith("_"):
                assert re.search(rf"assay\.{name}\(", text), f"{name} has no caller in the package"


def test_every_public_macro_is_documented_with_its_arguments() -> None:
    doc = yaml.safe_load((MACROS / "schema.yml").read_text())
    entries = {m["name"]: m for m in doc["macros"]}
    readme = (REPO / "dbt_package" / "README.md").read_text()
    public = _public()
    expected = {_yml_name(kind, name) for name, (kind, _, _) in public.items()}
    assert set(entries) == expected, (sorted(expected - set(entries)), sorted(set(entries) - expected))
    for name, (kind, params, _) in public.items():
        entry = entries[_yml_name(kind, name)]
        assert set(entry) <= {"name", "description", "arguments"}, (name, entry)
        assert entry.get("description", "").strip(), name
        if kind != "materialization":
            assert [a["name"] for a in entry.get("arguments", [])] == params, name
            for a in entry.get("arguments", []):
                assert set(a) == {"name", "type", "description"}, (name, a)
                assert a["description"] and a["type"], (name, a["name"])
        assert re.search(rf"^### {name}$", readme, re.M), f"README has no section for {name}"


def test_sql_macros_dispatch_with_a_default() -> None:
    for name, (kind, params, path) in _public().items():
        if name in NOT_DISPATCHED:
            continue
        text = path.read_text()
        dispatched = f"test_{name}" if kind == "test" else name
        assert f"adapter.dispatch('{dispatched}', 'assay')" in text, f"{name} does not dispatch"
        assert re.search(rf"macro default__{dispatched}\(", text), f"{name} has no default__"
