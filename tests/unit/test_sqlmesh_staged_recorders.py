"""What the SQLMesh staged model carries so that a run its key audit stops still records the
entity's check results (decision 0921); the run itself: tests/integration/test_sqlmesh_failed_run_results.py."""

from __future__ import annotations

from assay.api import load_project
from assay.targets.sqlmesh import generate_sqlmesh
from tests.sqlmesh.test_checks_sqlmesh import write_spec


def _files(tmp_path, dedupe: bool) -> dict:
    spec = write_spec(tmp_path / "spec", block_file=True)
    if dedupe:
        text = (spec / "entities.yml").read_text()
        (spec / "entities.yml").write_text(text.replace(
            "    checks:\n      - {check_id: grain_unique",
            "    dedupe: {keep: latest_by, field: observed_at, tie_break: [seq]}\n    checks:\n      - {check_id: grain_unique", 1))
        mapping = spec / "readings.yml"
        mapping.write_text(mapping.read_text() + 'unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]\n')
    return generate_sqlmesh(load_project(spec))


def _staged(files: dict, entity: str) -> str:
    return next(text for path, text in files.items() if path.endswith(f"/{entity}__staged.sql"))


def test_an_entity_without_dedupe_records_from_its_staged_model_when_a_kept_key_repeats(tmp_path):
    staged = _staged(_files(tmp_path, dedupe=False), "reading")
    assert staged.count("@assay_record_declared_checks(") == 1
    assert staged.count("@assay_record_sql_check(") == 2  # few_b, no_station_z
    # every recorder is guarded by the staged key audit's own query (and so is the recorder of
    # the build's counts, decision 1143) ...
    assert staged.count("@assay_record_stopped_counts(") == 1
    assert staged.count("only_if := (") == 4
    assert staged.count("@assay_key_uniqueness_violations(@this_model, (reading_id), TRUE)") == 4
    # ... and measures the rows about to be kept, not the staged table itself
    assert staged.count("WHERE _route = 'kept'") >= 3 and ") AS assay_kept" in staged


def test_an_entity_with_dedupe_records_from_its_entity_only(tmp_path):
    files = _files(tmp_path, dedupe=True)
    staged = _staged(files, "reading")
    # dedupe: no key audit can stop it, so no check is recorded here (only a stop by the
    # ingestion-metadata audit, decision 0935)
    assert "@assay_record_declared_checks" not in staged and "@assay_record_sql_check" not in staged
    assert staged.count("@assay_record_ingestion_stop(") == 1
    entity = next(text for path, text in files.items() if path.endswith("/reading.sql"))
    assert entity.count("@assay_record_declared_checks(") == 1 and "only_if" not in entity
