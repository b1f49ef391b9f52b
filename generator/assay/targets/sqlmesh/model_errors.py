"""The statements that let a SQLMesh run record an entity's model whose SQL errored (decision 1164).

An entity's own build is its staged, reject and entity models (a type-2 entity's `__current`:
the SCD type 2 model only versions what it wrote), as dbt's hook names an errored `__staged`,
`__reject` or `__current` node (decision 0940). Each of them opens with `@assay_model_begins`
and closes, after its last post-statement, with `@assay_model_ends`; the config's `after_all`
statement `@assay_record_errored_models` records a model that began and did not end
(assay_sqlmesh.model_errors).
"""

from __future__ import annotations

from ...ir.model import Entity
from .spelling import SqlmeshSpelling


def _model(name: str) -> str:
    """The model's name as dbt names its node: without the schema, as `node_errored: <model>` says it."""
    return name.rsplit(".", 1)[-1].strip('"`')


def begins(entity: Entity, model: str, low: SqlmeshSpelling) -> str:
    """The pre-statement that opens `model`, one of `entity`'s own models."""
    return f"@assay_model_begins({low.string(entity.name)}, {low.string(_model(model))});\n"


def ends(model: str, low: SqlmeshSpelling) -> str:
    """The post-statement that closes `model`: last, after every recorder, before its audits."""
    return f"@assay_model_ends({low.string(_model(model))});\n"


def watched(entity: Entity, model: str, low: SqlmeshSpelling, statements: str) -> str:
    """`statements` (the model's query and its post-statements) between its opening and closing
    statements."""
    body = statements.rstrip().rstrip(";") + ";\n\n"
    return begins(entity, model, low) + "\n" + body + ends(model, low)
