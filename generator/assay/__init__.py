"""assay: row-level data quality and table checks for dbt and SQLMesh, generated from YAML specs."""

__version__ = "0.1.0"
