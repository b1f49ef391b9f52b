"""The `assay` dbt package, shipped as package data inside the assay wheel."""
