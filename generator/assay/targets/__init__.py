"""Targets: emit a project (dbt or SQLMesh) from the IR as a mapping of path -> text."""
