"""An independent, pure-Python account of what a build must do to every bronze row.

Written from reference 001, DESIGN.md (sections 2, 3, 8), docs/internals/pipeline.md and the
decisions (0001, 0003, 0300, 0301, 0302, 0014), never from the product: the oracle reads the spec
YAML itself (`spec.read_spec`, yaml.safe_load and its own reading of the grammar) and imports
nothing from `assay`. Rule names, implicit rules, dispositions, the owner mapping of a field
rule, the dedupe order and typed `in_set` values are all resolved here, so a resolver bug in the
product shows up as a disagreement instead of being copied.

Where the contract leaves a value to the engine (whitespace around a number, `1e3`, a leading
`+`, non-ASCII case mapping, ...) the oracle raises `Undefined` instead of guessing (0300). A spec
construct it does not model, or a spec the product must refuse, raises `Unsupported` when the
oracle is built.

Layers:
- `spec`: the spec read and resolved (`read_spec(dir)`).
- `values`: casts, transform chains, patterns, expressions.
- `judge`: `Oracle(spec_dir).build(bronze)` judges one build statelessly: each delivery's
  supersession (0014), dedupe rank, fired rules and route, and the mart rows of that run.
- `ledger`: `RejectLedger` carries the reject table across builds; `Warehouse` strings builds
  together (`respec` swaps the spec, `replay` says what `assay replay` must re-deliver);
  `expected_state` / `observed_state` / `placements` compare with a real warehouse.

Not modelled (construction raises `Unsupported`): referential rules; type-2, incremental and
not-opted-in entities; JSON paths into a bronze column; transforms other than trim/upper/lower/
to_string/enum_map/strip_prefix/strip_suffix/concat/coalesce/nullif (on text), to_int/to_decimal/
parse_date/parse_ts (ISO8601); bool and variant values; expressions beyond `<col> <op> <col|literal>`
and `<col> IS [NOT] NULL`. Not modelled and not refused: coverage and reconcile checks (they do
not move rows), retention, what a blocked build leaves behind (the ledger refuses to guess), the
values of resolved_at, last_evaluated_at, run_id and run_date (only which build resolved a row).
"""

from .judge import Build, EntityJudgement, MartRow, Oracle, Staged, reject_id
from .ledger import (REPLAY_LOAD_ID, RejectLedger, RejectRow, Warehouse, astuple_mart, check_resolution_stamps, expected_state,
                     observed_state, placements)
from .spec import Spec, read_schemas, read_spec
from .values import Undefined, Unsupported, parse_timestamp, text_form

__all__ = [
    "Undefined", "Unsupported", "Staged", "MartRow", "EntityJudgement", "Build", "RejectRow", "RejectLedger", "Oracle",
    "Warehouse", "reject_id", "parse_timestamp", "text_form", "expected_state", "observed_state", "placements",
    "astuple_mart", "check_resolution_stamps", "read_spec", "read_schemas", "Spec", "REPLAY_LOAD_ID",
]
