"""`assay explain ENTITY [KEY ...] [--source-row-id ID] [--project DIR] [--spec DIR] [--json]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from ..explanation import LIMIT
from .common import (PROJECT_HELP, build_command, environment_option, load_command, json_option, known_entities, project_option, require_built,
                     resolve_spec, spec_option, warehouse_options)


@click.command("explain")
@click.argument("entity")
@click.argument("key", nargs=-1)
@click.option("--source-row-id", default=None, help="Explain one source row (every delivery of it) instead of a key.")
@click.option("--limit", type=click.IntRange(min=0), default=LIMIT, show_default=True,
              help="List at most this many deliveries of the key (the judged one first, then in the dedupe order) "
                   "and count the rest; 0 lists every one.")
@project_option(PROJECT_HELP)
@spec_option()
@warehouse_options
@environment_option
@json_option("Print the explanation as JSON.")
def explain_cmd(entity: str, key: tuple[str, ...], source_row_id: Optional[str], limit: int, project_dir: Path,
                spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str], environment: Optional[str], as_json: bool) -> None:
    """Why a key is (or is not) in the entity: every bronze delivery, the transformed values, the
    coercions that failed, each rule's verdict, the dedupe and its reason, the route, the reject history.

    KEY is one value per key column, in the order of the entity's `key:`.
    """
    from ..api import load_project
    from ..api_sqlmesh import is_sqlmesh_project
    from ..errors import AssayError, AssayUsageError, WarehouseError
    from ..explain import Explainer
    from ..runtime.operator import open_warehouse

    spec = resolve_spec(spec_dir, project_dir)
    project = load_project(spec)
    known_entities(project, [entity], spec)
    ent = project.entity(entity)
    if not key and source_row_id is None:
        raise AssayUsageError(f"name a key ({', '.join(ent.key)}) or pass --source-row-id")
    if key and source_row_id is not None:
        # the source row names its key (its latest delivery's); a KEY beside it was explained
        # instead, with a reason that was not true of it (an outside tester, session 45)
        raise AssayUsageError(f"give a key ({', '.join(ent.key)}) or --source-row-id, not both: with --source-row-id the "
                              "key explained is the one the source row's latest delivery carries")
    if key and len(key) != len(ent.key):
        raise AssayUsageError(f"{entity} has the key ({', '.join(ent.key)}): give {len(ent.key)} "
                              f"{'value' if len(ent.key) == 1 else 'values'}, in that order; got {len(key)}")
    with open_warehouse(project, project_dir, profiles_dir=profiles_dir, target=target, environment=environment) as wh:
        ent = wh.project.entity(entity)
        require_built(wh, entity, "__staged", project_dir)
        explainer = Explainer(wh.project, ent, wh.reader.query, wh.reader.columns, wh.reader.relation,
                              sqlmesh=is_sqlmesh_project(project_dir))
        try:
            result = explainer.explain(dict(zip(ent.key, key)) if key else None, source_row_id, limit)
        except Exception as exc:
            raise WarehouseError(f"cannot read {entity}'s tables in the warehouse: {exc}; run `{build_command(project_dir)}` first") from None
    shown_result = [json.dumps(result.as_dict(), indent=2, sort_keys=True, default=str)] if as_json else result.render()
    if not result.deliveries and not result.rejects and not result.history:
        # Nothing of it was found (not even a type-2 key's closed versions): a script must not read
        # that as an answer (exit 1). The explanation is printed all the same, as the error's output.
        what = f"--source-row-id {source_row_id}" if source_row_id is not None else "the key " + ", ".join(key)
        if result.unjudged:
            # bronze holds loads the last build did not judge, which may deliver it: "not in bronze"
            # contradicted the sentence above it (an outside tester, session 45)
            raise AssayError(f"{what} is in none of the rows {entity}'s last build judged, nor in its reject rows; bronze "
                             f"holds loads that build did not judge (above), which may deliver it: run "
                             f"`{load_command(project_dir)}`, then explain it again.", out=shown_result)
        raise AssayError(f"{what} is not in {entity}'s bronze or reject rows; assay explain {entity} takes "
                         f"{', '.join(ent.key)} as delivered after its transforms (the values `assay report` and "
                         "the entity table show), or --source-row-id with a bronze _source_row_id.", out=shown_result)
    for line in shown_result:
        click.echo(line)


COMMANDS = (explain_cmd,)
