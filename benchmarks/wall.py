"""Whole-build wall time: assay's generated dbt project against a plain dbt project doing the same
work the obvious way, on the same bronze, side by side in one run.

Target (issue 18, item 3): the retail spec's whole `dbt build` at least 1.5x faster than a plain
dbt project that does the same work the obvious way (one model per step, as a peer generator
emits), on the same data and cores, i.e. assay/plain <= 0.67x.

    python benchmarks/wall.py --rows 3500000 --rounds 3

The spec (benchmarks/specs/retail) has three entities: customer and product deduped, order
deduped with referential rules to both (orphans quarantined / flagged), 38 rules in all (19
declared, 19 implicit `coercible`). Bronze is DuckDB SQL with fixed arithmetic: about 12% of
--rows customers, 3% products, 85% orders, with a few percent dirty values, re-deliveries of a
key and orphans.

Side A: `assay generate dbt` into a project whose profile is `assay.scaffold.duckdb_profile`
(threads: 4, as `assay init` writes it), then `dbt build`.
Side B: a plain dbt project written by this script: per entity `stg_` (casts) -> `dedup_`
(row_number over the key) -> `rules_` (one boolean column per rule, parent entities joined for
the referential rules) -> the entity table (kept rows, with their flag list) -> `quarantine_`
(rows failing a quarantine rule, with their rule list and source text), dbt generic tests
(not_null, unique, accepted_values, relationships) where the spec declares the rule, and a mart
counting failures per rule. Same profile, same threads.

Each round restores both DuckDB files to bronze only (not timed), then times each side's whole
`dbt build` command from outside (process start to exit), alternating which side goes first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import duckdb

from assay.runtime.dbt import dbt_executable, run_dbt
from assay.scaffold import duckdb_profile
from benchproject import generated_project, workdir

SPEC = Path(__file__).parent / "specs" / "retail"
THREADS = 4  # duckdb_profile's default; both sides use it

# Every dirty value is one both sides read the same way: text no engine cast accepts ('x',
# '12,50', 'n/a'), never a borderline form ('12.5' as an int, a date without zero padding).
BRONZE = """
create schema if not exists bronze;
create or replace table bronze.raw_customers as
select
  'l' || (i % 5)::varchar as _load_id,
  (timestamp '2026-01-01' + to_seconds(i))::varchar || 'Z' as _ingested_at,
  'rc' || i::varchar as _source_row_id,
  -- 2.5% re-deliver the previous key (the later delivery wins, dirty or not)
  ' c' || (case when i % 40 = 0 then i - 1 else i end)::varchar || ' ' as id,
  case when i % 53 = 0 then 'no-at-sign' else 'U' || i::varchar || '@example.com' end as email,
  case when i % 67 = 0 then 'USA' else [' de', 'fr', 'us ', 'gb'][1 + i % 4] end as country,
  case when i % 71 = 0 then 'x' when i % 73 = 0 then '7' else (1 + i % 3)::varchar end as tier,
  case when i % 79 = 0 then 'n/a' else (date '2020-01-01' + (i % 1500)::int)::varchar end as signed_up,
  case when i % 59 = 0 then 'gov' else ['Consumer', 'business', ' public '][1 + i % 3] end as segment
from range({customers}) t(i);
create or replace table bronze.raw_products as
select
  'l' || (i % 5)::varchar as _load_id,
  (timestamp '2026-01-01' + to_seconds(i))::varchar || 'Z' as _ingested_at,
  'rp' || i::varchar as _source_row_id,
  'p' || (case when i % 30 = 0 then i - 1 else i end)::varchar as id,
  case when i % 83 = 0 then 'bad' else 'abc-' || lpad((i % 10000)::varchar, 4, '0') end as sku,
  case when i % 61 = 0 then 'misc' else ['Food', 'home', 'TOYS', 'garden', 'tools'][1 + i % 5] end as category,
  case when i % 89 = 0 then '12,50' when i % 97 = 0 then null when i % 101 = 0 then '-3.00'
       else (i % 500)::varchar || '.49' end as price,
  case when i % 103 = 0 then '900.5' else (i % 50)::varchar || '.125' end as weight
from range({products}) t(i);
create or replace table bronze.raw_orders as
select
  'l' || (i % 5)::varchar as _load_id,
  (timestamp '2026-01-01' + to_seconds(i))::varchar || 'Z' as _ingested_at,
  'ro' || i::varchar as _source_row_id,
  'O' || (case when i % 50 = 0 then i - 1 else i end)::varchar as order_ref,
  -- orphans: ids no customer/product row has, besides keys whose parent was quarantined
  case when i % 97 = 0 then 'c-missing-' || i::varchar else 'c' || ((i * 7) % {customers})::varchar end as customer,
  case when i % 113 = 0 then 'p-missing-' || i::varchar else 'p' || ((i * 13) % {products})::varchar end as product,
  case when i % 127 = 0 then 'n/a'
       else '2026-01-0' || (1 + i % 9)::varchar || 'T' || lpad((i % 24)::varchar, 2, '0') || ':00:00Z' end as ts,
  case when i % 131 = 0 then 'lost' else ['Paid', 'pending', ' refunded', 'canceled'][1 + i % 4] end as state,
  case when i % 137 = 0 then 'x' when i % 139 = 0 then '0' else (1 + i % 20)::varchar end as qty,
  case when i % 149 = 0 then '12,50' when i % 151 = 0 then null when i % 157 = 0 then '-1.00'
       when i % 163 = 0 then '20000.00' else (i % 1000)::varchar || '.99' end as price,
  case when i % 7 = 0 then null else (i % 5)::varchar || '.00' end as discount,
  case when i % 167 = 0 then 'fax' else ['Web', 'store', 'PHONE', ' web '][1 + i % 4] end as channel
from range({orders}) t(i);
"""

# The plain project, written the obvious way by hand from the same spec. Per entity: the bronze
# relation, the key, the columns as (name, expression over the bronze row, SQL type or None for
# text), and the rules as (name, condition fired when TRUE, severity, dbt test or None). Only
# declared rules and the coercible rule of a column that is cast are written: a peer generator
# has nothing to check on a text column.
ENTITIES = {
    "customer": {
        "source": "raw_customers",
        "key": "customer_id",
        "columns": [
            ("customer_id", "upper(trim(id))", None),
            ("email", "lower(trim(email))", None),
            ("country", "upper(trim(country))", None),
            ("tier", "tier", "bigint"),
            ("signup_date", "signed_up", "date"),
            ("segment", "lower(trim(segment))", None),
        ],
        "rules": [
            ("email_pattern", "not regexp_full_match(email, '[^@ ]+@[^@ ]+\\.[a-z]+')", "flag", None),
            ("country_length", "length(country) < 2 or length(country) > 2", "quarantine", None),
            ("tier_range", "tier < 1 or tier > 3", "quarantine", None),
            ("segment_in_set", "segment not in ('business', 'consumer', 'public')", "flag",
             ("segment", {"accepted_values": {"arguments": {"values": ["business", "consumer", "public"]}, "config": {"severity": "warn"}}})),
        ],
        "parents": [],
    },
    "product": {
        "source": "raw_products",
        "key": "product_id",
        "columns": [
            ("product_id", "trim(id)", None),
            ("sku", "upper(trim(sku))", None),
            ("category", "lower(category)", None),
            ("list_price", "price", "decimal(12,2)"),
            ("weight_kg", "weight", "decimal(10,3)"),
        ],
        "rules": [
            ("sku_pattern", "not regexp_full_match(sku, '[A-Z]{3}-[0-9]{4}')", "quarantine", None),
            ("category_in_set", "category not in ('food', 'garden', 'home', 'tools', 'toys')", "flag",
             ("category", {"accepted_values": {"arguments": {"values": ["food", "garden", "home", "tools", "toys"]}, "config": {"severity": "warn"}}})),
            ("list_price_not_null", "list_price is null and not list_price_coercible", "quarantine", ("list_price", "not_null")),
            ("list_price_range_min", "list_price < 0", "quarantine", None),
            ("weight_kg_range_max", "weight_kg > 500", "flag", None),
        ],
        "parents": [],
    },
    "order": {
        "source": "raw_orders",
        "key": "order_id",
        "columns": [
            ("order_id", "trim(order_ref)", None),
            ("customer_id", "upper(trim(customer))", None),
            ("product_id", "trim(product)", None),
            ("ordered_at", "ts", "timestamp"),
            ("status", "case lower(trim(state)) when 'canceled' then 'cancelled' else lower(trim(state)) end", None),
            ("quantity", "qty", "bigint"),
            ("amount", "price", "decimal(12,2)"),
            ("discount", "coalesce(discount, '0')", "decimal(12,2)"),
            ("channel", "lower(trim(channel))", None),
        ],
        "rules": [
            ("status_in_enum", "status not in ('cancelled', 'paid', 'pending', 'refunded')", "quarantine",
             ("status", {"accepted_values": {"arguments": {"values": ["cancelled", "paid", "pending", "refunded"]}}})),
            ("quantity_range", "quantity < 1 or quantity > 100", "quarantine", None),
            ("amount_not_null", "amount is null and not amount_coercible", "quarantine", ("amount", "not_null")),
            ("amount_range_min", "amount < 0", "quarantine", None),
            ("amount_range_max", "amount > 10000", "flag", None),
            ("channel_in_set", "channel not in ('phone', 'store', 'web')", "flag",
             ("channel", {"accepted_values": {"arguments": {"values": ["phone", "store", "web"]}, "config": {"severity": "warn"}}})),
            ("discount_not_above_amount", "not (discount <= amount)", "flag", None),
            ("order_of_customer", "d.customer_id is not null and p_customer.customer_id is null", "quarantine",
             ("customer_id", {"relationships": {"arguments": {"to": "ref('customer')", "field": "customer_id"}}})),
            ("order_of_product", "d.product_id is not null and p_product.product_id is null", "flag",
             ("product_id", {"relationships": {"arguments": {"to": "ref('product')", "field": "product_id"}, "config": {"severity": "warn"}}})),
        ],
        "parents": [("customer", "customer_id"), ("product", "product_id")],
    },
}


def _all_rules(spec: dict) -> list[tuple[str, str, str]]:
    """(name, condition, severity): the coercible rule of every cast column, then the declared ones."""
    coercible = [(f"{c}_coercible", f"{c}_coercible", "quarantine") for c, _, t in spec["columns"] if t]
    return coercible + [(n, cond, sev) for n, cond, sev, _ in spec["rules"]]


def plain_models(name: str, spec: dict) -> dict[str, str]:
    """The five models of one entity in the plain project, by file name."""
    cols = spec["columns"]
    stg = []
    for c, expr, t in cols:
        if t:
            stg.append(f"try_cast({expr} as {t}) as {c}")
            stg.append(f"({expr} is not null and try_cast({expr} as {t}) is null) as {c}_coercible")
        else:
            stg.append(f"{expr} as {c}")
    names = [c for c, _, _ in cols]
    markers = [f"{c}_coercible" for c, _, t in cols if t]
    models = {
        f"stg_{name}": (
            "{{ config(materialized='table') }}\nselect\n  "
            + ",\n  ".join(stg)
            + ",\n  _load_id, cast(_ingested_at as timestamp) as _ingested_at, _source_row_id\n"
            + f"from {{{{ source('bronze', '{spec['source']}') }}}} as b\n"
        ),
        f"dedup_{name}": (
            "{{ config(materialized='table') }}\n"
            f"select * from {{{{ ref('stg_{name}') }}}}\n"
            f"qualify row_number() over (partition by {spec['key']} order by _ingested_at desc nulls last, "
            "_load_id desc nulls last, _source_row_id desc nulls last) = 1\n"
        ),
    }
    rules = _all_rules(spec)
    joins = "".join(
        f"left join {{{{ ref('{parent}') }}}} as p_{parent} on d.{col} = p_{parent}.{col}\n" for parent, col in spec["parents"]
    )
    models[f"rules_{name}"] = (
        "{{ config(materialized='table') }}\nselect d.*,\n  "
        + ",\n  ".join(f"coalesce({cond}, false) as r_{rule}" for rule, cond, _ in rules)
        + f"\nfrom {{{{ ref('dedup_{name}') }}}} as d\n{joins}"
    )
    quarantined = " or ".join(f"r_{rule}" for rule, _, sev in rules if sev == "quarantine")
    flags = ", ".join(f"case when r_{rule} then '{rule}' end" for rule, _, sev in rules if sev == "flag")
    failed = ", ".join(f"case when r_{rule} then '{rule}' end" for rule, _, _ in rules)
    models[name] = (
        "{{ config(materialized='table') }}\nselect " + ", ".join(names)
        + f", _load_id, _ingested_at, _source_row_id,\n  concat_ws(',', {flags}) as quality_flags\n"
        + f"from {{{{ ref('rules_{name}') }}}}\nwhere not ({quarantined})\n"
    )
    models[f"quarantine_{name}"] = (
        "{{ config(materialized='table') }}\nselect " + ", ".join(f"r.{c}" for c in [spec["key"]] + markers)
        + f", r._load_id, r._ingested_at, r._source_row_id,\n  concat_ws(',', {failed}) as failed_rules, to_json(b) as raw\n"
        + f"from {{{{ ref('rules_{name}') }}}} as r\n"
        + f"join {{{{ source('bronze', '{spec['source']}') }}}} as b on b._source_row_id = r._source_row_id and b._load_id = r._load_id\n"
        + f"where {quarantined}\n"
    )
    return models


def plain_mart() -> str:
    """Failures per entity and rule, over every rules model."""
    parts = []
    for name, spec in ENTITIES.items():
        counts = ", ".join(f"count_if(r_{rule}) as {rule}" for rule, _, _ in _all_rules(spec))
        parts.append(
            f"select '{name}' as entity, rule, failures from (unpivot (select {counts} from {{{{ ref('rules_{name}') }}}}) "
            "on columns(*) into name rule value failures)"
        )
    return "{{ config(materialized='table') }}\n" + "\nunion all\n".join(parts) + "\n"


def plain_schema() -> str:
    """sources and generic tests (YAML written as JSON, which YAML reads)."""
    models = []
    for name, spec in ENTITIES.items():
        columns: dict[str, list] = {spec["key"]: ["not_null", "unique"]}
        for _, _, _, test in spec["rules"]:
            if test:
                columns.setdefault(test[0], []).append(test[1])
        models.append({"name": name, "columns": [{"name": c, "data_tests": t} for c, t in columns.items()]})
    sources = [{"name": "bronze", "schema": "bronze", "tables": [{"name": s["source"]} for s in ENTITIES.values()]}]
    return json.dumps({"version": 2, "sources": sources, "models": models}, indent=1)


PLAIN_PROJECT = """name: plain
version: "1.0.0"
config-version: 2
profile: plain
model-paths: ["models"]
flags:
  send_anonymous_usage_stats: false
"""


def write_plain_project(work: Path) -> None:
    models = work / "models"
    models.mkdir(parents=True, exist_ok=True)
    (work / "dbt_project.yml").write_text(PLAIN_PROJECT)
    (work / "profiles.yml").write_text(duckdb_profile("plain", "bench.duckdb"))
    for name, spec in ENTITIES.items():
        for model, sql in plain_models(name, spec).items():
            (models / f"{model}.sql").write_text(sql)
    (models / "mart_rule_failures.sql").write_text(plain_mart())
    (models / "schema.yml").write_text(plain_schema())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_build(work: Path) -> tuple[float, float, int, list[dict]]:
    """Wall seconds of the whole `dbt build` command from outside, its CPU seconds (user + system,
    less sensitive than wall time to other work on the machine), its exit code, its node results."""
    cmd = [dbt_executable(), "build", "--project-dir", str(work), "--profiles-dir", str(work)]
    env = {"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_USE_COLORS": "false"}
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, env={**os.environ, **env}, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        print(proc.stdout[-4000:])
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    return wall, cpu, proc.returncode, results


def critical_path(work: Path, results: list[dict]) -> tuple[float, list[str]]:
    """The longest chain of dbt execution times through the DAG of the last build."""
    manifest = json.loads((work / "target" / "manifest.json").read_text())
    secs = {r["unique_id"]: r["execution_time"] for r in results}
    deps = {uid: [d for d in manifest["nodes"].get(uid, {}).get("depends_on", {}).get("nodes", []) if d in secs] for uid in secs}
    best: dict[str, tuple[float, list[str]]] = {}

    def walk(uid: str) -> tuple[float, list[str]]:
        if uid not in best:
            prev = max((walk(d) for d in deps[uid]), default=(0.0, []))
            best[uid] = (prev[0] + secs[uid], prev[1] + [uid])
        return best[uid]

    return max((walk(u) for u in secs), default=(0.0, []))


def counts(db: Path, tables: dict[str, tuple[str, str]]) -> dict[str, tuple[int, int]]:
    """(entity rows, quarantined rows) per entity."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {e: (con.execute(f"select count(*) from {k}").fetchone()[0], con.execute(f"select count(*) from {q}").fetchone()[0])
                for e, (k, q) in tables.items()}
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3_500_000, help="bronze rows in total over the three relations")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", help="keep both projects in this directory")
    args = ap.parse_args()
    customers, products = args.rows * 12 // 100, args.rows * 3 // 100
    orders = args.rows - customers - products
    with workdir(args.keep, "assay-bench-wall-") as work:
        bronze = work / "seed.duckdb"
        con = duckdb.connect(str(bronze))
        con.execute(BRONZE.format(customers=customers, products=products, orders=orders))
        con.close()
        side_a, side_b = work / "assay", work / "plain"
        generated_project(side_a, SPEC)
        write_plain_project(side_b)
        assert run_dbt(side_a, "deps").returncode == 0
        walls: dict[str, list[float]] = {"assay": [], "plain": []}
        cpus: dict[str, list[float]] = {"assay": [], "plain": []}
        print(f"load average before the first round: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
        last: dict[str, list[dict]] = {}
        sides = {"assay": side_a, "plain": side_b}
        for rnd in range(args.rounds):
            order = ["assay", "plain"] if rnd % 2 == 0 else ["plain", "assay"]
            for side in order:
                shutil.copyfile(bronze, sides[side] / "bench.duckdb")
                wall, cpu, rc, results = timed_build(sides[side])
                bad = [r["unique_id"] for r in results if r["status"] in ("error", "fail")]
                if bad:
                    raise SystemExit(f"{side}: dbt build failed (exit {rc}): {bad}")
                walls[side].append(wall)
                cpus[side].append(cpu)
                last[side] = results
            print(f"round {rnd + 1}: assay {walls['assay'][-1]:.2f} s, plain {walls['plain'][-1]:.2f} s, "
                  f"ratio {walls['assay'][-1] / walls['plain'][-1]:.2f}x; CPU assay {cpus['assay'][-1]:.2f} s, "
                  f"plain {cpus['plain'][-1]:.2f} s; load average {os.getloadavg()[0]:.2f}")
        got_a = counts(side_a / "bench.duckdb", {e: (f'silver."{e}"', f'silver."{e}__reject"') for e in ENTITIES})
        got_b = counts(side_b / "bench.duckdb", {e: (f'main."{e}"', f'main."quarantine_{e}"') for e in ENTITIES})
        print(f"\nbronze: {customers:,} customer, {products:,} product, {orders:,} order rows ({args.rows:,}); "
              f"threads {THREADS} on both sides")
        print(f"{'entity':10} {'assay kept':>12} {'plain kept':>12} {'assay quar.':>12} {'plain quar.':>12}")
        for e in ENTITIES:
            print(f"{e:10} {got_a[e][0]:12,} {got_b[e][0]:12,} {got_a[e][1]:12,} {got_b[e][1]:12,}")
        print("entity and quarantine counts " + ("agree" if got_a == got_b else "DIFFER"))
        ma, mb = statistics.median(walls["assay"]), statistics.median(walls["plain"])
        print(f"\nmedian wall: assay {ma:.2f} s, plain {mb:.2f} s; ratio assay/plain {ma / mb:.2f}x "
              f"(target <= 0.67x, i.e. 1.5x faster); plain/assay {mb / ma:.2f}x")
        ca, cb = statistics.median(cpus["assay"]), statistics.median(cpus["plain"])
        print(f"median CPU (user + system of dbt): assay {ca:.2f} s, plain {cb:.2f} s; ratio {ca / cb:.2f}x")
        for side in ("assay", "plain"):
            res = last[side]
            total = sum(r["execution_time"] for r in res)
            secs, path = critical_path(sides[side], res)
            print(f"\n{side}, last round: {len(res)} nodes, {total:.2f} s of node time; critical path {secs:.2f} s:")
            by = {r["unique_id"]: r["execution_time"] for r in res}
            print("  " + " -> ".join(f"{u.split('.')[2]} {by[u]:.2f}" for u in path))
            for r in sorted(res, key=lambda r: -r["execution_time"])[:14 if side == "assay" else 8]:
                print(f"  {r['unique_id'][:64]:64} {r['execution_time']:6.2f} s")
        if got_a != got_b:
            raise SystemExit("entity or quarantine counts differ between the two sides (see above)")


if __name__ == "__main__":
    main()
