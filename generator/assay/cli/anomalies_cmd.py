"""`assay anomalies [--entity E] [--project DIR] [--json]`: runs whose volume, quarantine rate or a
rule's failure rate left the band learnt from earlier clean runs (docs/anomalies.md).

Reads `gold.mart_data_quality` (and `<meta>.assay_check_results`, when it exists, for the runs a
blocking check failed in) through the project's own connection; the bands are computed by the
warehouse (assay.anomalies.method), this module only prints them. An entity whose latest build
recorded no row in the mart (dbt skipped the mart, a SQLMesh run stopped before it) is judged on an
earlier run: it is said, as `assay report` says it (runtime/history_behind.py, decision 0945), and
changes no exit code. Exit codes (decision 0950):
0 when it ran, also when earlier runs were anomalous; 2 when the latest run of an entity is; 1
when there is no history to read; 3 for an entity the spec does not have.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import click

from ..anomalies.detect import Verdict, iso
from ..anomalies.history import (MART, NO_RATE, as_record, behind_of, latest_of, learnt_text, measure_label, measure_of,
                                 no_value as _no_value, not_judged_lines,
                                 read_verdicts, value_text)
from ..anomalies.method import METHOD, QUARANTINE_RATE
from ..errors import AssayError, ChecksFailed
from ..runtime.history_behind import behind_sentence
from .common import (PROJECT_HELP, build_command, environment_option, json_option, known_entities, plural, project_option, resolve_spec,
                     spec_option, warehouse_options)

def _read(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str],
          environment: Optional[str], entities: tuple[str, ...]) -> tuple[list[Verdict], dict[str, dict]]:
    """The verdicts, and {entity: its latest build} of each entity whose latest build recorded no
    quality history (anomalies/history.py::behind_of)."""
    from ..api import load_project
    from ..runtime.operator import open_warehouse
    from ..runtime.warehouse import warehouse_errors

    spec = resolve_spec(spec_dir, project_dir)
    project = load_project(spec)
    known_entities(project, list(entities), spec)
    with open_warehouse(project, project_dir, profiles_dir=profiles_dir, target=target, environment=environment) as wh:
        with warehouse_errors(f"cannot read the quality history from the warehouse of {wh.describe}"):
            # the spec's entities by default: a mart another project shares holds its entities too (an
            # outside tester, session 45)
            verdicts = read_verdicts(wh, entities or tuple(e.name for e in project.entities))
        if verdicts is None:
            raise AssayError(f"no quality history yet: {wh.project.schema('gold')}.{MART} is not in the warehouse of "
                             f"{wh.describe}; run `{build_command(project_dir)}` (every run appends to it), then "
                             "`assay anomalies`.")
        with warehouse_errors(f"cannot read the latest builds from the warehouse of {wh.describe}"):
            behind = behind_of(wh, verdicts)
        return verdicts, behind


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _thin_reason(v: Verdict) -> str:
    return "no rows evaluated" if _no_value(v) else "not enough history"


def _latest_inside(latest: dict[tuple[str, str], Verdict]) -> str:
    """What the summary may say of the latest runs when none is anomalous: that they are inside
    their bands only for the entities a band judged; nothing judged, it says so (decision 0948)."""
    judged = sorted({v.entity for v in latest.values() if v.judged})
    if not judged:
        return "; no latest run was judged: none has enough history yet"
    if len(judged) == len({v.entity for v in latest.values()}):
        return "; the latest runs are inside their bands"
    return f"; the latest runs of {', '.join(judged)} are inside their bands, the others were not judged"


@click.command("anomalies")
@click.option("--entity", "entities", multiple=True, metavar="ENTITY",
              help="Only this entity (repeat for several; default: every entity of the spec).")
@project_option(PROJECT_HELP)
@spec_option()
@warehouse_options
@environment_option
@json_option("Print the anomalies, and the measures without enough history, as JSON.")
def anomalies_cmd(entities: tuple[str, ...], project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
                  target: Optional[str], environment: Optional[str], as_json: bool) -> None:
    """Runs whose volume (bronze rows loaded since the previous run), quarantine rate or a rule's
    failure rate left the band learnt from earlier runs that were neither anomalous nor failed
    (median +- 4 robust standard deviations, per weekday once there are 6 weeks of it).

    Says so when an entity's latest build recorded no quality history (its latest run judged here
    is an earlier one). Exit 0 when it ran (earlier anomalies are listed, not failed on); 2 when
    the latest run of an entity is anomalous; 1 when there is no history to read.
    """
    verdicts, behind = _read(project_dir, spec_dir, profiles_dir, target, environment, tuple(entities))
    latest = latest_of(verdicts)
    recorded_run = {v.entity: v.run_id for v in latest.values() if v.measure == QUARANTINE_RATE}
    # An entity whose latest build recorded no quality history: its latest run judged here is an
    # earlier one, and the reader is told so, as `assay report` tells it (decision 0945).
    warnings = [{"entity": entity, **found, "recorded_run": recorded_run.get(entity),
                 "warning": behind_sentence(found, recorded_run.get(entity))} for entity, found in sorted(behind.items())]
    latest_runs = {(v.entity, v.run_id) for v in latest.values()}
    flagged = [v for v in verdicts if v.anomalous]
    flagged.sort(key=lambda v: (v.entity, str(v.run_started_at), v.run_id, v.measure))
    thin = sorted((v for v in latest.values() if not v.judged), key=lambda v: (v.entity, v.measure))
    current = [v for v in flagged if (v.entity, v.run_id) in latest_runs]
    if as_json:
        doc = {
            "anomalies": [as_record(v, (v.entity, v.run_id) in latest_runs) for v in flagged],
            "not_enough_history": [{"entity": v.entity, "measure": measure_of(v)[0], "rule": measure_of(v)[1],
                                    "runs": v.history, "needed": METHOD.min_history, "reason": _thin_reason(v)}
                                   for v in thin],
            "runs": {e: max(v.seq for v in verdicts if v.entity == e and v.measure == QUARANTINE_RATE)
                     for e in sorted({v.entity for v in verdicts})},
            "method": asdict(METHOD),
            "history_behind": warnings,
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        if flagged:
            rows = [["entity", "measure", "run", "date", "observed", "band", "median", "learnt from", "direction"]]
            for v in flagged:
                rows.append([v.entity, measure_label(v), v.run_id, iso(v.run_date) or "-",
                             value_text(v, v.observed), f"[{value_text(v, v.low)}, {value_text(v, v.high)}]",
                             value_text(v, v.median), learnt_text(v, plural),
                             v.direction + (" (failed run)" if v.failed else "")])
            for line in _table(rows):
                click.echo(line)
        entities_seen = sorted({v.entity for v in verdicts})
        for line in not_judged_lines(thin, latest, plural):
            click.echo(line)
        for w in warnings:
            click.echo(f"{w['entity']}: {w['warning']}")
        if not verdicts:
            click.echo("no runs recorded" + (f" for {', '.join(entities)}" if entities else "") + " yet")
        else:
            click.echo(f"{plural(len(flagged), 'anomaly', 'anomalies')} in the history of "
                       f"{plural(len(entities_seen), 'entity', 'entities')}"
                       + ("" if current else _latest_inside(latest)))
    if current:
        what = ", ".join(f"{v.entity} {measure_label(v)} {v.direction}" for v in current)
        raise ChecksFailed(f"the latest run is anomalous: {what}.")


COMMANDS = (anomalies_cmd,)
