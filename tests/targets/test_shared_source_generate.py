"""Decision 0947 as both targets spell it: where two mappings of an entity read one relation, each
mapping's reject rows are minted with the mapping in their id; a relation one mapping reads keeps
the id it always had (the golden files hold that spelling for every example entity)."""

from __future__ import annotations

from assay.api import dbt_files, load_project
from assay.api_sqlmesh import sqlmesh_files
from tests.integration.test_shared_source_dbt import spec_files

OWN = """\
mapping_version: 1
source: raw_other
target: flow
name: other
key: {flow_id: {from: "$.meter"}}
fields: {kwh: {from: "$.kwh", transform: [{to_decimal: [12, 3]}]}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def _project(tmp_path):
    for name, text in {**spec_files(fixed=False), "other.yml": OWN}.items():
        (tmp_path / name).write_text(text)
    return load_project(tmp_path)


def test_the_reject_id_names_the_mapping_only_where_two_mappings_read_one_relation(tmp_path):
    project = _project(tmp_path)
    dbt = dbt_files(project)["models/assay/flow/flow__reject.sql"]
    for mapping in ("import", "export"):
        assert f'{{{{ assay.reject_id("raw_meter", "s._source_row_id", "{mapping}") }}}} as reject_id' in dbt
    assert '{{ assay.reject_id("raw_other", "s._source_row_id") }} as reject_id' in dbt
    sqlmesh = sqlmesh_files(project)["models/assay/flow/flow__reject.sql"]
    for mapping in ("import", "export"):
        assert f"@assay_reject_id('raw_meter', s._source_row_id, '{mapping}') AS reject_id" in sqlmesh
    assert "@assay_reject_id('raw_other', s._source_row_id) AS reject_id" in sqlmesh
