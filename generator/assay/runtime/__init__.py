"""Talking to a warehouse and to dbt at run time (never imported by `assay generate`)."""
