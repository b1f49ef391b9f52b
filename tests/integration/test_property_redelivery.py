"""Generated feeds with re-deliveries through a real `dbt build` on DuckDB, judged by the oracle
and by the conservation law after every load.

The spec is the multiday one (customers without dedupe, orders with dedupe and a referential
rule at quarantine). Each example is two or three loads into an append-only bronze: a load
draws its source rows from small pools, so a `_source_row_id` comes back in a later load
(unchanged, corrected, corrupted, under another order key, or ingested earlier than the
delivery it follows), order keys collide across source rows, orders refer to customers that
arrive late, never, or are held, and a few deliveries may age out of bronze before the last
load. After each build the entity, staged, reject and mart tables must equal the oracle's
account, and every bronze delivery must be in exactly one place (by counts and row by row).

Like test_property_dbt.py (decision 0303): one project per session, dbt in-process, the reject
tables and the mart dropped before each example so a failure replays alone, no shrinking
(each step would be more builds; an example is at most ~25 rows, printed through `note()`).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, event, given, note, settings
from hypothesis import strategies as st

from tests.integration.test_multiday import DbtTarget, conservation_counts, spec_dirs
from tests.support.feed import Bronze
from tests.support.oracle import expected_state, observed_state, placements
from tests.support.oracle.referential import Warehouse

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("generated re-deliveries; in the fast loop test_redelivery_dbt.py and sqlmesh/test_redelivery_sqlmesh.py cover re-delivery on DuckDB"),
]

# customers has no dedupe: cuN delivers key C-N, or C-N0 when the source corrects its key (0014),
# or none, so two source rows never claim one key (a NULL key is never a duplicate)
CUSTOMER_SRIDS = ["cu1", "cu2", "cu3", "cu4"]
ORDER_SRIDS = [f"or{i}" for i in range(1, 9)]
ORDER_KEYS = ["O-1", "O-2", "O-3", " O-4"] * 3 + [None]  # a NULL key never dedupes against another (0003)
CUSTOMER_REFS = ["C-1", "c-2", " C-3 ", "C-4", "C-9", "C-10", None]  # C-9 never arrives; NULL is not an orphan


def mostly(ok: list, bad: list, weight: int = 3):
    """Clean values `weight` times as likely as each bad one, so rows still pass often (0303)."""
    return st.sampled_from(ok * weight + bad)


def times(load: int):
    # Two instants of the load's own day (ties happen), an offset spelling of one of them, now
    # and then an instant before every load (a delivery older than the one it follows), and from
    # the second load an instant whose text sorts before the previous load's but which is later
    # (12:00Z spelled 07:00-05:00): delivery order compares instants, never text (0302, 0014).
    day = f"2026-03-0{load}"
    pool = [f"{day}T08:00:00Z", f"{day}T09:30:00Z", f"{day}T10:30:00+01:00"] * 3 + ["2026-02-28T23:00:00Z"]
    if load > 1:
        pool += [f"2026-03-0{load - 1}T07:00:00-05:00"] * 2
    return st.sampled_from(pool)


def customer(srid: str, load: int):
    n = srid[2:]
    return st.fixed_dictionaries({
        "_load_id": st.just(f"l{load}"),
        "_ingested_at": times(load),
        "_source_row_id": st.just(srid),
        "id": st.sampled_from([f"C-{n}", f"c-{n}", f" C-{n}"] * 3 + [f"C-{n}0", None]),
        "email": mostly([f"c{n}@shop.io", "shared@shop.io", None], ["no mail"]),
        "tier": mostly(["G", "S", " B", "gold"], ["X"]),
        "name": st.sampled_from(["ann", "bartholomew-x", None]),
    })


def order(srid: str, load: int):
    return st.fixed_dictionaries({
        "_load_id": st.just(f"l{load}"),
        "_ingested_at": times(load),
        "_source_row_id": st.just(srid),
        "id": st.sampled_from(ORDER_KEYS),
        "customer": mostly(CUSTOMER_REFS, [], 1),
        "status": mostly(["new", " Paid ", "shipped"], ["lost"]),
        "amount": mostly(["10.00", "250.5", "7200"], ["-1", "12,50"]),
        "discount": st.sampled_from(["1.00", "9999", None]),
        "qty": mostly(["1", "3", "0"], ["75", "x"]),
        "ordered": mostly(["2025-01-01", "2019-12-31", "2024-02-29"], ["2025-02-30", None]),
    })


@st.composite
def feeds(draw):
    n_loads = draw(st.integers(2, 3))
    loads = []
    seen_o: list = []
    seen_c: list = []
    for load in range(1, n_loads + 1):
        # later loads favour source rows already delivered: re-deliveries
        o_ids = draw(st.lists(st.sampled_from(seen_o * 3 + ORDER_SRIDS), min_size=1, max_size=6, unique=True))
        c_ids = draw(st.lists(st.sampled_from(seen_c * 2 + CUSTOMER_SRIDS), min_size=2 if load == 1 else 0, max_size=3,
                              unique=True))
        rows = [("raw_customers", draw(customer(s, load))) for s in c_ids] + [("raw_orders", draw(order(s, load))) for s in o_ids]
        seen_o += [s for s in o_ids if s not in seen_o]
        seen_c += [s for s in c_ids if s not in seen_c]
        loads.append(rows)
    # before the last load, bronze retention may drop a few earlier deliveries
    earlier = [(rel, row["_source_row_id"], row["_load_id"]) for rows in loads[:-1] for rel, row in rows]
    aged = draw(st.lists(st.sampled_from(earlier), max_size=2, unique=True)) if earlier else []
    return loads, aged


class Session:
    """The project and its spec; a short repr keeps hypothesis' failure report readable."""

    def __init__(self, target, spec):
        self.target, self.spec = target, spec

    def __repr__(self) -> str:
        return f"<multiday project at {self.target.project.path}>"


@pytest.fixture(scope="session")
def multiday_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("property_redelivery")
    specs = spec_dirs(root)
    return Session(DbtTarget(root, specs["v1"]), specs["v1"])


def _fresh_history(target) -> None:
    conn = target.project.connect()
    try:
        for table in ('silver."customers__reject"', 'silver."orders__reject"', "gold.mart_data_quality"):
            conn.execute(f"drop table if exists {table}")
    finally:
        conn.close()


# Three generated feeds (ten until session 32, cut for the suite's time; decision 0303).
@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(feed=feeds())
def test_generated_redeliveries_agree_with_the_oracle(multiday_project, feed):
    target, spec = multiday_project.target, multiday_project.spec
    loads, aged = feed
    _fresh_history(target)
    wh = Warehouse(spec)
    bronze = Bronze()
    for n, rows in enumerate(loads, start=1):
        when = f"load {n}"
        if n == len(loads) and aged:
            bronze.delete(aged)
            note(f"aged out before {when}: {aged}")
        note(f"{when}: {rows}")
        bronze.deliver(rows)
        target.load(bronze)
        run_id = target.build(when)
        build = wh.build(bronze.rows())

        for entity, (bronze_n, entity_n, open_n, deduped) in conservation_counts(target.query, run_id).items():
            assert bronze_n == entity_n + open_n + deduped, f"{when} {entity}: conservation by counts"
        places = placements(target.query, spec, bronze.rows())
        assert {k: v for k, v in places.items() if len(v) != 1} == {}, f"{when}: conservation row by row"

        expected = expected_state(wh, build)
        observed = observed_state(target.query, spec, run_id)
        for part in ("entity", "staged", "reject", "mart"):
            assert observed[part] == expected[part], f"{when}: {part} disagrees with the oracle"

        for name, j in build.entities.items():
            event(f"{name}: routes {sorted({r.route for r in j.rows})}")
            if j.superseded:
                event(f"{name}: a superseded delivery")
        if any("order_of_customer_referential" in r.failed_rules for r in build["orders"].rows):
            event("orders: an orphan held")
        keys = {}
        for r in build["customers"].rows:
            keys.setdefault(r.srid, set()).add(r.values["customer_id"])
        if any(len(k) > 1 for k in keys.values()):
            event("customers: a re-delivery under another key")
    resolved = sorted({r.resolution for r in wh.ledger.rows.values() if not r.open})
    event(f"resolutions {resolved}")
