"""The peer project's dirty-data corpus as bronze relations, with each row's expected outcome.

`CORPUS`, `DIRTY` and `PRECEDENCE` are the paths every test uses (tests/fixtures/corpus).

The CSVs hold hand-made bad values labelled with what the quality semantics
demand. A few bronze relations the specs read have no CSV of their own
(customers, ref parents) or share one (the extremes); this module derives
them, and the derivation is the documented part of the harness:

- `dirty__extremes_<kind>` are the rows of extremes.csv with that raw_kind;
  rows with no raw_kind (the empty-string and zero-length specimens) are
  string specimens.
- `dirty__refs` gets an `amount` column (the spec reads `$.amount`): a valid,
  distinct decimal on every row except the `quarantining_parent_row`
  specimen, whose amount does not cast, which is what quarantines it.
- `dirty__ref_parents` holds every order of refs.csv as a parent order with
  the same amounts, so the order the quarantined specimen names is
  quarantined on the parent side too; `ORD-9999` is absent.
- `dirty__customers` holds `C-100` (admitted) and `C-QUAR` (its tier does not
  cast, so it is quarantined: the "fk_to_quarantined_parent" specimen).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from assay.runtime.csvnull import read_csv

# The one place tests find the corpus: vendored into the repository (MIT, see its LICENSE and
# README.md) so that a clone anywhere runs every corpus test, with nothing beside it.
CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
DIRTY = CORPUS / "dirty"
PRECEDENCE = CORPUS / "precedence"

FAMILIES = {
    "dates": ("dirty__dates", "dirty_date"),
    "enums": ("dirty__enums", "dirty_status"),
    "numerics": ("dirty__numerics", "dirty_number"),
    "keys": ("dirty__keys", "dirty_key"),
    "unicode": ("dirty__unicode", "dirty_name"),
}
EXTREME_KINDS = {
    "decimal": ("dirty__extremes_decimal", "dirty_decimal_extreme"),
    "integer": ("dirty__extremes_integer", "dirty_integer_extreme"),
    "timestamp": ("dirty__extremes_timestamp", "dirty_timestamp_extreme"),
    "string": ("dirty__extremes_text", "dirty_text_extreme"),
}
BAD_AMOUNT = "twelve euros"


@dataclass
class Relation:
    name: str
    columns: list[str]
    rows: list[list[Optional[str]]]


@dataclass
class Expectation:
    entity: str
    source: str
    source_row_id: str
    case: str
    outcome: str  # pass | flag | quarantine | fail | dedupe_winner | dedupe_loser | unknown_member | dialect_divergent
    fk_rewritten: tuple = ()  # columns expected to read '__unknown__'


@dataclass
class Corpus:
    relations: dict[str, Relation] = field(default_factory=dict)
    expectations: list[Expectation] = field(default_factory=list)

    def without_fail_rows(self) -> "Corpus":
        """The corpus minus rows whose expected outcome is a failed run."""
        fail_ids = {(e.source, e.source_row_id, e.case) for e in self.expectations if e.outcome == "fail"}
        out = Corpus()
        for name, rel in self.relations.items():
            idx_srid, idx_case = rel.columns.index("_source_row_id"), rel.columns.index("_case") if "_case" in rel.columns else None
            keep = [r for r in rel.rows if (name, r[idx_srid], r[idx_case] if idx_case is not None else None) not in fail_ids]
            out.relations[name] = Relation(name, rel.columns, keep)
        out.expectations = [e for e in self.expectations if e.outcome != "fail"]
        return out


def _drop(columns: list[str], rows, names: tuple[str, ...]):
    keep = [i for i, c in enumerate(columns) if c not in names]
    return [columns[i] for i in keep], [[r[i] for i in keep] for r in rows]


def dirty_corpus() -> Corpus:
    corpus = Corpus()
    data = DIRTY / "data"
    for family, (source, entity) in FAMILIES.items():
        cols, rows = read_csv(data / f"{family}.csv")
        ci = {c: i for i, c in enumerate(cols)}
        for r in rows:
            corpus.expectations.append(Expectation(entity, source, r[ci["_source_row_id"]], r[ci["_case"]], r[ci["_expected"]]))
        corpus.relations[source] = Relation(source, *_drop(cols, rows, ("_expected",)))
    cols, rows = read_csv(data / "extremes.csv")
    ci = {c: i for i, c in enumerate(cols)}
    for kind, (source, entity) in EXTREME_KINDS.items():
        mine = [r for r in rows if (r[ci["raw_kind"]] or "string") == kind]
        for r in mine:
            corpus.expectations.append(Expectation(entity, source, r[ci["_source_row_id"]], r[ci["_case"]], r[ci["_expected"]]))
        corpus.relations[source] = Relation(source, *_drop(cols, mine, ("_expected",)))
    _refs(corpus, data)
    return corpus


def _refs(corpus: Corpus, data: Path) -> None:
    cols, rows = read_csv(data / "refs.csv")
    ci = {c: i for i, c in enumerate(cols)}
    refs_cols = [c for c in cols if c != "_expected"] + ["amount"]
    refs_rows, parents = [], []
    for n, r in enumerate(rows, start=1):
        case = r[ci["_case"]]
        amount = BAD_AMOUNT if case == "quarantining_parent_row" else f"{n}0.00"
        refs_rows.append([r[ci[c]] for c in cols if c != "_expected"] + [amount])
        parents.append([r[ci["_load_id"]], r[ci["_ingested_at"]], "par_" + r[ci["_source_row_id"]][4:], r[ci["order_id"]], amount])
    corpus.relations["dirty__refs"] = Relation("dirty__refs", refs_cols, refs_rows)
    corpus.relations["dirty__ref_parents"] = Relation(
        "dirty__ref_parents", ["_load_id", "_ingested_at", "_source_row_id", "order_id", "amount"], parents
    )
    corpus.relations["dirty__customers"] = Relation(
        "dirty__customers",
        ["_load_id", "_ingested_at", "_source_row_id", "customer_id", "tier"],
        [
            ["load_2026_01_05_a", "2026-01-05T08:00:00Z", "cus_001", "C-100", "1"],
            ["load_2026_01_05_a", "2026-01-05T08:00:00Z", "cus_002", "C-QUAR", "gold"],
        ],
    )
    admitted_customers = {"C-100"}
    admitted_parents = {r[ci["order_id"]] for r in rows if r[ci["_case"]] != "quarantining_parent_row"}
    for r in rows:
        srid, case, expected = r[ci["_source_row_id"]], r[ci["_case"]], r[ci["_expected"]]
        cust, parent = r[ci["customer_id"]], r[ci["parent_order_id"]]
        rewritten = []
        if cust is not None and cust not in admitted_customers:
            rewritten.append("customer_ref")
        if parent is not None and parent not in admitted_parents:
            rewritten.append("parent_ref")
        corpus.expectations.append(Expectation("dirty_ref", "dirty__refs", srid, case, expected, tuple(rewritten)))
        # The routed entity judges the same rows under quarantine (customer) and flag (parent).
        if case == "quarantining_parent_row" or "customer_ref" in rewritten:
            routed = "quarantine"
        elif "parent_ref" in rewritten:
            routed = "flag"
        else:
            routed = "pass"
        corpus.expectations.append(Expectation("dirty_ref_routed", "dirty__refs", srid, case, routed))
    for row in parents:
        outcome = "quarantine" if row[4] == BAD_AMOUNT else "pass"
        corpus.expectations.append(Expectation("dirty_ref_parent", "dirty__ref_parents", row[2], row[3], outcome))
    corpus.expectations.append(Expectation("dirty_customer", "dirty__customers", "cus_001", "C-100", "pass"))
    corpus.expectations.append(Expectation("dirty_customer", "dirty__customers", "cus_002", "C-QUAR", "quarantine"))
