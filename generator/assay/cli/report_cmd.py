"""`assay report [--project DIR] [--spec DIR] [--out FILE.html] [--json] [--now TIMESTAMP]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from .common import PROJECT_HELP, Progress, build_command, environment_option, json_option, plural, project_option, resolve_spec, shown, spec_option, warehouse_options
from .maintain_cmd import _parse_now


@click.command("report")
@project_option(PROJECT_HELP)
@spec_option()
@warehouse_options
@environment_option
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the HTML page here (default: assay-report.html in the project).")
@json_option("Print the report's numbers as JSON instead of writing HTML.")
@click.option("--now", "now_text", default=None, help="The clock ages and freshness are measured from (ISO 8601, UTC; default: now).")
def report_cmd(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str], environment: Optional[str],
               out_file: Optional[Path], as_json: bool, now_text: Optional[str]) -> None:
    """One self-contained HTML page of what the builds did: a health verdict per entity (latest
    build, failing checks, freshness), bronze = kept (flagged among them) + quarantined + deduped
    per run with dates, each rule's trend and a ranking across entities, example rows with the
    `assay explain` command for each, open reject rows by age, the spec's owner, grain and
    descriptions, the latest check results, dbt's own test outcomes, and the runs whose volume or
    rates left the band learnt from earlier runs (the anomalies `assay anomalies` lists)."""
    from ..anomalies.history import report_verdicts, summary
    from ..api import load_project
    from ..report.gather import Gatherer
    from ..report.html import render
    from ..report.tool_results import tool_results
    from ..runtime.operator import open_warehouse
    from ..runtime.warehouse import project_kind, warehouse_errors

    if as_json and out_file is not None:
        # --json prints the numbers instead of the page: an --out beside it would be ignored and
        # the operator left believing the file was written.
        raise click.UsageError(f"--json prints the report's numbers instead of writing the page, so --out "
                               f"{shown(out_file)} would not be written; drop --json to write the page, or --out "
                               "to print the numbers.")
    now = _parse_now(now_text)
    with Progress("report", 4, quiet=as_json) as progress:
        progress.step("reading the spec")
        project = load_project(resolve_spec(spec_dir, project_dir))
        progress.step("connecting to the warehouse")
        with open_warehouse(project, project_dir, profiles_dir=profiles_dir, target=target, environment=environment) as wh:
            progress.step(f"reading what the builds did ({plural(len(project.entities), 'entity', 'entities')})")
            reader = wh.reader
            # A driver's error is the warehouse's answer, said as such; anything else is a bug and
            # is not dressed up as a warehouse error.
            with warehouse_errors(f"cannot read the warehouse of {shown(project_dir)} (run `{build_command(project_dir)}` "
                                  "first)", project_kind(project_dir)):
                options = (("--target", target) if target else ()) + (("--environment", environment) if environment else ())
                tool = tool_results(wh.project, project_dir, project_kind(project_dir), profiles_dir, target)
                verdicts, runs = report_verdicts(wh)
                anomalies = summary(verdicts, plural, runs)
                data = Gatherer(wh.project, reader.query, reader.columns, reader.exists, reader.relation,
                                wh.environment).gather(
                    now, explain_options=options, tool=tool, anomalies=anomalies)
        if as_json:
            click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))
            return
        target_file = out_file or project_dir / "assay-report.html"
        progress.step(f"writing {shown(target_file)}")
        target_file.write_text(render(data), encoding="utf-8")
    click.echo(f"wrote {shown(target_file)} ({plural(len(data['entities']), 'entity', 'entities')}); "
               "open it in a browser, it needs no network")


COMMANDS = (report_cmd,)
