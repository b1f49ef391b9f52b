"""One table of engine type names (issue 18): the dbt package's `sql_type` macros, rendered for
every engine the package dispatches to, give exactly the names of `assay.engine_types`, which the
SQLMesh macros and assay's own writers read. A type name changed on one side only fails here."""

from __future__ import annotations

import pytest

from assay.engine_types import SIMPLE_TYPES
from assay_sqlmesh._core import type_name
from tests.dbt_package.test_macro_render import PREFIXES, render_env

DECIMALS = ("decimal(12,2)", "decimal(38,0)", "decimal(38,10)", "decimal(30,2)")


def _same(name: str) -> str:
    return name.replace(" ", "").upper()


@pytest.mark.parametrize("engine", sorted(PREFIXES))
def test_the_dbt_packages_type_names_are_the_tables(engine):
    jinja = render_env(engine)
    differ = [(t, jinja.sql_type(t), type_name(t, engine)) for t in SIMPLE_TYPES + DECIMALS
              if _same(jinja.sql_type(t)) != _same(type_name(t, engine))]
    assert not differ, differ


def test_assay_maintain_writes_the_tables_names():
    from assay.retention import _ENGINE_TYPES

    assert _ENGINE_TYPES == {"duckdb": {**_ENGINE_TYPES["duckdb"]}, "postgres": {**_ENGINE_TYPES["postgres"]}}
    assert (_ENGINE_TYPES["postgres"]["string"], _ENGINE_TYPES["duckdb"]["string"]) == ("TEXT", "VARCHAR")
