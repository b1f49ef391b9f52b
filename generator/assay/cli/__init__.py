"""The `assay` command line: a thin Click layer over the core API."""
