"""Plain DuckDB SQL as a `Spelling`, no templating: the parts a target spells and nothing it
decides, so the tests of `lower/` can run a lowered query on DuckDB as it is."""

from __future__ import annotations

from assay.lower.spelling import Spelling, Sql

#: What `run_timestamp` is in these tests: a fixed instant, so a story's stamps are known.
NOW = "timestamp '2026-01-03 00:00:00'"
#: ... and the run's id.
RUN = "'run-3'"


def _text(arg) -> str:
    return arg.text if isinstance(arg, Sql) else arg


class DuckSpelling(Spelling):
    """The DuckDB spelling of the few engine primitives the lowered reject and audit queries call."""

    def ident(self, name):
        return name

    def string(self, value):
        return "'" + value.replace("'", "''") + "'"

    def cast(self, expr, assay_type, safe):
        assert not safe, (assay_type, safe)
        # assay's type names that DuckDB spells otherwise; decimal(p,s), timestamp, date as written
        return f"cast({expr} as {dict(string='varchar', int='bigint').get(assay_type, assay_type)})"

    def call(self, macro, *args):
        if macro == "run_timestamp":
            return NOW
        if macro == "reject_id":
            source, row, *mapping = args  # the package's spelling (decision 0947)
            return f"md5({self.string(source + ''.join(':' + m for m in mapping))} || '|' || {_text(row)})"
        if macro == "delivery_fingerprint":  # the package's DuckDB spelling
            return f"hash(cast({_text(args[0])} as varchar), cast({_text(args[1])} as varchar))"
        if macro == "fingerprint_sum":
            return f"sum({_text(args[0])})"
        assert macro == "flags_contain", macro
        flags, rule = args
        return f"list_contains({_text(flags)}, {self.string(rule)})"

    def run_id(self):
        return RUN

    def json_object(self, pairs):
        return "json_object(" + ", ".join(f"{self.string(k)}, {v}" for k, v in pairs) + ")::varchar"

    def row_json(self, alias, redact):
        return f"to_json({alias})::varchar"

    def bronze(self, source):
        return f"bronze_{source}"

    def staged(self, entity):
        return "staged"
