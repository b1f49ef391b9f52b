"""Lowering shared by the targets: facts about SQL that do not depend on dbt or SQLMesh."""
