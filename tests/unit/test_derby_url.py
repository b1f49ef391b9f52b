"""runtime/derby_url.py: the Derby database a metastore URL names, and the copy's rewrite of it
(`plan --data` on Spark), for both ways a Derby URL names its database."""

from __future__ import annotations

import pytest

from assay.errors import WarehouseError
from assay.plandata.sparkcopy import spark_places
from assay.runtime.derby_url import CONNECTION_URL, DerbyDatabase, database, with_database


@pytest.mark.parametrize("url, expected", [
    ("jdbc:derby:;databaseName=/x/metastore_db;create=true", DerbyDatabase("/x/metastore_db", True)),
    ("jdbc:derby:;create=true;databaseName=/x/metastore_db", DerbyDatabase("/x/metastore_db", True)),
    ("jdbc:derby:/x/metastore_db;create=true", DerbyDatabase("/x/metastore_db", False)),
    # the attribute wins over the subname, as in Derby
    ("jdbc:derby:/y/other;databaseName=/x/metastore_db", DerbyDatabase("/x/metastore_db", True)),
    ("jdbc:derby:;databaseName=metastore_db", DerbyDatabase("metastore_db", True)),
    ("jdbc:derby:;create=true", None),
    ("jdbc:mysql://host/metastore", None),
    ("", None),
])
def test_the_database_a_url_names(url, expected):
    assert database(url) == expected


def test_the_copy_rewrites_only_the_database_attribute():
    assert (with_database("jdbc:derby:;databaseName=/x/metastore_db;create=true", "/copy/metastore_db")
            == "jdbc:derby:;databaseName=/copy/metastore_db;create=true")


def _output(url: str, warehouse: str) -> dict:
    return {"method": "session", "server_side_parameters": {CONNECTION_URL: url, "spark.sql.warehouse.dir": warehouse}}


def test_plan_data_refuses_a_database_named_by_the_subname_it_cannot_point_at_a_copy(tmp_path):
    with pytest.raises(WarehouseError, match=r"jdbc:derby:;databaseName=/abs/metastore_db.*the profile is not one"):
        spark_places(_output(f"jdbc:derby:{tmp_path}/metastore_db;create=true", str(tmp_path / "w")), "the profile")


def test_plan_data_finds_the_attribute_form_and_says_when_nothing_was_built(tmp_path):
    with pytest.raises(WarehouseError, match="does not exist: nothing has been built yet"):
        spark_places(_output(f"jdbc:derby:;databaseName={tmp_path}/metastore_db;create=true", str(tmp_path / "w")), "it")
    (tmp_path / "metastore_db").mkdir()
    (tmp_path / "metastore_db" / "service.properties").write_text("x")
    assert spark_places(_output(f"jdbc:derby:;databaseName={tmp_path}/metastore_db", f"file:{tmp_path}/w"), "it") == (
        tmp_path / "w", tmp_path / "metastore_db")
