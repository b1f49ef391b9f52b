"""What each target cannot realise, refused by validation before anything is emitted.

A target that cannot do what a spec asks must say so by file and line when the spec is
validated for it, never raise while writing files and never drop a construct silently.
Each limit is data: the target, what it cannot do, why, and what the author can do instead,
and the dialects it holds for when it depends on the engine (SQLMesh's `--dialect`).
A limit of severity `warning` is a construct the target skips without changing any row
(an advisory check): it is reported, not refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from ..errors import Diagnostic
from ..identifiers import MAX_IDENTIFIER, is_identifier
from ..lower.spelling import is_simple
from ..spec.loader import SETTINGS_FILE
from .context import Context, joins_quality
from .relations import referential_cycles

CODE = "UNSUPPORTED_BY_TARGET"
TARGETS = ("dbt", "sqlmesh")

# (file, line, subject) of every occurrence of a construct, from the context and normalized checks.
Finder = Callable[[Context, dict, list], Iterator[tuple[str, int, str]]]


@dataclass(frozen=True)
class Limit:
    target: str
    finds: Finder
    reason: str  # completes "<subject> ..."
    remedy: str
    severity: str = "error"
    dialects: Optional[tuple[str, ...]] = None  # the dialects it holds for; None: every dialect
    verb: Optional[str] = None  # how the message opens; default: refused (error) or skipped (warning)


def _incremental(ctx: Context, _declared: dict, _sql: list):
    for name, (file, ent) in sorted(ctx.entities.items()):
        if ent.materialized == "incremental":
            yield file, ent.line("materialized") or ent.line(), f"entity `{name}` (`materialized: incremental`)"


def _reject_models(ctx: Context, _declared: dict, _sql: list):
    """Entities with a `<entity>__reject` model: those that join the quality system (the IR's `has_reject`)."""
    for name, (file, ent) in sorted(ctx.entities.items()):
        if joins_quality(ent, ctx.mappings_of(name)):
            yield file, ent.line(), f"entity `{name}` (its `{name}__reject` model, `INCREMENTAL_BY_UNIQUE_KEY` on `reject_id`)"


def _read_only_declared(enforcement: str) -> Finder:
    """Declared checks of tables a `tables_version: 1` document declares (assay only reads them)."""

    def finds(ctx: Context, declared: dict, _sql: list):
        files = {}
        for file, doc, _r in ctx.loaded.table_docs:
            for tname in doc.tables:
                if tname not in ctx.entities:
                    files.setdefault(tname, file)
        for owner, checks in sorted(declared.items()):
            for check in checks:
                if check.enforcement == enforcement and owner in files:
                    yield files[owner], check.line, f"{enforcement} check `{check.check_id}` of `{owner}`"

    return finds


def _is_entity_check(ctx: Context, check) -> bool:
    return check.namespace == ctx.loaded.settings.schemas.silver and check.table in ctx.entities


def _is_read_only_check(ctx: Context, check) -> bool:
    """A check of a table a `tables_version: 1` document declares (and no entity is named so). A
    check of neither is refused as such, or its table's own document did not parse: a limit of
    either kind would contradict that (an outside tester, session 44)."""
    return not _is_entity_check(ctx, check) and ctx.declares_table(f"{check.namespace}.{check.table}")


def _sql_files(on_failure: tuple[str, ...], of_entities: bool) -> Finder:
    """SQL check files by resolved `on_failure`, of entities or of tables assay only reads."""

    def finds(ctx: Context, _declared: dict, sql_checks: list):
        for rel_path, check in sql_checks:
            if check.on_failure in on_failure and (_is_entity_check if of_entities else _is_read_only_check)(ctx, check):
                line = (check.on_failure_line or 1) if check.on_failure == "keep" else 1
                yield rel_path, line, f"`on_failure: {check.on_failure}` SQL check file `{rel_path}` (check `{check.name}`)"

    return finds


def _unquoted_names(ctx: Context, _declared: dict, _sql: list):
    """Schemas and bronze relations that are identifiers (others are refused for every target)
    but not lower-case or a reserved word: SQLMesh writes relation names unquoted."""
    schemas = ctx.loaded.settings.schemas
    for key in ("bronze", "silver", "gold", "meta"):
        name = getattr(schemas, key)
        if is_identifier(name) and not is_simple(name):
            yield SETTINGS_FILE, schemas.line(key) or schemas.line(), f"`schemas.{key}: {name}`"
    for file, m in ctx.mappings:
        if is_identifier(m.source) and not is_simple(m.source):
            yield file, m.line("source"), f"bronze relation `{m.source}`"


# SQLMesh names a model's physical table `<schema>__<model>__<fingerprint>` in `sqlmesh__<schema>`;
# the fingerprint is a 32-bit number, up to 10 digits.
_FINGERPRINT_DIGITS = 10


def _long_physical_names(ctx: Context, _declared: dict, _sql: list):
    """Entities whose longest SQLMesh physical table name passes PostgreSQL's limit (an outside
    tester, session 41: a 45-character entity planned into `silver__<entity>__staged__<n>`, 73)."""
    schemas = ctx.loaded.settings.schemas
    for name, (file, ent) in sorted(ctx.entities.items()):
        models = [(schemas.silver, name), (schemas.silver, f"{name}__staged"), (schemas.gold, f"mart_data_quality__{name}")]
        if joins_quality(ent, ctx.mappings_of(name)):
            models.append((schemas.silver, f"{name}__reject"))
        schema, model = max(models, key=lambda m: len(m[0]) + len(m[1]))
        longest = len(schema) + 2 + len(model) + 2 + _FINGERPRINT_DIGITS
        if longest > MAX_IDENTIFIER:
            yield file, ent.line(), (f"entity `{name}` (SQLMesh's physical table of `{schema}.{model}` is "
                                     f"`{schema}__{model}__<fingerprint>`, up to {longest} characters; at most "
                                     f"{len(name) - (longest - MAX_IDENTIFIER)} for the entity's name here)")


def _duckdb_only_formats(ctx: Context, _declared: dict, _sql: list):
    """`parse_ts`/`parse_date` formats with a strftime directive only DuckDB's strptime knows: off
    DuckDB the packages parse the portable directives alone, and refuse the rest at compile time."""
    from ..spec.transforms import parse_step, unportable_directives

    for file, m in ctx.mappings:
        for section in ("key", "fields"):
            for col, fm in sorted(getattr(m, section).items()):
                for raw in fm.transform:
                    step, _problem = parse_step(raw)
                    if step is None or step.name not in ("parse_ts", "parse_date") or not step.args:
                        continue
                    odd = unportable_directives(str(step.args[0]))
                    if odd:
                        yield file, fm.line("transform"), (f"`{step.name}: '{step.args[0]}'` of `{col}` in the mapping of "
                                                          f"`{m.source}` ({', '.join(odd)})")


def _lacking_functions(dialects: tuple[str, ...]) -> Finder:
    """Expression rules that call, in the text sqlglot writes for one of `dialects`, a name that
    engine lacks but some engine has (a name no engine has is warned of for every target, by the
    rule's own check): `year(d)` is written `YEAR(d)` for PostgreSQL, which has no `year` (decision 1151)."""
    from ..engine_functions import LABELS, calls, every_name, lacking
    from ..lower.authored import engine_text
    from .expressions import parse_expression

    def finds(ctx: Context, _declared: dict, _sql: list):
        known = every_name()
        for name, (file, ent) in sorted(ctx.entities.items()):
            for rule in ent.quality:
                if rule.rule != "expression" or parse_expression(rule.expr)[1]:
                    continue
                engines: dict[str, list[str]] = {}
                for dialect in dialects:
                    for catalog, names in lacking(engine_text(rule.expr, dialect), dialect).items():
                        for called in names:
                            if called in known:
                                engines.setdefault(called, []).append(LABELS[catalog])
                authored = calls(engine_text(rule.expr, "duckdb"), "duckdb")
                for called, labels in sorted(engines.items()):
                    lack = f"a function {_listed(labels)} {'does' if len(labels) == 1 else 'do'} not have"
                    yield file, rule.line("expr") or rule.line(), (
                        f"expression rule `{rule.name}` of entity `{name}` calls `{called}`, {lack}" if called in authored
                        else f"expression rule `{rule.name}` of entity `{name}` is written for {_listed(labels)} with a "
                             f"call of `{called}` (sqlglot's spelling of a function it names otherwise), {lack}")

    return finds


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


_LACKING = ("(sqlglot writes a call it cannot spell for an engine as it is), so the build stops there "
            "unless the database defines it")
_LACKING_REMEDY = ("write a function every engine has, or one sqlglot spells for each engine (`extract(year from d)` "
                   "for `year(d)`, `strpos(s, 'x') > 0` for `contains(s, 'x')`)")

_DUCKDB_ONLY = ("is understood by DuckDB's own strptime only: on PostgreSQL and Spark assay parses the portable "
                "directives (%Y %y %m %b %B %d %H %M %S %f %%) and the build stops at compile time")
_DUCKDB_ONLY_REMEDY = "write the format with the portable directives, or parse the value with `regex_extract` first"

# A child is judged against its parent's published rows, so a referential rule orders the build.
_CYCLE = ("has no build order: a child is judged against its parent's published rows, so each entity of "
          "the cycle would have to be built before itself (decision 0954)")
_CYCLE_REMEDY = ("keep the referential rule on one side only (the relationship itself may stay, for `coverage`), "
                 "or check the other direction with a `reconcile`")

LIMITS: tuple[Limit, ...] = (
    *(Limit(target, referential_cycles, _CYCLE, _CYCLE_REMEDY) for target in TARGETS),
    # dbt's engine is the profile's, which validation does not know: said, not refused. A directive
    # no engine reads at all is refused for every target, by the transform's own check (decision 1126).
    Limit("dbt", _duckdb_only_formats, _DUCKDB_ONLY, _DUCKDB_ONLY_REMEDY + " if the project runs off DuckDB",
          severity="warning", verb="note"),
    # A database may define a function assay's catalogs lack (a UDF, an extension): said, not refused.
    Limit("dbt", _lacking_functions(("duckdb", "postgres", "spark")), _LACKING, _LACKING_REMEDY + " if the project runs there",
          severity="warning", verb="note"),
    *(Limit("sqlmesh", _lacking_functions((d,)), _LACKING, _LACKING_REMEDY, severity="warning", verb="note", dialects=(d,))
      for d in ("duckdb", "postgres", "spark")),
    Limit("sqlmesh", _duckdb_only_formats, _DUCKDB_ONLY, _DUCKDB_ONLY_REMEDY,
          dialects=("postgres", "spark", "databricks", "snowflake", "bigquery", "trino", "redshift")),
    Limit(
        "sqlmesh",
        _unquoted_names,
        "is written unquoted in SQLMesh models, where an upper-case letter is folded to lower case on "
        "PostgreSQL and a reserved word does not parse (decision 0900)",
        "write lower-case letters, digits and `_`, not a SQL keyword, to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _long_physical_names,
        f"passes the {MAX_IDENTIFIER} characters PostgreSQL allows in a name, so the plan stops on it",
        "shorten the entity's name (or the schema's) to generate for SQLMesh on PostgreSQL, or generate for dbt",
        dialects=("postgres",),
    ),
    Limit(
        "sqlmesh",
        _incremental,
        "needs the ledger-style staged model, which exists for dbt only",
        "use `materialized: table` to generate for SQLMesh, or generate for dbt",
    ),
    # Checks of entities run on SQLMesh as audits (decisions 0210-0213); what SQLMesh cannot do:
    Limit(
        "sqlmesh",
        _sql_files(("keep",), of_entities=True),
        "needs the table marked kept and its readers refused until its checks pass again, which SQLMesh "
        "cannot do: an audit can only stop the plan or run it belongs to, never a later one (decision 0213)",
        "use `on_failure: block` (a failing plan leaves the virtual layer on the previous data) or "
        "`on_failure: warn` to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _read_only_declared("required"),
        "would never stop the table's readers: the SQLMesh target runs checks as audits of the models assay "
        "builds, and this table is only read (decision 0213)",
        "make it `enforcement: advisory` or remove it to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _read_only_declared("advisory"),
        "is not run: the SQLMesh target runs checks as audits of the models assay builds, and this table is "
        "only read (decision 0213)",
        "generate for dbt to record its results",
        severity="warning",
    ),
    Limit(
        "sqlmesh",
        _sql_files(("block", "keep"), of_entities=False),
        "would never stop the table's readers: the SQLMesh target runs checks as audits of the models assay "
        "builds, and this table is only read (decision 0213)",
        "move the file out of the checks directory to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _sql_files(("warn",), of_entities=False),
        "is not run: the SQLMesh target runs checks as audits of the models assay builds, and this table is "
        "only read (decision 0213)",
        "generate for dbt to record its results",
        severity="warning",
    ),
    # Apache Spark's own tables are parquet: no MERGE, UPDATE or DELETE. What SQLMesh writes by
    # INSERT, INSERT OVERWRITE or a rebuild is allowed there (decision 0830).
    Limit(
        "sqlmesh",
        _reject_models,
        "keeps the reject history by key, which SQLMesh applies with `MERGE INTO` the stored table on Spark, "
        "and Spark's parquet tables take no MERGE, UPDATE or DELETE (decision 0830)",
        "generate for dbt (`assay generate dbt`), whose package builds these tables on Spark parquet by "
        "rebuild-and-swap; or `--dialect databricks` for Delta tables",
        dialects=("spark",),
    ),
)


def check_target(ctx: Context, target: str, declared: dict, sql_checks: list,
                 dialect: Optional[str] = None) -> list[Diagnostic]:
    """Every construct of the spec that `target` cannot realise, by file and line.

    `dialect` (SQLMesh's `--dialect`) adds the limits of that dialect; without one, only the
    limits that hold for every dialect apply.
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; one of {', '.join(TARGETS)}")
    out = []
    for limit in LIMITS:
        if limit.target != target or (limit.dialects is not None and dialect not in limit.dialects):
            continue
        verb = limit.verb or ("refused" if limit.severity == "error" else "skipped")
        where = target if limit.dialects is None else f"{target} --dialect {dialect}"
        for file, line, subject in limit.finds(ctx, declared, sql_checks):
            message = f"{verb} on {where}: {subject} {limit.reason}; {limit.remedy}."
            out.append(Diagnostic(file, line or 1, message, CODE, severity=limit.severity))
    return out
