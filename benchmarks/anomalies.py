"""How often `assay anomalies` is right: hits and false alarms per 100 runs, per scenario.

Generated histories (assay.anomalies.synthetic: 30-120 daily runs each, fixed seeds, with
injected spikes, drops and level shifts, flat or with a weekly pattern) are written into a real
DuckDB `gold.mart_data_quality` table, the detector runs its SQL on it, and its verdicts are
compared with the injected events. Printed per scenario: histories, runs judged, events, events
hit (and the share), false alarms and false alarms per 100 judged runs (all measures of the
entity together: volume, quarantine rate and three rules).

    python benchmarks/anomalies.py [--histories 10] [--seed 1] [--postgres]

`--postgres` runs the same histories on the embedded PostgreSQL too and checks both engines
give the same verdicts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay.anomalies import synthetic  # noqa: E402
from assay.anomalies.detect import detect  # noqa: E402
from assay.anomalies.method import METHOD  # noqa: E402

MART = ("gold", "mart_data_quality")


def _duckdb_verdicts(history: synthetic.History):
    con = duckdb.connect()
    try:
        con.execute("create schema gold")
        synthetic.load_into(con, "gold.mart_data_quality", history)
        return detect(lambda q: con.execute(q).fetchall(), "duckdb", MART)
    finally:
        con.close()


def _postgres_verdicts(server, history: synthetic.History, name: str):
    conn = server.connect()
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(f'drop schema if exists "{name}" cascade')
    cur.execute(f'create schema "{name}"')
    synthetic.load_into(conn, f'"{name}".mart_data_quality', history, placeholder="%s")

    def query(sql: str):
        cur.execute(sql)
        return cur.fetchall()

    try:
        return detect(query, "postgres", (name, "mart_data_quality"))
    finally:
        cur.execute(f'drop schema "{name}" cascade')
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=10, help="histories per scenario (seeds seed..seed+N-1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgres", action="store_true", help="also run on the embedded PostgreSQL and compare")
    args = parser.parse_args()
    servers = None
    if args.postgres:
        from tests.support import pg

        servers = pg.postgres_server("embedded")  # a generator: the server stops when it is closed
    try:
        _measure(args, next(servers) if servers is not None else None)
    finally:
        if servers is not None:
            servers.close()


def _measure(args, server) -> None:
    print(f"method: {METHOD}")
    header = f"{'scenario':46} {'hist':>4} {'runs':>5} {'judged':>6} {'events':>6} {'hits':>5} {'hit %':>6} {'false':>5} {'false/100':>9}"
    print(header)
    print("-" * len(header))
    started = time.perf_counter()
    totals = {"clean": [0, 0], "all": [0, 0]}
    for scenario in synthetic.SCENARIOS:
        runs = judged = events = hits = false = 0
        for k in range(args.histories):
            history = synthetic.scenario_history(scenario, args.seed + k)
            verdicts = _duckdb_verdicts(history)
            if server is not None:
                other = _postgres_verdicts(server, history, f"bench_{k}")
                same = [(v.measure, v.run_id, v.direction) for v in verdicts] == [(v.measure, v.run_id, v.direction) for v in other]
                if not same:
                    print(f"  PostgreSQL disagrees with DuckDB on {scenario.name!r}, seed {args.seed + k}")
            s = synthetic.score(history, verdicts, METHOD.shift_runs)
            runs += history.runs
            judged += s.judged_runs
            events += s.events
            hits += s.hits
            false += s.false_alarms
        share = f"{100 * hits / events:.0f}" if events else "-"
        print(f"{scenario.name:46} {args.histories:>4} {runs:>5} {judged:>6} {events:>6} {hits:>5} {share:>6} {false:>5} "
              f"{100 * false / max(judged, 1):>9.2f}")
        totals["all"][0] += false
        totals["all"][1] += judged
        if not scenario.kinds:
            totals["clean"][0] += false
            totals["clean"][1] += judged
    print("-" * len(header))
    for label, (f, j) in totals.items():
        print(f"false alarms per 100 judged runs, {label} scenarios: {100 * f / max(j, 1):.2f} ({f} in {j} runs)")
    print(f"wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
