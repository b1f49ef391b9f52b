"""Anomalies learnt from clean history: `assay anomalies` (docs/anomalies.md).

- :mod:`assay.anomalies.method`: the settings and the one SQL text (median and MAD on the
  warehouse, written for each engine by sqlglot);
- :mod:`assay.anomalies.detect`: the sequential rule (anomalous runs are not learnt from, a level
  shift is) and the verdicts;
- :mod:`assay.anomalies.synthetic`: generated histories with known anomalies, for the benchmark
  and the tests.

Nothing here imports a database driver: the caller hands in a function that runs one query.
"""
