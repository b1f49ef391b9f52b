"""Issue 21: names from bronze data (a CSV header, a file name) stay names in the demo's loader."""

from __future__ import annotations

import duckdb

from assay.runtime.bronze import load_csv_dir_duckdb
from assay.runtime.csvnull import write_csv

HOSTILE = [
    'x" varchar); create table main.pwned_header (y int); --',
    "{{ env_var('HOME') }}",
    "a`b", "semi;colon", "per%cent", "what?", "dollar$$", "new\nline", "@var",
]


def test_hostile_headers_and_file_names_are_one_column_and_one_table_each(tmp_path):
    csv_dir = tmp_path / "bronze"
    csv_dir.mkdir()
    columns = ["_load_id", *HOSTILE]
    write_csv(csv_dir / 'orders"; drop table x; --.csv', columns, [["l1", *[f"v{i}" for i in range(len(HOSTILE))]]])
    db = tmp_path / "w.duckdb"
    counts = load_csv_dir_duckdb(db, csv_dir, schema='bronze"x')
    assert counts == {'orders"; drop table x; --': 1}
    con = duckdb.connect(str(db))
    try:
        tables = con.execute("select table_schema, table_name from information_schema.tables order by 1, 2").fetchall()
        assert tables == [('bronze"x', 'orders"; drop table x; --')]
        got = [r[0] for r in con.execute(
            "select column_name from information_schema.columns where table_name = ? order by ordinal_position",
            ['orders"; drop table x; --']).fetchall()]
        assert got == columns
        row = con.execute('select * from "bronze""x"."orders""; drop table x; --"').fetchall()
        assert row == [("l1", *[f"v{i}" for i in range(len(HOSTILE))])]
    finally:
        con.close()
