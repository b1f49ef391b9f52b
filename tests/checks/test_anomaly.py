"""Anomaly checks at build time (decision 1030): validation, lowering, and the sentence decided
from the recorded numbers (the Jinja twin is held equal in tests/dbt_package/test_verdict_agreement.py)."""

from __future__ import annotations

from pathlib import Path

from assay.checks.anomaly import anomaly_detail
from assay.lower.anomaly import detector_sql
from tests.support.items import compile_items, problems

ENTITY_PROBLEMS = """\
    thresholds:
      anomaly: {metrics: [volume, size, volume], on_breach: stop, min_history: 2, window: 3}"""
T = "THRESHOLD_INVALID"
WHICH = "write the number of eligible earlier runs needed before a run is judged, a whole number from 3 to 28 " \
        "(default 7; the band learns from at most the latest 28 runs)"


def test_every_anomaly_problem_at_once_with_file_line_and_what_to_write(tmp_path: Path) -> None:
    _p, diags, _ = compile_items(tmp_path, thresholds=ENTITY_PROBLEMS, expr_limit=", anomaly: {metrics: [volume]}",
                                 range_limit=", anomaly: {on_breach: warn, min_history: 29}")
    entity = "the thresholds mapping of entity item"
    rule = "expression rule name_not_x of entity item"
    assert problems(diags) == [
        ("entities.yml", 12, T, f"{entity} lists metric 'size' in anomaly.metrics, which is not a metric; write volume or "
                                "quarantine_rate (a rule's failure rate: anomaly: {on_breach: ...} on the rule)"),
        ("entities.yml", 12, T, f"{entity} lists metric volume twice in anomaly.metrics; list it once"),
        ("entities.yml", 12, T, f"{entity} states anomaly.window, which is not a key of anomaly; the accepted keys are "
                                "metrics, on_breach, min_history"),
        ("entities.yml", 12, T, f"{entity} states min_history 2 in anomaly; {WHICH}"),
        ("entities.yml", 12, T, f"{entity} states on_breach 'stop' for anomaly; write fail (an anomalous run sets the "
                                "entity back) or warn (recorded, published)"),
        ("entities.yml", 14, T, f"{rule} states anomaly.metrics, which is not a key of anomaly (a rule's anomaly judges "
                                "that rule's failure rate; the entity's metrics are listed in its thresholds: anomaly); "
                                "the accepted keys are on_breach, min_history"),
        ("entities.yml", 14, T, f"{rule} states no on_breach for anomaly; write on_breach: fail (an anomalous run sets "
                                "the entity back: it is not published and the previous version stays) or on_breach: "
                                "warn (recorded, published) in the mapping, as there is no default"),
        ("items.yml", 12, T, f"the range rule on qty in mapping raw_items states min_history 29 in anomaly; {WHICH}"),
    ]


def test_empty_metrics_a_fail_rule_and_a_list_are_refused(tmp_path: Path) -> None:
    _p, diags, _ = compile_items(tmp_path, thresholds="    thresholds:\n      on_breach: warn\n      anomaly: {metrics: []}",
                                 expr_fail="fail", expr_limit=", anomaly: {on_breach: warn}", range_limit=", anomaly: [warn]")
    assert [(f, line, m.split(";")[0]) for f, line, _c, m in problems(diags)] == [
        ("entities.yml", 13, "the thresholds mapping of entity item states an empty list of metrics in anomaly"),
        ("entities.yml", 15, "expression rule name_not_x of entity item fails the run on the first row it fires on "
                             "(on_fail: fail), so its failure rate is never recorded"),
        ("items.yml", 12, "the range rule on qty in mapping raw_items states anomaly a list"),
    ]


def test_lowering_ids_kinds_order_and_inherited_on_breach(tmp_path: Path) -> None:
    project, diags, _ = compile_items(
        tmp_path, thresholds="    thresholds:\n      on_breach: fail\n      anomaly: {metrics: [quarantine_rate, volume]}",
        expr_limit=', max_rate: "0.5", on_breach: warn, anomaly: {min_history: 5}',
        range_limit=", anomaly: {on_breach: fail}")
    assert diags == []
    [item] = project.entities
    got = [(c.check_id, c.kind, c.enforcement, c.metric, c.rule, c.min_history) for c in item.declared_checks]
    assert got == [
        ("NAME_NOT_X_RATE", "rule_rate", "advisory", None, "name_not_x", None),
        ("VOLUME_ANOMALY", "anomaly", "required", "volume", None, 7),
        ("QUARANTINE_RATE_ANOMALY", "anomaly", "required", "quarantine_rate", None, 7),
        ("NAME_NOT_X_ANOMALY", "anomaly", "advisory", "failure_rate", "name_not_x", 5),
        ("QTY_RANGE_MIN_ANOMALY", "anomaly", "required", "failure_rate", "qty_range_min", 7),
    ]


def test_the_measuring_query_runs_the_detectors_own_text(tmp_path: Path) -> None:
    from assay.targets.dbt.declared_checks import declared_macro
    from assay.targets.sqlmesh.checks import post_statements
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    project, diags, _ = compile_items(tmp_path, thresholds="    thresholds:\n      anomaly: {metrics: [volume], on_breach: warn}")
    assert diags == []
    [item] = project.entities
    macro = declared_macro(item, project)
    # dbt: one project for every adapter; the detector's text for the engine dbt runs on
    from assay.targets.dbt.spelling import ADAPTER_DIALECTS

    for adapter, dialect in ADAPTER_DIALECTS.items():
        assert f'target.type == "{adapter}" %}}\n' + detector_sql(dialect) in macro
    # an adapter with no spelling is refused when dbt renders the query, never handed another engine's SQL
    assert "{% else %}{{ exceptions.raise_compiler_error('assay writes this query for the adapters bigquery, " in macro
    assert "assay.history_relations(" in macro
    [statement] = post_statements(item, project, SqlmeshSpelling("duckdb", project))
    assert all(line.strip() in statement for line in detector_sql("duckdb").splitlines())


def test_an_entity_without_the_kind_measures_nothing_of_it(tmp_path: Path) -> None:
    from assay.targets.dbt.declared_checks import declared_macro

    project, _d, _ = compile_items(tmp_path, thresholds='    thresholds:\n      max_quarantine_rate: "0.5"\n      on_breach: warn')
    macro = declared_macro(project.entities[0], project)
    assert "assay_an" not in macro and "history_relations" not in macro


VOLUME = {"metric": "volume", "min_history": 7}


def test_not_judged_sentences_say_what_is_missing() -> None:
    first = anomaly_detail(VOLUME, {"history": 0})
    assert first.passed and first.detail == ("no earlier run of the entity is recorded, so no load is measured and the "
                                             "volume is not judged against a band learnt from earlier runs")
    thin = anomaly_detail(VOLUME, {"history": 6, "observed": "9000.0", "low": "10.0", "high": "20.0"})
    assert thin.passed and thin.detail == ("loaded 9000 rows since the previous run; 6 eligible earlier runs can be "
                                           "learnt from and 7 are needed (min_history), so the volume of this load is "
                                           "not judged")
    empty = anomaly_detail({"metric": "quarantine_rate", "min_history": 3}, {"history": 5, "evaluated": 0, "failing": 0})
    assert empty.passed and empty.detail == ("quarantined 0 of 0 evaluated rows, so the quarantine rate is not judged "
                                             "against a band learnt from earlier runs")


def test_judged_sentences_band_direction_and_weekday() -> None:
    down = anomaly_detail(VOLUME, {"history": 20, "learnt_from": 6, "observed": "1.0", "median": "10220.5",
                                   "low": "8210.3", "high": "12230.9", "season": "weekday", "run_date": "2026-02-18"})
    assert not down.passed
    assert down.detail == ("loaded 1 row since the previous run, below the band [8211, 12230] learnt from 6 earlier "
                           "runs on Wednesdays (median 10220)")
    # bronze pruned by more than it received: a negative load, said as a loss
    lost = anomaly_detail(VOLUME, {"history": 20, "learnt_from": 6, "observed": "-1198.0", "median": "10220.5",
                                   "low": "8210.3", "high": "12230.9", "season": "all", "run_date": "2026-02-18"})
    assert lost.detail.startswith("bronze lost 1198 rows since the previous run (a load of -1198), below the band"), lost.detail
    # a weekday band learnt from one run (outside both bands in the first weeks) says so in the singular
    one = anomaly_detail(VOLUME, {"history": 8, "learnt_from": 1, "observed": "1.0", "median": "10220.5",
                                  "low": "8210.3", "high": "12230.9", "season": "weekday", "run_date": "2026-02-17"})
    assert one.detail.endswith("learnt from 1 earlier run on a Tuesday (median 10220)"), one.detail
    rule = {"metric": "failure_rate", "rule": "amount_ok", "min_history": 7}
    edge = anomaly_detail(rule, {"history": 9, "learnt_from": 9, "evaluated": 4, "failing": 3, "observed": "0.75",
                                 "median": "0.25", "low": "0.0", "high": "0.75", "season": "all"})
    assert edge.passed and edge.detail == ("rule 'amount_ok' fired on 3 of 4 evaluated rows, a rate of 0.75, within the "
                                           "band [0, 0.75] learnt from 9 earlier runs (median 0.25)")
    # one ulp above the edge: the rate rounded up, the band's high down (0100's reasoning), so it reads above
    above = anomaly_detail(rule, {"history": 9, "learnt_from": 9, "evaluated": 3, "failing": 1,
                                  "observed": "0.33333333333333337", "median": "0.25", "low": "0.0",
                                  "high": "0.3333333333333333", "season": "all"})
    assert not above.passed
    assert above.detail == ("rule 'amount_ok' fired on 1 of 3 evaluated rows, a rate of 0.3334, above the band "
                            "[0, 0.3333] learnt from 9 earlier runs (median 0.25)")
